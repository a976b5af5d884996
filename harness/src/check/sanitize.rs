//! `check --sanitize`: the check re-run as a child under each of
//! compute-sanitizer's four tools, side by side, at sizes chosen from the manifest's launch
//! grids (two data families each; scratch not zeroed left uninitialised), through the same job runner and finding attribution as
//! `harness sanitize`; logs and XML go to `<out>/sanitize/`.

use super::manifest::Manifest;
use super::{catalogue, extra_sizes};
use crate::sanitize::attribute::{attribute, CaseEntry, CaseFinding, CaseVerdict};
use crate::sanitize::options::PRINT_LIMIT;
use crate::sanitize::parse::Tool;
use crate::sanitize::run::{run_job, Job};
use crate::sanitize::{detect_options, locate};
use crate::sweep::raw;
use crate::sweep::SweepPlan;
use anyhow::{Context, Result};
use std::path::Path;
use std::time::Duration;

/// Each tool's wall-clock limit.
pub const TIMEOUT: Duration = Duration::from_secs(900);

/// The data families each sanitizer size runs (where the contract has as many there).
pub const SANITIZER_FAMILIES: usize = 2;

/// The sanitizer verdicts.
#[derive(Debug, Clone)]
pub struct Sanitized {
    /// Every tool ran every case and found nothing, and no case gave a wrong answer.
    pub clean: bool,
    /// One line per tool (its own findings and the wrong answers apart).
    pub lines: Vec<String>,
    /// For the receipt.
    pub json: serde_json::Value,
}

/// The cases the sanitizer child runs and the parent expects, in order: the sanitizer plan's
/// cases at `sizes` (one family each, with its trimming of slow shapes), then at each of their
/// sizes the cases of the next family of the full catalogue, so that each size runs
/// [`SANITIZER_FAMILIES`] data families where the contract has them; a family's parameter
/// (top-k's k) at its two ends only ([`parameter_ends`]).
pub fn sanitizer_specs(manifest: &Manifest, sizes: &[usize], seed: u64) -> Vec<raw::RawSpec> {
    let primitive = manifest.primitive;
    let mut specs = catalogue::cases(&SweepPlan::sanitizer(primitive, sizes, seed, &[]), manifest, false);
    let full = catalogue::cases(&SweepPlan::of_primitive(primitive, sizes, seed), manifest, false);
    let extra = catalogue::next_families(&specs, full, SANITIZER_FAMILIES - 1);
    specs.extend(extra);
    parameter_ends(specs)
}

/// `specs` with, at each size, of the families that differ only in a
/// parameter (`topk_ties.k1`, `topk_ties.k33`, ..., `topk_ties.k4097`: one
/// family, `topk_ties`, with k after its dot) only the first and the last
/// met (the smallest and largest parameter, in the catalogue's order). The
/// tools look for races and bad accesses, which the launch shape and the
/// extremes of a parameter's paths expose; the plain cases check every
/// parameter's answers. (A top-k control ran 43 cases under each tool, most
/// of them one row shape with five values of k, and took 157 s, four
/// checks at once on the H100.)
fn parameter_ends(specs: Vec<raw::RawSpec>) -> Vec<raw::RawSpec> {
    let base = |family: &str| family.split_once('.').map(|(b, _)| b.to_string());
    let mut met: std::collections::BTreeMap<(String, String), Vec<String>> = Default::default();
    for s in &specs {
        if let Some(b) = base(&s.id.family) {
            let at = met.entry((s.id.size.clone(), b)).or_default();
            if !at.contains(&s.id.family) {
                at.push(s.id.family.clone());
            }
        }
    }
    specs
        .into_iter()
        .filter(|s| {
            let Some(b) = base(&s.id.family) else { return true };
            let at = &met[&(s.id.size.clone(), b)];
            at.first() == Some(&s.id.family) || at.last() == Some(&s.id.family)
        })
        .collect()
}

/// The sizes of `manifest`'s sanitizer runs, chosen from its launch grids, each printed with
/// why it was chosen.
fn chosen_sizes(manifest: &Manifest) -> Vec<usize> {
    let chosen = extra_sizes::manifest_sanitizer_sizes(manifest);
    for s in &chosen {
        super::say(&format!("check --sanitize: n = {}: {}", s.n, s.why));
    }
    chosen.iter().map(|s| s.n).collect()
}

/// What one tool's run found: the tool's own findings (and job problems) apart from the
/// wrong answers the child reported inside the run (`@@primlab fail`).
struct ToolTally<'a> {
    /// Cases with a finding of the tool (or that did not run).
    tool_dirty: Vec<&'a CaseEntry>,
    /// Cases whose answer was wrong under the tool.
    wrong: Vec<&'a CaseEntry>,
}

impl<'a> ToolTally<'a> {
    /// Splits `cases` by the source of their findings ("model": a wrong answer).
    fn of(cases: &'a [CaseEntry]) -> ToolTally<'a> {
        let tool_dirty = cases
            .iter()
            .filter(|c| c.verdict == CaseVerdict::NotRun || c.findings.iter().any(|f| f.source != MODEL))
            .collect();
        let wrong = cases.iter().filter(|c| c.findings.iter().any(|f| f.source == MODEL)).collect();
        ToolTally { tool_dirty, wrong }
    }
}

/// The source of a finding that is a wrong answer, not the tool's.
const MODEL: &str = "model";

/// The line of one case's first finding from `pick`.
fn first_line(case: &CaseEntry, pick: impl Fn(&CaseFinding) -> bool) -> String {
    let finding =
        case.findings.iter().find(|f| pick(f)).map(|f| f.line()).unwrap_or_else(|| format!("{:?}", case.verdict));
    format!("{} {} n={} family={}: {finding}", case.primitive, case.variant, case.size, case.family)
}

/// Runs the four tools on the check of `manifest` with `seed`, logs under
/// `out/sanitize`; the child each tool runs is `harness check
/// --sanitize-child` of the `worker` program.
pub fn run(manifest: &Manifest, seed: u64, out: &Path, worker: &super::WorkerProgram) -> Result<Sanitized> {
    let sanitizer = locate::locate()?;
    let options = detect_options(&sanitizer)?;
    let exe = match worker {
        super::WorkerProgram::At(program) => program.clone(),
        super::WorkerProgram::ThisExecutable => std::env::current_exe().context("locating the harness executable")?,
        super::WorkerProgram::Missing(why) => anyhow::bail!("{why}"),
    };
    let manifest_path = std::fs::canonicalize(&manifest.path).unwrap_or_else(|_| manifest.path.clone());
    let sizes = chosen_sizes(manifest);
    let expected: Vec<_> = sanitizer_specs(manifest, &sizes, seed).into_iter().map(|s| s.id).collect();
    let sizes_arg = sizes.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    let job = |tool: Tool| Job {
        tool,
        primitive: manifest.primitive_name(),
        label: format!("check-{}", manifest.name),
        child_args: vec![
            "check".into(),
            "--manifest".into(),
            manifest_path.display().to_string(),
            "--seed".into(),
            format!("{seed:#x}"),
            "--sizes".into(),
            sizes_arg.clone(),
            "--sanitize-child".into(),
        ],
    };
    let log_dir = out.join("sanitize");
    // The four tools side by side, each a process of its own with its own logs (as `harness
    // sanitize` runs its jobs): the check waits for the slowest tool, not for their sum.
    let outcomes: Vec<(Tool, Result<crate::sanitize::run::JobOutcome>)> = std::thread::scope(|scope| {
        let running: Vec<_> = Tool::ALL
            .into_iter()
            .map(|tool| {
                let (job, sanitizer, options, exe, log_dir) = (job(tool), &sanitizer, &options, &exe, &log_dir);
                (tool, scope.spawn(move || run_job(sanitizer, options, exe, &job, log_dir, TIMEOUT)))
            })
            .collect();
        running
            .into_iter()
            .map(|(tool, handle)| {
                let outcome =
                    handle.join().unwrap_or_else(|_| Err(anyhow::anyhow!("the {} run panicked", tool.name())));
                (tool, outcome)
            })
            .collect()
    });
    let mut clean = true;
    let mut lines = Vec::new();
    let mut tools = Vec::new();
    for (tool, outcome) in outcomes {
        let outcome = outcome?;
        let mut report = attribute(&outcome, &expected, PRINT_LIMIT);
        name_user_source(&mut report.cases, &manifest.module.path);
        let tally = ToolTally::of(&report.cases);
        let tool_clean = report.problems.is_empty() && tally.tool_dirty.is_empty() && !report.cases.is_empty();
        clean &= tool_clean && tally.wrong.is_empty();
        let line = tool_line(tool, &report.cases, &report.problems, &tally, &outcome.log);
        super::say(&format!("check --sanitize: {line}"));
        lines.push(line);
        tools.push(serde_json::json!({
            "tool": tool.name(),
            "clean": tool_clean,
            "tool_findings": tally.tool_dirty.len(),
            "wrong_answers": tally.wrong.iter().map(|c| first_line(c, |f| f.source == MODEL)).collect::<Vec<_>>(),
            "problems": report.problems,
            "cases": report.cases,
            "log": outcome.log.display().to_string(),
        }));
    }
    let json = serde_json::json!({
        "sizes": sizes,
        "families": SANITIZER_FAMILIES,
        "seed": format!("{seed:#x}"),
        "clean": clean,
        "tools": tools,
    });
    Ok(Sanitized { clean, lines, json })
}

/// NVRTC names the user's own source `<inline>` (our include resolver hands
/// it over as such): the findings name the module's file instead.
fn name_user_source(cases: &mut [CaseEntry], module: &Path) {
    let Some(file) = module.file_name().map(|f| f.to_string_lossy().into_owned()) else { return };
    for finding in cases.iter_mut().flat_map(|c| c.findings.iter_mut().chain(c.warnings.iter_mut())) {
        if let Some(location) = &mut finding.location {
            *location = location.replace("<inline>", &file);
        }
        for access in &mut finding.accesses {
            *access = access.replace("<inline>", &file);
        }
    }
}

/// One tool's line: `clean on N cases`, or its own findings (`FAIL (k of N cases; first: ..)`),
/// and, apart, the wrong answers found inside its run.
fn tool_line(tool: Tool, cases: &[CaseEntry], problems: &[String], tally: &ToolTally, log: &Path) -> String {
    let verdict = if problems.is_empty() && tally.tool_dirty.is_empty() && !cases.is_empty() {
        format!("{}: clean on {} cases", tool.name(), cases.len())
    } else {
        let first = tally
            .tool_dirty
            .first()
            .map(|c| first_line(c, |f| f.source != MODEL))
            .or_else(|| problems.first().cloned())
            .unwrap_or_else(|| "no case ran".into());
        format!(
            "{}: FAIL ({} of {} cases; first: {first}); log {}",
            tool.name(),
            tally.tool_dirty.len(),
            cases.len(),
            log.display()
        )
    };
    match tally.wrong.first() {
        None => verdict,
        Some(c) => format!(
            "{verdict}; wrong answers (not the tool's finding) in {} case(s), first: {}",
            tally.wrong.len(),
            first_line(c, |f| f.source == MODEL)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sanitize::attribute::CaseFinding;

    fn finding(source: &str, text: &str) -> CaseFinding {
        CaseFinding {
            source: source.into(),
            kind: if source == MODEL { "model_mismatch".into() } else { "Precise".into() },
            level: "error".into(),
            text: text.into(),
            function: None,
            location: None,
            accesses: Vec::new(),
        }
    }

    fn case(size: &str, verdict: CaseVerdict, findings: Vec<CaseFinding>) -> CaseEntry {
        CaseEntry {
            primitive: "scan".into(),
            variant: "user.exclusive.i32".into(),
            size: size.into(),
            n: size.parse().unwrap_or(0),
            family: "small_ints".into(),
            seed: "0x1".into(),
            tool: "memcheck".into(),
            verdict,
            findings,
            warnings: Vec::new(),
            log: "log".into(),
        }
    }

    #[test]
    fn a_wrong_answer_is_not_the_tools_finding() {
        let wrong_only = vec![
            case("33", CaseVerdict::Clean, vec![]),
            case("257", CaseVerdict::Findings, vec![finding(MODEL, "scan/user n=257 index=256 expected=1 got=0")]),
        ];
        let tally = ToolTally::of(&wrong_only);
        assert!(tally.tool_dirty.is_empty());
        assert_eq!(tally.wrong.len(), 1);
        let line = tool_line(Tool::Memcheck, &wrong_only, &[], &tally, Path::new("m.log"));
        assert!(
            line.starts_with("memcheck: clean on 2 cases; wrong answers (not the tool's finding) in 1 case(s)"),
            "{line}"
        );
        assert!(line.contains("n=257 family=small_ints: error model_mismatch: scan/user n=257"), "{line}");

        let both = vec![
            case("33", CaseVerdict::Findings, vec![finding("sanitizer", "Invalid __global__ read of size 4")]),
            case("257", CaseVerdict::Findings, vec![finding(MODEL, "wrong"), finding("sanitizer", "uninitialized")]),
            case("513", CaseVerdict::NotRun, vec![]),
        ];
        let tally = ToolTally::of(&both);
        assert_eq!((tally.tool_dirty.len(), tally.wrong.len()), (3, 1));
        let line = tool_line(Tool::Memcheck, &both, &[], &tally, Path::new("m.log"));
        assert!(line.starts_with("memcheck: FAIL (3 of 3 cases; first: scan user.exclusive.i32 n=33"), "{line}");
        assert!(line.contains("Invalid __global__ read") && line.contains("wrong answers"), "{line}");
    }

    #[test]
    fn findings_name_the_user_s_file_not_inline() {
        let mut hazard = finding("sanitizer", "Potential RAW hazard detected");
        hazard.location = Some("<inline>:12".into());
        hazard.accesses =
            vec!["Write by thread (16,0,0) at <inline>:12".into(), "Read by thread (0,0,0) at <inline>:13".into()];
        let mut cases = vec![case("1", CaseVerdict::Findings, vec![hazard])];
        name_user_source(&mut cases, Path::new("/k/my_reduce.cu"));
        let f = &cases[0].findings[0];
        assert_eq!(f.location.as_deref(), Some("my_reduce.cu:12"));
        assert_eq!(
            f.accesses,
            ["Write by thread (16,0,0) at my_reduce.cu:12", "Read by thread (0,0,0) at my_reduce.cu:13"]
        );
    }

    #[test]
    fn a_family_s_parameter_runs_at_its_ends_only() {
        let spec = |size: &str, family: &str| {
            let id = crate::sweep::gpu::sized_id("topk", "v".into(), 61, family, 0);
            let id = crate::sweep::case::CaseId { size: size.into(), ..id };
            raw::RawSpec::new(id, || Err("not made".into()))
        };
        let specs = vec![
            spec("61x4097", "topk_ties.k1"),
            spec("61x4097", "topk_ties.k33"),
            spec("61x4097", "topk_ties.k2048"),
            spec("61x4097", "topk_ties.k4097"),
            spec("61x4097", "topk_spread.k1"),
            spec("33", "topk_ties.k1"),
            spec("33", "topk_ties.k32"),
            spec("33", "topk_ties.k33"),
            spec("33", "small_ints"),
            spec("33", "small_ints"),
        ];
        let kept: Vec<(String, String)> = parameter_ends(specs).into_iter().map(|s| (s.id.size, s.id.family)).collect();
        let want = [
            ("61x4097", "topk_ties.k1"),
            ("61x4097", "topk_ties.k4097"),
            ("61x4097", "topk_spread.k1"),
            ("33", "topk_ties.k1"),
            ("33", "topk_ties.k33"),
            ("33", "small_ints"),
            ("33", "small_ints"),
        ];
        assert_eq!(kept, want.map(|(a, b)| (a.to_string(), b.to_string())));
    }

    #[test]
    fn the_sanitizer_runs_two_families_at_each_chosen_size() {
        let dir = crate::check::tests::folder();
        let text = "primitive = \"scan\"\ncontract = \"exclusive.i32\"\n[module]\nptx = \"k.ptx\"\n\
            [[launch]]\nkernel = \"scan3\"\nargs = [\"in\", \"out\", \"n\"]\ngrid = \"ceil_div(n, 1024)\"\nblock = \"256\"\n";
        std::fs::write(dir.join("check.toml"), text).expect("manifest written");
        let manifest = super::super::manifest::load(&dir.join("check.toml"), &[1, 1025], None).expect("valid");
        let specs = sanitizer_specs(&manifest, &[1, 1025], 3);
        let families: Vec<(usize, &str)> = specs.iter().map(|s| (s.id.n, s.id.family.as_str())).collect();
        assert_eq!(
            families,
            vec![(1, "small_ints"), (1025, "small_ints"), (1, "full_range_i32"), (1025, "full_range_i32")]
        );
        let chosen: Vec<usize> = extra_sizes::manifest_sanitizer_sizes(&manifest).iter().map(|s| s.n).collect();
        assert!(chosen.contains(&1024) && chosen.contains(&1025) && chosen.contains(&2049), "{chosen:?}");
    }
}
