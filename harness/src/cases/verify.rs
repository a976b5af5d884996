//! `harness cases verify`: the outputs a program wrote next to an export,
//! compared with the model's by the contract's rule. Only the outputs are
//! read from the folder, where the tested program writes: the inputs and
//! expected outputs are regenerated from the seed, primitive, contracts and
//! sizes the index records, and the index's case list must be the
//! regenerated catalogue, entry for entry. A missing or unreadable output
//! is a failure, never a pass.

use super::export::{check_host_sizes, entry_of, specs};
use super::index::{CaseEntry, Index, FORMAT};
use super::npy;
#[cfg(test)]
use crate::sweep::case::CaseId;
use crate::sweep::case::{failure_line, Verdict};
use crate::sweep::raw::{Contract, RawSpec, Value};
use crate::sweep::SweepPlan;
use anyhow::{anyhow, bail, Result};
use std::path::Path;

/// The case catalogue an export in `dir` must hold: its index, and the
/// regenerated (contract, case) of every entry, in order.
pub struct Catalogue {
    /// The index as read.
    pub index: Index,
    /// The regenerated cases, one per index entry.
    pub specs: Vec<(&'static Contract, RawSpec)>,
}

/// Reads the index of `dir` (bounded) and regenerates its catalogue; an
/// error when the index is not an export's or lists another number of
/// cases than its seed, contracts and sizes define.
pub fn catalogue_of(dir: &Path) -> Result<Catalogue> {
    let path = dir.join("index.json");
    let text = crate::bounded::read_text(&path, crate::bounded::JSON_LIMIT).map_err(anyhow::Error::msg)?;
    let index: Index =
        serde_json::from_str(&text).map_err(|e| anyhow!("{} is not an export's index: {e}", path.display()))?;
    if index.format != FORMAT {
        bail!("{}: format '{}' where '{FORMAT}' is required", path.display(), index.format);
    }
    let primitive = super::typed::rows::Named::parse(&index.primitive)
        .ok_or_else(|| anyhow!("{}: unknown primitive '{}'", path.display(), index.primitive))?
        .primitive;
    let seed = crate::grammar::parse_seed(&index.seed).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    if index.contracts.is_empty() {
        bail!("{}: lists no contracts (an export before contracts were recorded): export again", path.display());
    }
    let mut contracts = Vec::new();
    for name in &index.contracts {
        contracts.extend(super::export::contracts_of(primitive, Some(name), None, None)?);
    }
    check_host_sizes(&index.sizes)?;
    let specs = specs(primitive, &contracts, &SweepPlan::of_primitive(primitive, &index.sizes, seed));
    if specs.len() != index.cases.len() {
        bail!(
            "{}: lists {} cases where the catalogue of its seed {seed:#x}, contracts and sizes holds {}: \
             the case list is not an export's",
            path.display(),
            index.cases.len(),
            specs.len()
        );
    }
    Ok(Catalogue { index, specs })
}

/// The verdict of the i-th case on the output files in `dir`: the case is
/// regenerated, its index entry must be the regenerated one, and only the
/// outputs are read (at most as many elements as expected).
#[cfg(test)]
pub fn verify_spec(dir: &Path, i: usize, contract: &Contract, spec: &RawSpec, listed: &CaseEntry) -> Verdict {
    verify_spec_detailed(dir, i, contract, spec, listed).0
}

/// `verify_spec` (a test helper), with the mismatch summary of a failed comparison of
/// the outputs (empty when it passed or failed before comparing).
pub fn verify_spec_detailed(
    dir: &Path,
    i: usize,
    contract: &Contract,
    spec: &RawSpec,
    listed: &CaseEntry,
) -> (Verdict, Vec<String>) {
    let data = match (spec.make)() {
        Ok(d) => d,
        Err(e) => return (Verdict::fail("the case generated", e, "catalogue"), Vec::new()),
    };
    match read_outputs(dir, i, contract, spec, listed, &data) {
        Err(verdict) => (verdict, Vec::new()),
        Ok(got) => {
            let verdict = super::rules::compare(contract, &data, &got);
            let detail =
                if verdict.passed() { Vec::new() } else { super::rules::mismatch_lines(contract, &data, &got) };
            (verdict, detail)
        }
    }
}

/// The outputs of case `i` read from `dir`, once its index entry is seen
/// to be the regenerated one; else the failure.
fn read_outputs(
    dir: &Path,
    i: usize,
    contract: &Contract,
    spec: &RawSpec,
    listed: &CaseEntry,
    data: &crate::sweep::raw::RawCase,
) -> std::result::Result<Vec<crate::sweep::raw::Array>, Verdict> {
    let want = match entry_of(i, contract, spec, data) {
        Ok(w) => w,
        Err(e) => return Err(Verdict::fail("the case's entry", e, "catalogue")),
    };
    if &want != listed {
        return Err(Verdict::fail(
            format!("{} as the catalogue lists it", want.case),
            difference(contract, &want, listed),
            "index",
        ));
    }
    let mut got = Vec::new();
    for (buffer, entry) in contract.outputs.iter().zip(&want.outputs) {
        let path = dir.join(&entry.file);
        if std::fs::symlink_metadata(&path).is_err() {
            return Err(Verdict::fail(format!("{} written", entry.file), "no file", "output file"));
        }
        match npy::read_at_most(&path, buffer.dtype, entry.len) {
            Ok(array) => got.push(array),
            Err(e) => {
                return Err(Verdict::fail(
                    format!("{} of {} {}", entry.file, entry.len, buffer.dtype.name()),
                    e,
                    "output file",
                ))
            }
        }
    }
    Ok(got)
}

/// What differs between the regenerated index entry and the listed one:
/// the first parameter that does (read as its contract type), or the entry.
fn difference(contract: &Contract, want: &CaseEntry, listed: &CaseEntry) -> String {
    if want.params.len() != listed.params.len() {
        return format!("{} parameters where the contract has {}", listed.params.len(), want.params.len());
    }
    for ((param, w), l) in contract.params.iter().zip(&want.params).zip(&listed.params) {
        if w != l {
            return match Value::from_json(param.dtype, &l.value) {
                Ok(_) => format!("parameter {} = {} where the catalogue has {}", param.name, l.value, w.value),
                Err(e) => format!("parameter {}: {e}", param.name),
            };
        }
    }
    "another index entry".into()
}

/// The verdict of the case named `name` (e.g. `c00012`) of the export in `dir`.
#[cfg(test)]
pub fn verify_named(dir: &Path, name: &str) -> Result<Verdict> {
    let catalogue = catalogue_of(dir)?;
    let i = catalogue.index.cases.iter().position(|c| c.case == name).ok_or_else(|| anyhow!("no case {name}"))?;
    let (contract, spec) = &catalogue.specs[i];
    Ok(verify_spec(dir, i, contract, spec, &catalogue.index.cases[i]))
}

/// The case id of an index entry (for failure lines).
#[cfg(test)]
pub fn case_id(case: &CaseEntry) -> CaseId {
    let seed = crate::grammar::parse_seed(&case.seed).unwrap_or(0);
    CaseId {
        primitive: case.primitive.clone(),
        variant: case.variant.clone(),
        size: case.size.clone(),
        n: case.n,
        family: case.family.clone(),
        seed,
    }
}

/// The command that regenerates one case's inputs and expected outputs: an
/// export of its contract at its size with the export's seed (from which
/// the case's input seed in the failure line is derived).
pub fn rerun_line(index: &Index, contract: &Contract, n: usize, case_seed: u64) -> String {
    format!(
        "rerun: harness cases export --primitive {} --contract {} --sizes {n} --seed {} DIR \
         (export seed {}, from which this case's input seed={case_seed:#x} is derived)",
        index.primitive, contract.name, index.seed, index.seed
    )
}

/// One case's verdict as `cases verify` reports it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CaseReport {
    /// The case's name in index.json (`c00012`).
    pub case: String,
    /// `pass`, `fail` or `skipped`.
    pub verdict: &'static str,
    /// The failure line (`<variant> n=... check=... expected=... got=...`), for a failure.
    pub failure: Option<String>,
    /// The mismatch summary under it (elements wrong, first indices, largest differences).
    pub summary: Vec<String>,
    /// Why it was skipped.
    pub reason: Option<String>,
    /// A typed float sum's worst element against its bound (where, the error, its share of the bound).
    pub accuracy: Option<String>,
    /// The command that regenerates the case.
    pub rerun: String,
}

/// What `cases verify --json` prints: the counts and every checked case.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct VerifyReport {
    /// The export's folder.
    pub dir: String,
    /// Cases passed.
    pub passed: usize,
    /// Cases failed (a skipped case counts as failed: nothing was proved).
    pub failed: usize,
    /// Cases checked.
    pub total: usize,
    /// Every checked case, in index order.
    pub cases: Vec<CaseReport>,
    /// Among the passing cases, the float sum element that came closest to its bound (the case, then where).
    pub closest: Option<String>,
}

/// Checks the cases of the export in `dir` (`only` names some; all when
/// empty; a name the index does not hold is an error, never a silent pass),
/// with each case's JUnit entry.
pub fn verify_all(dir: &Path, only: &[String]) -> Result<(VerifyReport, Vec<crate::junit::TestCase>)> {
    let catalogue = catalogue_of(dir)?;
    if let Some(unknown) = only.iter().find(|name| !catalogue.index.cases.iter().any(|c| &c.case == *name)) {
        bail!(
            "cases verify: {}/index.json holds no case '{unknown}' (its cases are c00000 to c{:05})",
            dir.display(),
            catalogue.index.cases.len().saturating_sub(1)
        );
    }
    let mut report = VerifyReport {
        dir: dir.display().to_string(),
        passed: 0,
        failed: 0,
        total: 0,
        cases: Vec::new(),
        closest: None,
    };
    let mut closest: Option<(f64, String)> = None;
    let mut junit_cases = Vec::new();
    for (i, ((contract, spec), case)) in catalogue.specs.iter().zip(&catalogue.index.cases).enumerate() {
        if !only.is_empty() && !only.contains(&case.case) {
            continue;
        }
        report.total += 1;
        let started = std::time::Instant::now();
        let _ = super::rules::take_accuracy();
        let (verdict, detail) = verify_spec_detailed(dir, i, contract, spec, case);
        let accuracy = super::rules::take_accuracy();
        if let (Some((ratio, line)), true) = (&accuracy, verdict.passed()) {
            if closest.as_ref().is_none_or(|(worst, _)| ratio > worst) {
                closest = Some((*ratio, format!("{}: {line}", case.case)));
            }
        }
        let rerun = rerun_line(&catalogue.index, contract, spec.id.n, spec.id.seed);
        let mut entry = CaseReport {
            case: case.case.clone(),
            verdict: "pass",
            failure: None,
            summary: Vec::new(),
            reason: None,
            accuracy: accuracy.map(|(_, line)| line),
            rerun: rerun.clone(),
        };
        let outcome = match &verdict {
            Verdict::Fail(m) => {
                report.failed += 1;
                let line = failure_line(&spec.id, m);
                let lines: Vec<String> =
                    std::iter::once(format!("FAIL {line} ({})", case.case)).chain(detail.iter().cloned()).collect();
                (entry.verdict, entry.failure, entry.summary) = ("fail", Some(line), detail);
                crate::junit::Outcome::Failed(format!("{}\n{rerun}", lines.join("\n")))
            }
            Verdict::Pass => {
                report.passed += 1;
                crate::junit::Outcome::Passed
            }
            Verdict::Skipped { reason } => {
                report.failed += 1;
                (entry.verdict, entry.reason) = ("skipped", Some(reason.clone()));
                crate::junit::Outcome::Skipped(reason.clone())
            }
        };
        report.cases.push(entry);
        junit_cases.push(crate::junit::TestCase {
            classname: format!("cases.{}", spec.id.primitive),
            name: format!("{} {} n={} {}", case.case, spec.id.variant, spec.id.size, spec.id.family),
            seconds: started.elapsed().as_secs_f64(),
            outcome,
        });
    }
    report.closest = closest.map(|(_, line)| line);
    Ok((report, junit_cases))
}

/// Runs `cases verify`; Ok(false) on any failure or when no case was
/// checked. Text: up to `max_shown` failures, each with its summary and
/// rerun line, then the counts. `json`: one JSON document on stdout
/// ([`VerifyReport`], every case), the counts line on stderr.
pub fn run(dir: &Path, max_shown: usize, only: &[String], junit_path: Option<&Path>, json: bool) -> Result<bool> {
    let (report, junit_cases) = verify_all(dir, only)?;
    if let Some(path) = junit_path {
        crate::junit::write(path, "cases", &junit_cases)?;
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for c in report.cases.iter().filter(|c| c.verdict == "fail").take(max_shown) {
            println!("FAIL {} ({})", c.failure.as_deref().unwrap_or(""), c.case);
            c.summary.iter().for_each(|l| println!("     {l}"));
            println!("     {}", c.rerun);
        }
    }
    let counts = format!(
        "cases verify: {} passed, {} failed of {} cases in {}",
        report.passed, report.failed, report.total, report.dir
    );
    if json {
        eprintln!("{counts}");
    } else {
        println!("{counts}");
        if let Some(line) = &report.closest {
            println!("cases verify: float sums of the passing cases came closest to their bound at {line}");
        }
    }
    if report.total == 0 {
        eprintln!("cases verify: the index holds no case: nothing was checked");
    }
    Ok(report.failed == 0 && report.total > 0)
}
