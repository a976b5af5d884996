//! `harness mutants`: runs every planted bug of the gallery
//! (`kernels::mutant::GALLERY`) through the sweep and the four
//! compute-sanitizer tools, and reports which check caught it; then runs the
//! real kernels through the same checks to show that none is flagged.

use crate::progress::Progress;
use crate::receipts::{receipt_path, receipts_dir, Coverage, MachineInfo, Receipt, Tally};
use crate::sanitize::attribute::attribute;
use crate::sanitize::options::{SanitizerOptions, PRINT_LIMIT};
use crate::sanitize::parse::Tool;
use crate::sanitize::process::run_with_timeout;
use crate::sanitize::run::{compile_error_line, run_job, Job, COMPILE_ERROR_TEXT};
use crate::sanitize::shard::{self, Shard};
use crate::table::Table;
use anyhow::{Context, Result};
use kernels::mutant::{Mutant, GALLERY};
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

/// What `harness mutants` runs (its command's options, as plain values).
#[derive(Debug, Clone)]
pub struct MutantsOptions {
    /// Only these mutant ids (empty: the whole gallery).
    pub ids: Vec<u32>,
    /// Where the checks' logs go.
    pub log_dir: std::path::PathBuf,
    /// Receipt path (default: receipts/mutants.json for the whole gallery, receipts/partial/ otherwise).
    pub receipt: Option<std::path::PathBuf>,
    /// Seconds before one check of one build is killed.
    pub timeout_secs: u64,
    /// Checks run at once.
    pub jobs: usize,
    /// Seed of every build's inputs (default: derived from the verdict hash).
    pub seed: Option<u64>,
    /// List the gallery and exit.
    pub list: bool,
}

/// What one check came to on one build. Only `Caught` is a catch; a check
/// that did not compile, timed out or broke proved nothing either way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", content = "detail", rename_all = "snake_case")]
pub enum CheckOutcome {
    /// It ran to the end and reported the build (mismatches, sanitizer errors).
    Caught(String),
    /// It ran to the end and reported nothing.
    NotCaught(String),
    /// The child could not compile the build's kernels (NVRTC error).
    DidNotCompile(String),
    /// The time limit ran out; the process group was killed.
    TimedOut(String),
    /// It ended without a verdict: crashed, no summary, unreadable output.
    Broken(String),
}

impl CheckOutcome {
    /// The word the table shows.
    pub fn word(&self) -> &'static str {
        match self {
            CheckOutcome::Caught(_) => "CAUGHT",
            CheckOutcome::NotCaught(_) => "not caught",
            CheckOutcome::DidNotCompile(_) => "DID NOT COMPILE",
            CheckOutcome::TimedOut(_) => "TIMED OUT",
            CheckOutcome::Broken(_) => "BROKEN",
        }
    }

    /// What it reported, in a few words.
    pub fn detail(&self) -> &str {
        match self {
            CheckOutcome::Caught(d)
            | CheckOutcome::NotCaught(d)
            | CheckOutcome::DidNotCompile(d)
            | CheckOutcome::TimedOut(d)
            | CheckOutcome::Broken(d) => d,
        }
    }

    /// Whether the check ran to a verdict (caught or not caught).
    pub fn decided(&self) -> bool {
        matches!(self, CheckOutcome::Caught(_) | CheckOutcome::NotCaught(_))
    }
}

/// What one check said about one build (a mutant or the real kernels).
#[derive(Debug, Clone, Serialize)]
pub struct CheckVerdict {
    /// "sweep", "memcheck", "racecheck", "synccheck", "initcheck".
    pub check: String,
    /// Its outcome (`outcome` and `detail` in the receipt).
    #[serde(flatten)]
    pub outcome: CheckOutcome,
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
    /// The checks that caught this build.
    pub fn caught_by(&self) -> Vec<&str> {
        self.checks.iter().filter(|c| matches!(c.outcome, CheckOutcome::Caught(_))).map(|c| c.check.as_str()).collect()
    }

    /// The checks that reached no verdict, as `check: outcome (detail)`.
    pub fn undecided(&self) -> Vec<String> {
        self.checks
            .iter()
            .filter(|c| !c.outcome.decided())
            .map(|c| format!("{}: {} ({})", c.check, c.outcome.word().to_lowercase(), c.outcome.detail()))
            .collect()
    }
}

/// The sweep's outcome from its exit, log and JSON receipt.
fn sweep_outcome(
    timed_out: bool,
    seconds: f64,
    code: Option<i32>,
    log_text: &str,
    receipt: Option<&Receipt>,
) -> CheckOutcome {
    if timed_out {
        return CheckOutcome::TimedOut(format!("killed after {seconds:.0} s"));
    }
    // A build that does not compile fails every case with the NVRTC error:
    // that is not the sweep finding the bug.
    let failures = receipt.map(|r| r.details["failures"].to_string()).unwrap_or_default();
    if let Some(line) = compile_error_line(log_text) {
        return CheckOutcome::DidNotCompile(line);
    }
    if failures.contains(COMPILE_ERROR_TEXT) {
        return CheckOutcome::DidNotCompile("the sweep's cases failed with an NVRTC compile error".into());
    }
    match receipt {
        Some(r) if r.tally.failed > 0 => {
            let first = r.details["failures"][0].as_str().unwrap_or("").to_string();
            CheckOutcome::Caught(format!("{} mismatch(es); first: {first}", r.tally.failed))
        }
        Some(r) if code == Some(0) && r.tally.passed > 0 => {
            CheckOutcome::NotCaught(format!("{} cases passed", r.tally.passed))
        }
        Some(r) => CheckOutcome::Broken(format!("exit {code:?} with {} passed, 0 failed", r.tally.passed)),
        None => {
            let last = log_text.lines().rev().find(|l| l.starts_with("error:")).unwrap_or("no error line").to_string();
            CheckOutcome::Broken(format!("exit {code:?} and no receipt: {last}"))
        }
    }
}

fn sweep_check(exe: &Path, build: &Build, log_dir: &Path, timeout: Duration) -> Result<CheckVerdict> {
    let (m, id, label) = (&build.mutant, build.id, build.label.as_str());
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
        format!("{:#x}", build.seed),
        "--mutant".into(),
        id.to_string(),
        "--json".into(),
        json.to_string_lossy().into_owned(),
    ];
    if !m.variant.is_empty() {
        args.extend(["--variant".into(), m.variant.into()]);
    }
    let _ = std::fs::remove_file(&json);
    let expression = duct::cmd(exe, &args).stderr_to_stdout().stdout_path(&log);
    let finished = run_with_timeout(expression, timeout, &format!("the sweep of {label}"))?;
    let receipt = Receipt::load(&json).ok();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let outcome = sweep_outcome(finished.timed_out, finished.seconds, finished.code, &text, receipt.as_ref());
    Ok(CheckVerdict { check: "sweep".into(), outcome, seconds: finished.seconds })
}

fn sanitizer_check(
    sanitizer: (&Path, &SanitizerOptions),
    exe: &Path,
    build: &Build,
    tool: Tool,
    shard: &Shard,
    log_dir: &Path,
    timeout: Duration,
) -> Result<CheckVerdict> {
    let (sanitizer, options) = sanitizer;
    let (m, id, seed) = (&build.mutant, build.id, build.seed);
    let expected = &shard.expected;
    let child_args = crate::sanitize::child_args(m.primitive, m.sizes, seed, &shard.variants, id);
    let label = shard_label(build, shard);
    let job = Job { tool, primitive: m.primitive.to_string(), label, child_args };
    let outcome = run_job(sanitizer, options, exe, &job, log_dir, timeout)?;
    let report = attribute(&outcome, expected, PRINT_LIMIT);
    let errors = outcome.parsed.error_count();
    let log = outcome.log.display();
    let verdict = if outcome.timed_out {
        CheckOutcome::TimedOut(format!("killed after {:.0} s (log {log})", outcome.seconds))
    } else if let Some(line) = &outcome.compile_error {
        CheckOutcome::DidNotCompile(line.clone())
    } else if let Err(e) = &outcome.xml {
        CheckOutcome::Broken(format!("{e} (log {log})"))
    } else if !outcome.parsed.has_summary() {
        CheckOutcome::Broken(format!("no sanitizer summary, exit {:?} (log {log})", outcome.exit_code))
    } else if errors > 0 {
        // The tool finished and reported errors: a catch even if the child then failed.
        let first = report.cases.iter().find_map(|c| {
            c.findings
                .iter()
                .find(|f| f.source.starts_with("sanitizer"))
                .map(|f| format!("{} [{} n={}]", f.line(), c.variant, c.size))
        });
        CheckOutcome::Caught(format!("{errors} error(s); first: {}", first.unwrap_or_else(|| "(summary only)".into())))
    } else if !report.problems.is_empty() {
        CheckOutcome::Broken(format!("{} (log {log})", report.problems.join("; ")))
    } else {
        CheckOutcome::NotCaught(format!("0 errors in {} cases", expected.len()))
    };
    Ok(CheckVerdict { check: tool.name().into(), outcome: verdict, seconds: outcome.seconds })
}

/// The stem of one sanitizer job's logs: the build's, and the shard's part
/// when its primitive's run is split.
fn shard_label(build: &Build, shard: &Shard) -> String {
    match shard.label.strip_prefix(build.mutant.primitive) {
        Some("") | None => build.label.clone(),
        Some(part) => format!("{}{part}", build.label),
    }
}

/// A task's name in the progress lines: its build, its check and, for one
/// shard of a split sanitizer run, which (`mutant 15 racecheck, topk-2of6`).
fn task_label(build: &Build, check: Option<Tool>, shard: usize) -> String {
    let who = match (build.id, build.mutant.variant) {
        (0, "") => format!("real {}", build.mutant.primitive),
        (0, variant) => format!("real {} {variant}", build.mutant.primitive),
        (id, _) => format!("mutant {id}"),
    };
    let Some(tool) = check else { return format!("{who} sweep") };
    match build.shards.get(shard) {
        Some(part) if build.shards.len() > 1 => format!("{who} {}, {}", tool.name(), part.label),
        _ => format!("{who} {}", tool.name()),
    }
}

/// One tool's verdict on a build from its shards' verdicts. A shard that
/// reached no verdict leaves the whole check without one (as one job killed
/// or broken would), the first such in the order did not compile, timed out,
/// broken; else a catch in any shard is the check's catch; else nothing was
/// caught in any. Its seconds are the shards' sum.
fn merge_shards(parts: Vec<CheckVerdict>) -> Option<CheckVerdict> {
    if parts.len() <= 1 {
        return parts.into_iter().next();
    }
    let seconds = parts.iter().map(|p| p.seconds).sum();
    let check = parts[0].check.clone();
    let count = parts.len();
    let rank = |o: &CheckOutcome| match o {
        CheckOutcome::DidNotCompile(_) => 0,
        CheckOutcome::TimedOut(_) => 1,
        CheckOutcome::Broken(_) => 2,
        CheckOutcome::Caught(_) => 3,
        CheckOutcome::NotCaught(_) => 4,
    };
    let (i, first) = parts.iter().enumerate().min_by_key(|(i, p)| (rank(&p.outcome), *i))?;
    let detail = format!("shard {} of {count}: {}", i + 1, first.outcome.detail());
    let outcome = match &first.outcome {
        CheckOutcome::DidNotCompile(_) => CheckOutcome::DidNotCompile(detail),
        CheckOutcome::TimedOut(_) => CheckOutcome::TimedOut(detail),
        CheckOutcome::Broken(_) => CheckOutcome::Broken(detail),
        CheckOutcome::Caught(_) => CheckOutcome::Caught(detail),
        CheckOutcome::NotCaught(_) => {
            CheckOutcome::NotCaught(format!("nothing caught in {count} shards: {}", joined_details(&parts)))
        }
    };
    Some(CheckVerdict { check, outcome, seconds })
}

fn joined_details(parts: &[CheckVerdict]) -> String {
    parts.iter().map(|p| p.outcome.detail()).collect::<Vec<_>>().join("; ")
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

/// One build to check: a mutant (id > 0) or the real kernels (id 0) on a
/// mutant's primitive, variant and sizes.
struct Build {
    mutant: Mutant,
    id: u32,
    /// The stem of its log files ([`build_label`]).
    label: String,
    /// The seed of its inputs.
    seed: u64,
    /// Its sanitizer cases, split into jobs by variant ([`crate::sanitize::shard`]).
    shards: Vec<Shard>,
}

/// A mutant's sanitizer cases (its primitive, variant filter and sizes) split into jobs.
fn shards_of(m: &Mutant, seed: u64) -> Result<Vec<Shard>> {
    let primitive = crate::registry::Primitive::from_name(m.primitive)
        .ok_or_else(|| anyhow::anyhow!("mutant {} names no primitive of the catalogue: '{}'", m.id, m.primitive))?;
    let variants: Vec<String> = if m.variant.is_empty() { vec![] } else { vec![m.variant.to_string()] };
    shard::shards(primitive, m.sizes, seed, &variants)
}

/// The checks a build gets: the sweep, then each sanitizer tool if one was found.
fn checks_of(sanitizer_found: bool) -> Vec<Option<Tool>> {
    let mut checks = vec![None];
    if sanitizer_found {
        checks.extend(Tool::ALL.into_iter().map(Some));
    }
    checks
}

/// Runs one check (`None`: the sweep) of one build; a sanitizer check, on one shard of its cases.
fn run_check(
    sanitizer: Option<(&Path, &SanitizerOptions)>,
    exe: &Path,
    build: &Build,
    (check, shard): (Option<Tool>, usize),
    log_dir: &Path,
    timeout: Duration,
) -> Result<CheckVerdict> {
    match (check, sanitizer, build.shards.get(shard)) {
        (Some(tool), Some(sanitizer), Some(shard)) => {
            sanitizer_check(sanitizer, exe, build, tool, shard, log_dir, timeout)
        }
        _ => sweep_check(exe, build, log_dir, timeout),
    }
}

/// A unit of work: (build, check, shard). The sweeps come first, in the
/// builds' order (each compiles its build's kernels into the kernel cache, so
/// the sanitizer runs of that build after it find them compiled); then every
/// sanitizer job of every shard, heaviest first ([`shard::start_order`]), so
/// that a long job does not start last.
fn tasks_of(builds: &[Build], sanitizer_found: bool) -> Vec<(usize, Option<Tool>, usize)> {
    let mut tasks: Vec<(usize, Option<Tool>, usize)> = (0..builds.len()).map(|b| (b, None, 0)).collect();
    let mut jobs: Vec<(usize, Option<Tool>, usize)> = Vec::new();
    for check in checks_of(sanitizer_found).into_iter().skip(1) {
        for (b, build) in builds.iter().enumerate() {
            jobs.extend((0..build.shards.len()).map(|s| (b, check, s)));
        }
    }
    let weights: Vec<(u64, Tool)> =
        jobs.iter().filter_map(|&(b, check, s)| Some((builds[b].shards[s].work, check?))).collect();
    tasks.extend(shard::start_order(&weights).into_iter().map(|i| jobs[i]));
    tasks
}

/// Every check of every build, `jobs` at a time from one queue (`tasks`,
/// [`tasks_of`] of `builds`). Returns each build's verdict, in the order of `builds`,
/// its checks in the order of [`checks_of`].
fn run_builds(
    sanitizer: Option<(&Path, &SanitizerOptions)>,
    exe: &Path,
    builds: &[Build],
    tasks: &[(usize, Option<Tool>, usize)],
    args: &MutantsOptions,
    progress: &Progress,
) -> Result<Vec<BuildVerdict>> {
    let timeout = Duration::from_secs(args.timeout_secs);
    let results: std::sync::Mutex<Vec<(usize, Result<CheckVerdict>)>> = std::sync::Mutex::new(Vec::new());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..args.jobs.max(1) {
            scope.spawn(|| loop {
                let t = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&(b, check, s)) = tasks.get(t) else { break };
                let verdict = run_check(sanitizer, exe, &builds[b], (check, s), &args.log_dir, timeout);
                progress.step(&task_label(&builds[b], check, s));
                results.lock().unwrap_or_else(|p| p.into_inner()).push((t, verdict));
            });
        }
    });
    let results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    // Each verdict to its (build, check), its shards back in their order, whatever order they ran in.
    let checks = checks_of(sanitizer.is_some());
    let mut parts: Vec<Vec<Vec<(usize, CheckVerdict)>>> =
        builds.iter().map(|_| checks.iter().map(|_| Vec::new()).collect()).collect();
    for (t, verdict) in results {
        let (b, check, s) = tasks[t];
        let c = checks.iter().position(|x| *x == check).unwrap_or(0);
        parts[b][c].push((s, verdict?));
    }
    for per_check in parts.iter_mut().flatten() {
        per_check.sort_by_key(|(s, _)| *s);
    }
    Ok(builds
        .iter()
        .zip(parts)
        .map(|(b, parts)| BuildVerdict {
            id: b.id,
            name: if b.id == 0 { "real kernels".into() } else { b.mutant.name.into() },
            primitive: b.mutant.primitive.into(),
            variant: b.mutant.variant.into(),
            sizes: b.mutant.sizes.to_vec(),
            checks: parts.into_iter().filter_map(|p| merge_shards(p.into_iter().map(|(_, v)| v).collect())).collect(),
        })
        .collect())
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

/// Why a mutants run covers less than the gated receipt needs.
fn coverage(ids: &[u32], sanitizer_found: bool, seed: u64) -> Coverage {
    let mut reasons = Vec::new();
    if seed != crate::verdict_hash::mutants_seed() {
        reasons.push(format!("--seed {seed:#x} (a gated run draws its seed from the verdict hash)"));
    }
    if !GALLERY.iter().all(|m| ids.is_empty() || ids.contains(&m.id)) {
        let list = ids.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
        reasons.push(format!("--id {list}"));
    }
    if !sanitizer_found {
        reasons.push("no compute-sanitizer: sweep only".to_string());
    }
    Coverage::from_reasons(reasons)
}

/// The last column of a mutant's row.
fn mutant_summary(v: &BuildVerdict) -> String {
    let caught = v.caught_by();
    if caught.is_empty() {
        "SURVIVED".into()
    } else {
        format!("caught by {}", caught.join(", "))
    }
}

/// The last column of a control's row: correct only when every check ran to "not caught".
fn control_summary(v: &BuildVerdict) -> String {
    let flagged = v.caught_by();
    let undecided: Vec<String> = v
        .checks
        .iter()
        .filter(|c| !c.outcome.decided())
        .map(|c| format!("{} {}", c.check, c.outcome.word().to_lowercase()))
        .collect();
    match (flagged.is_empty(), undecided.is_empty()) {
        (true, true) => "not flagged (correct)".into(),
        (false, _) => format!("FLAGGED by {}", flagged.join(", ")),
        (true, false) => format!("CONTROL FAILED: {}", undecided.join(", ")),
    }
}

/// The table of mutants and controls, with each check's outcome word.
fn verdict_table(verdicts: &[BuildVerdict], controls: &[BuildVerdict]) -> Table {
    let checks = ["sweep", "memcheck", "racecheck", "synccheck", "initcheck"];
    let mut table = Table::new(["id", "mutant", "sweep", "memcheck", "racecheck", "synccheck", "initcheck", "verdict"]);
    let mark = |v: &BuildVerdict, check: &str| match v.checks.iter().find(|c| c.check == check) {
        None => "not run".to_string(),
        Some(c) => c.outcome.word().to_string(),
    };
    for v in verdicts {
        let mut row = vec![v.id.to_string(), v.name.clone()];
        row.extend(checks.iter().map(|t| mark(v, t)));
        row.push(mutant_summary(v));
        table.row(row);
    }
    for v in controls {
        let mut row = vec!["0".to_string(), format!("real kernels: {} {}", v.primitive, v.variant).trim().to_string()];
        row.extend(checks.iter().map(|t| mark(v, t)));
        row.push(control_summary(v));
        table.row(row);
    }
    table
}

/// The tally and the lines that say why the run fails: a mutant survives,
/// a check of a mutant did not compile, timed out or broke (never a catch),
/// a control was flagged or did not reach "not caught" on every check.
fn judge(verdicts: &[BuildVerdict], controls: &[BuildVerdict]) -> (Tally, Vec<String>) {
    let mut tally = Tally::default();
    let mut failures = Vec::new();
    for v in verdicts {
        let undecided = v.undecided();
        for line in &undecided {
            failures.push(format!("mutant {} ({}) {line}: not counted as a catch", v.id, v.name));
        }
        if v.caught_by().is_empty() {
            failures.push(format!("mutant {} ({}) survived: no check caught it", v.id, v.name));
        }
        if v.caught_by().is_empty() || !undecided.is_empty() {
            tally.failed += 1;
        } else {
            tally.passed += 1;
        }
    }
    for v in controls {
        let summary = control_summary(v);
        if summary.starts_with("not flagged") {
            tally.passed += 1;
        } else {
            tally.failed += 1;
            let variant = if v.variant.is_empty() { "all variants" } else { v.variant.as_str() };
            failures.push(format!("control (real kernels) {} {variant} n={:?}: {summary}", v.primitive, v.sizes));
            for line in v.undecided() {
                failures.push(format!("  control {} {line}", v.primitive));
            }
        }
    }
    (tally, failures)
}

/// `harness mutants`.
pub fn run(args: &MutantsOptions) -> Result<bool> {
    if args.list {
        println!("{}", gallery_table().render());
        return Ok(true);
    }
    if let Some(unknown) = args.ids.iter().find(|id| !GALLERY.iter().any(|m| m.id == **id)) {
        anyhow::bail!(
            "no mutant with id {unknown}: `harness mutants --list` shows the gallery (ids 1-{})",
            GALLERY.len()
        );
    }
    let selected: Vec<&Mutant> = GALLERY.iter().filter(|m| args.ids.is_empty() || args.ids.contains(&m.id)).collect();
    let gpu = kernels::Gpu::open(kernels::GpuOptions::default())
        .map_err(|e| anyhow::anyhow!("harness mutants needs a GPU: {e}"))?;
    let machine = MachineInfo::collect(&gpu);
    drop(gpu);
    let sanitizer = match crate::sanitize::locate::locate() {
        Ok(path) => {
            let options = crate::sanitize::detect_options(&path)?;
            Some((path, options))
        }
        Err(e) => {
            println!("mutants: {e:#}; only the sweep will run");
            None
        }
    };
    let seed = args.seed.unwrap_or_else(crate::verdict_hash::mutants_seed);
    let coverage = coverage(&args.ids, sanitizer.is_some(), seed);
    // Decided before any GPU time is spent: a subset may not overwrite the gated receipt.
    let receipt_file = receipt_path(args.receipt.as_deref(), &receipts_dir(), "mutants.json", &coverage)?;
    let exe = std::env::current_exe().context("locating the harness executable")?;
    std::fs::create_dir_all(&args.log_dir).with_context(|| format!("creating {}", args.log_dir.display()))?;
    // The control builds: each primitive the selection touches, real kernels, same filters.
    let mut controls: Vec<Mutant> = Vec::new();
    for m in &selected {
        if !controls.iter().any(|c| c.primitive == m.primitive && c.variant == m.variant && c.sizes == m.sizes) {
            controls.push(**m);
        }
    }
    let builds: Vec<Build> = selected
        .iter()
        .map(|m| (**m, m.id))
        .chain(controls.iter().map(|c| (*c, 0)))
        .enumerate()
        .map(|(i, (mutant, id))| {
            let shards = shards_of(&mutant, seed)?;
            Ok(Build { label: build_label(&mutant, id, i), mutant, id, seed, shards })
        })
        .collect::<Result<_>>()?;
    // A split sanitizer run is one task a shard: the progress counts tasks.
    let tasks = tasks_of(&builds, sanitizer.is_some());
    println!(
        "mutants: seed {seed:#x}, {} builds x {} checks, {} runs (a slow primitive's sanitizer checks split by variant), {} at once",
        builds.len(),
        checks_of(sanitizer.is_some()).len(),
        tasks.len(),
        args.jobs.max(1)
    );
    let progress = Progress::new("mutants", tasks.len() as u64);
    let tools = sanitizer.as_ref().map(|(p, o)| (p.as_path(), o));
    let all = run_builds(tools, &exe, &builds, &tasks, args, &progress)?;
    progress.finish();
    let control_verdicts = all[selected.len()..].to_vec();
    let mut verdicts = all;
    verdicts.truncate(selected.len());

    let table = verdict_table(&verdicts, &control_verdicts);
    println!("\n{}", table.render());
    for v in verdicts.iter().chain(&control_verdicts) {
        for c in &v.checks {
            if !matches!(c.outcome, CheckOutcome::NotCaught(_)) {
                println!("  {} {} / {}: {}: {}", v.id, v.name, c.check, c.outcome.word(), c.outcome.detail());
            }
        }
    }
    let (tally, failures) = judge(&verdicts, &control_verdicts);
    for line in &failures {
        println!("mutants: FAIL {line}");
    }
    println!(
        "mutants: {} of {} caught; {} of {} control runs clean on every check",
        verdicts.iter().filter(|v| !v.caught_by().is_empty()).count(),
        verdicts.len(),
        control_verdicts.iter().filter(|v| control_summary(v).starts_with("not flagged")).count(),
        control_verdicts.len()
    );
    let details = serde_json::json!({
        "seed": format!("{seed:#x}"),
        "sanitizer": sanitizer.as_ref().map(|(p, _)| p.display().to_string()),
        "options": sanitizer.as_ref().map(|(_, o)| o.summary()),
        "table_markdown": table.render_markdown(),
        "failures": failures,
        "mutants": verdicts,
        "controls": control_verdicts,
    });
    Receipt::new("mutants", machine, tally, details).with_coverage(&coverage).save(&receipt_file)?;
    println!("mutants: receipt written to {}", receipt_file.display());
    Ok(failures.is_empty() && tally.failed == 0)
}

#[cfg(test)]
#[path = "mutants_tests.rs"]
mod tests;
