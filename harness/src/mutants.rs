//! `harness mutants`: runs every planted bug of the gallery
//! (`kernels::mutant::GALLERY`) through the sweep and the four
//! compute-sanitizer tools, and reports which check caught it; then runs the
//! real kernels through the same checks to show that none is flagged.

use crate::cli::MutantsArgs;
use crate::progress::Progress;
use crate::receipts::{MachineInfo, Receipt, Tally};
use crate::report::table::Table;
use crate::sanitize::parse::Tool;
use crate::sanitize::run::{run_job, Job};
use anyhow::{Context, Result};
use kernels::mutant::{Mutant, GALLERY};
use serde::Serialize;
use std::path::Path;
use std::time::{Duration, Instant};

/// The fixed seed of every mutant run (reproducible tables).
const MUTANT_SEED: u64 = 0x6d75_7461_6e74;

/// What one check said about one build (a mutant or the real kernels).
#[derive(Debug, Clone, Serialize)]
pub struct CheckVerdict {
    /// "sweep", "memcheck", "racecheck", "synccheck", "initcheck".
    pub check: String,
    /// Whether it flagged the build.
    pub flagged: bool,
    /// What it reported, in a few words.
    pub detail: String,
    /// Seconds it took.
    pub seconds: f64,
}

/// All checks of one build.
#[derive(Debug, Clone, Serialize)]
pub struct BuildVerdict {
    /// Mutant id (0 = the real kernels).
    pub id: u32,
    /// Mutant name, or "real kernels".
    pub name: String,
    /// Primitive exercised.
    pub primitive: String,
    /// Variant filter.
    pub variant: String,
    /// Sizes run.
    pub sizes: Vec<usize>,
    /// Each check's verdict.
    pub checks: Vec<CheckVerdict>,
}

impl BuildVerdict {
    /// The checks that flagged this build.
    pub fn caught_by(&self) -> Vec<&str> {
        self.checks.iter().filter(|c| c.flagged).map(|c| c.check.as_str()).collect()
    }
}

fn sweep_check(
    exe: &Path,
    m: &Mutant,
    id: u32,
    label: &str,
    log_dir: &Path,
    timeout: Duration,
) -> Result<CheckVerdict> {
    let json = log_dir.join(format!("{label}-sweep.json"));
    let log = log_dir.join(format!("{label}-sweep.log"));
    let sizes = m.sizes.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    let mut args = vec![
        "sweep".to_string(),
        "--gpu-only".into(),
        "--primitive".into(),
        m.primitive.into(),
        "--sizes".into(),
        sizes,
        "--seed".into(),
        format!("{MUTANT_SEED:#x}"),
        "--mutant".into(),
        id.to_string(),
        "--json".into(),
        json.to_string_lossy().into_owned(),
    ];
    if !m.variant.is_empty() {
        args.extend(["--variant".into(), m.variant.into()]);
    }
    let _ = std::fs::remove_file(&json);
    let started = Instant::now();
    let handle = duct::cmd(exe, &args).stderr_to_stdout().stdout_path(&log).unchecked().start()?;
    let mut timed_out = false;
    let status = loop {
        if let Some(out) = handle.try_wait()? {
            break out.status.code();
        }
        if started.elapsed() > timeout {
            timed_out = true;
            handle.kill()?;
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let seconds = started.elapsed().as_secs_f64();
    let receipt = Receipt::load(&json).ok();
    let (flagged, detail) = match (&receipt, timed_out, status) {
        (_, true, _) => (true, format!("hung: killed after {seconds:.0} s")),
        (Some(r), _, _) if r.tally.failed > 0 => {
            let first = r.details["failures"][0].as_str().unwrap_or("").to_string();
            (true, format!("{} mismatch(es); first: {first}", r.tally.failed))
        }
        (Some(r), _, Some(0)) => (false, format!("{} cases passed", r.tally.passed)),
        (_, _, code) => {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let last = text.lines().rev().find(|l| l.starts_with("error:")).unwrap_or("no report").to_string();
            (true, format!("run failed (exit {code:?}): {last}"))
        }
    };
    Ok(CheckVerdict { check: "sweep".into(), flagged, detail, seconds })
}

#[allow(clippy::too_many_arguments)]
fn sanitizer_check(
    sanitizer: &Path,
    exe: &Path,
    m: &Mutant,
    id: u32,
    label: &str,
    tool: Tool,
    log_dir: &Path,
    timeout: Duration,
) -> Result<CheckVerdict> {
    let sizes = m.sizes.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    let mut child_args = vec![
        "sanitize-child".to_string(),
        "--primitive".into(),
        m.primitive.into(),
        "--sizes".into(),
        sizes,
        "--mutant".into(),
        id.to_string(),
        "--seed".into(),
        format!("{MUTANT_SEED:#x}"),
    ];
    if !m.variant.is_empty() {
        child_args.extend(["--variant".into(), m.variant.into()]);
    }
    let job = Job { tool, primitive: label.to_string(), child_args };
    let outcome = run_job(sanitizer, exe, &job, log_dir, timeout)?;
    let errors = outcome.parsed.error_count();
    let (flagged, detail) = if errors > 0 {
        let first = outcome.parsed.findings.iter().find(|f| f.severity == crate::sanitize::parse::Severity::Error);
        (
            true,
            format!(
                "{errors} error(s); first: {} [{}]",
                first.map(|f| f.headline.as_str()).unwrap_or("(summary only)"),
                first.and_then(|f| f.case.as_deref()).unwrap_or("-")
            ),
        )
    } else if outcome.timed_out {
        (false, "timed out with no sanitizer finding".into())
    } else if !outcome.parsed.has_summary() {
        (false, format!("no sanitizer summary (exit {:?})", outcome.exit_code))
    } else {
        (false, "0 errors".into())
    };
    Ok(CheckVerdict { check: tool.name().into(), flagged, detail, seconds: outcome.seconds })
}

/// The file-name stem of one build's logs: unique per build, since the
/// real-kernel controls all compile with id 0 and run at the same time.
fn build_label(m: &Mutant, id: u32, index: usize) -> String {
    if id == 0 {
        let variant = if m.variant.is_empty() { "all" } else { m.variant };
        format!("control-{index}-{}-{variant}", m.primitive)
    } else {
        format!("mutant-{id}-{}", m.primitive)
    }
}

#[allow(clippy::too_many_arguments)]
fn run_build(
    sanitizer: Option<&Path>,
    exe: &Path,
    m: &Mutant,
    id: u32,
    index: usize,
    log_dir: &Path,
    timeout: Duration,
    progress: &Progress,
) -> Result<BuildVerdict> {
    let stem = build_label(m, id, index);
    let label = if id == 0 { format!("real {}", m.primitive) } else { format!("mutant {id}") };
    let mut checks = vec![sweep_check(exe, m, id, &stem, log_dir, timeout)?];
    progress.step(&format!("{label} sweep"));
    if let Some(sanitizer) = sanitizer {
        let verdicts: Vec<Result<CheckVerdict>> = std::thread::scope(|scope| {
            let handles: Vec<_> = Tool::ALL
                .into_iter()
                .map(|tool| {
                    let stem = stem.as_str();
                    scope.spawn(move || sanitizer_check(sanitizer, exe, m, id, stem, tool, log_dir, timeout))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(anyhow::anyhow!("check thread panicked"))))
                .collect()
        });
        for verdict in verdicts {
            checks.push(verdict?);
            progress.step(&format!("{label} sanitizer"));
        }
    }
    Ok(BuildVerdict {
        id,
        name: if id == 0 { "real kernels".into() } else { m.name.into() },
        primitive: m.primitive.into(),
        variant: m.variant.into(),
        sizes: m.sizes.to_vec(),
        checks,
    })
}

/// The gallery as a table (no GPU needed).
pub fn gallery_table() -> Table {
    let mut table = Table::new(["id", "name", "planted in", "what it does", "run on"]);
    for m in &GALLERY {
        table.row([
            m.id.to_string(),
            m.name.to_string(),
            m.planted_in.to_string(),
            m.description.to_string(),
            format!("{} {} n={:?}", m.primitive, m.variant, m.sizes),
        ]);
    }
    table
}

/// `harness mutants`.
pub fn run(args: &MutantsArgs) -> Result<bool> {
    if args.list {
        println!("{}", gallery_table().render());
        return Ok(true);
    }
    let selected: Vec<&Mutant> = GALLERY.iter().filter(|m| args.ids.is_empty() || args.ids.contains(&m.id)).collect();
    if selected.is_empty() {
        anyhow::bail!("no mutant with id {:?}: `harness mutants --list` shows the gallery", args.ids);
    }
    let gpu = kernels::Gpu::open(kernels::GpuOptions::default())
        .map_err(|e| anyhow::anyhow!("harness mutants needs a GPU: {e}"))?;
    let machine = MachineInfo::collect(&gpu);
    drop(gpu);
    let sanitizer = match crate::sanitize::locate::locate() {
        Ok(path) => Some(path),
        Err(e) => {
            println!("mutants: {e:#}; only the sweep will run");
            None
        }
    };
    let exe = std::env::current_exe().context("locating the harness executable")?;
    std::fs::create_dir_all(&args.log_dir)?;
    let timeout = Duration::from_secs(args.timeout_secs);
    let checks_per_build = 1 + if sanitizer.is_some() { 4 } else { 0 };
    // The control builds: each primitive the selection touches, real kernels, same filters.
    let mut controls: Vec<Mutant> = Vec::new();
    for m in &selected {
        if !controls.iter().any(|c| c.primitive == m.primitive && c.variant == m.variant && c.sizes == m.sizes) {
            controls.push(**m);
        }
    }
    let progress = Progress::new("mutants", ((selected.len() + controls.len()) * checks_per_build) as u64);
    // Builds run `jobs` at a time (each runs its sweep, then its four sanitizer tools at once).
    let mut work: Vec<(Mutant, u32)> = selected.iter().map(|m| (**m, m.id)).collect();
    work.extend(controls.iter().map(|c| (*c, 0)));
    let results: std::sync::Mutex<Vec<(usize, Result<BuildVerdict>)>> = std::sync::Mutex::new(Vec::new());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..args.jobs.max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((m, id)) = work.get(i) else { break };
                let verdict = run_build(sanitizer.as_deref(), &exe, m, *id, i, &args.log_dir, timeout, &progress);
                results.lock().unwrap_or_else(|p| p.into_inner()).push((i, verdict));
            });
        }
    });
    progress.finish();
    let mut results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    results.sort_by_key(|(i, _)| *i);
    let mut verdicts = Vec::new();
    let mut control_verdicts = Vec::new();
    for (i, verdict) in results {
        let verdict = verdict?;
        if i < selected.len() {
            verdicts.push(verdict);
        } else {
            control_verdicts.push(verdict);
        }
    }

    let tools = ["sweep", "memcheck", "racecheck", "synccheck", "initcheck"];
    let mut table =
        Table::new(["id", "mutant", "sweep", "memcheck", "racecheck", "synccheck", "initcheck", "caught by"]);
    let mark = |v: &BuildVerdict, check: &str| match v.checks.iter().find(|c| c.check == check) {
        None => "not run".to_string(),
        Some(c) if c.flagged => "CAUGHT".to_string(),
        Some(_) => "-".to_string(),
    };
    let mut tally = Tally::default();
    for v in &verdicts {
        let caught = v.caught_by();
        let mut row = vec![v.id.to_string(), v.name.clone()];
        row.extend(tools.iter().map(|t| mark(v, t)));
        row.push(if caught.is_empty() { "SURVIVED".into() } else { caught.join(", ") });
        table.row(row);
        if caught.is_empty() {
            tally.failed += 1;
        } else {
            tally.passed += 1;
        }
    }
    for v in &control_verdicts {
        let flagged = v.caught_by();
        let mut row = vec!["0".to_string(), format!("real kernels: {} {}", v.primitive, v.variant).trim().to_string()];
        row.extend(tools.iter().map(|t| mark(v, t)));
        row.push(if flagged.is_empty() {
            "not flagged (correct)".into()
        } else {
            format!("FLAGGED by {}", flagged.join(", "))
        });
        table.row(row);
        if flagged.is_empty() {
            tally.passed += 1;
        } else {
            tally.failed += 1;
        }
    }
    println!("\n{}", table.render());
    for v in verdicts.iter().chain(&control_verdicts) {
        for c in v.checks.iter().filter(|c| c.flagged) {
            println!("  {} {} / {}: {}", v.id, v.name, c.check, c.detail);
        }
    }
    println!(
        "mutants: {} of {} caught; real kernels flagged in {} of {} control runs",
        verdicts.iter().filter(|v| !v.caught_by().is_empty()).count(),
        verdicts.len(),
        control_verdicts.iter().filter(|v| !v.caught_by().is_empty()).count(),
        control_verdicts.len()
    );
    let details = serde_json::json!({
        "seed": format!("{MUTANT_SEED:#x}"),
        "sanitizer": sanitizer.map(|p| p.display().to_string()),
        "table_markdown": table.render_markdown(),
        "mutants": verdicts,
        "controls": control_verdicts,
    });
    Receipt::new("mutants", machine, tally, details).save(&args.receipt)?;
    println!("mutants: receipt written to {}", args.receipt.display());
    Ok(tally.failed == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_build_gets_its_own_log_names() {
        let mut labels: Vec<String> = GALLERY.iter().enumerate().map(|(i, m)| build_label(m, m.id, i)).collect();
        labels.extend(GALLERY.iter().enumerate().map(|(i, m)| build_label(m, 0, GALLERY.len() + i)));
        let unique: std::collections::BTreeSet<&String> = labels.iter().collect();
        assert_eq!(unique.len(), labels.len(), "{labels:?}");
    }
}
