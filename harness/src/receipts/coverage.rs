//! What a receipt must cover: the catalogue the current sources define,
//! recomputed here on the CPU (the model needs no GPU). A receipt passes only
//! if every case of the catalogue is in it with a passing verdict and the
//! same input and expected-output digests, nothing else is in it, and its
//! tally equals its verdicts.

use super::Receipt;
use crate::registry::Primitive;
use crate::sweep::gpu::catalogue;
use crate::sweep::SweepPlan;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// How many case ids a problem line names before "and N more".
const SHOWN: usize = 5;

/// What one receipt was checked against.
#[derive(Debug, Default, Clone)]
pub struct CoverageReport {
    /// Checks the catalogue requires.
    pub required: usize,
    /// Of those, found in the receipt with a pass and matching digests.
    pub matched: usize,
    /// Ways the receipt does not cover the catalogue.
    pub incomplete: Vec<String>,
    /// Failed verdicts it records.
    pub failures: Vec<String>,
}

fn listed(what: &str, keys: &[String]) -> String {
    let shown: Vec<&str> = keys.iter().take(SHOWN).map(String::as_str).collect();
    let more = if keys.len() > SHOWN { format!(" and {} more", keys.len() - SHOWN) } else { String::new() };
    format!("{} {what}: {}{more}", keys.len(), shown.join("; "))
}

/// A seed written as a number or as "0x..." text.
pub fn seed_of(value: Option<&Value>) -> Option<u64> {
    match value? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => crate::grammar::parse_seed(s).ok(),
        _ => None,
    }
}

/// The key of a case entry in a receipt (see `CaseId::key`).
fn entry_key(entry: &Value) -> Option<String> {
    let text = |k: &str| entry.get(k).and_then(Value::as_str).map(str::to_string);
    Some(format!(
        "{} {} {} {} {:#x}",
        text("primitive")?,
        text("variant")?,
        text("size")?,
        text("family")?,
        seed_of(entry.get("seed"))?
    ))
}

/// One case's reference: (input digest, expected digest), or the
/// generator's error.
pub type Reference = Result<(String, String), String>;

/// The reference of every case of `plan`: key -> (input digest, expected
/// digest), or the generator's error. Inputs are digested on
/// [`GATE_THREADS`] threads, the largest first: an input made a piece at a
/// time holds one piece (`sweep::gpu::pieces`), any other is made whole,
/// and the elements of whole inputs held at once stay within
/// [`GATE_WHOLE_ELEMENTS`], so that the gate fits a small CI machine.
pub fn reference_digests(plan: &SweepPlan) -> BTreeMap<String, Reference> {
    let cases = catalogue(plan);
    let ranges = crate::sweep::gpu::groups(&cases);
    let weight = |r: &std::ops::Range<usize>| {
        if cases[r.start].pieced() {
            model::generators::PIECE
        } else {
            cases[r.clone()].iter().map(|c| c.id.n).max().unwrap_or(1)
        }
    };
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.sort_by_key(|&g| std::cmp::Reverse(cases[ranges[g].start].id.n));
    let budget = crate::budget::Budget::new(GATE_WHOLE_ELEMENTS);
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Vec<Reference>)>> = Mutex::new(Vec::with_capacity(ranges.len()));
    let seconds: Mutex<BTreeMap<String, f64>> = Mutex::new(BTreeMap::new());
    let slowest: Mutex<Vec<(f64, String)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..GATE_THREADS {
            scope.spawn(|| {
                while let Some(&g) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let range = ranges[g].clone();
                    let started = std::time::Instant::now();
                    let taken = budget.take(weight(&range));
                    let digests = crate::sweep::gpu::digest_references(&cases[range.clone()]);
                    budget.give(taken);
                    let refs = digests.into_iter().map(|d| d.map(|d| (d.input_digest, d.expected_digest))).collect();
                    let primitive = cases[range.start].id.primitive.clone();
                    let spent = started.elapsed().as_secs_f64();
                    *seconds.lock().unwrap_or_else(|p| p.into_inner()).entry(primitive).or_default() += spent;
                    slowest
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push((spent, cases[range.start].input_key().to_string()));
                    results.lock().unwrap_or_else(|p| p.into_inner()).push((g, refs));
                }
            });
        }
    });
    if std::env::var_os("PRIMLAB_GATE_TIMING").is_some() {
        for (primitive, s) in seconds.into_inner().unwrap_or_else(|p| p.into_inner()) {
            eprintln!("receipts: {primitive}: references in {s:.1} thread-s");
        }
        let mut slowest = slowest.into_inner().unwrap_or_else(|p| p.into_inner());
        slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (s, key) in slowest.iter().take(15) {
            eprintln!("receipts:   {s:6.2} s  {key}");
        }
    }
    let mut out = BTreeMap::new();
    for (g, refs) in results.into_inner().unwrap_or_else(|p| p.into_inner()) {
        for (case, reference) in cases[ranges[g].clone()].iter().zip(refs) {
            out.insert(case.id.key(), reference);
        }
    }
    out
}

/// Threads the gate digests inputs on (the CI machine has two cores).
const GATE_THREADS: usize = 2;

/// Elements of inputs made whole that the gate holds at once: one of 2^24
/// and a few small ones (a whole 2^24 f32 input with its widened copy and
/// the model's replays is about 250 MB).
const GATE_WHOLE_ELEMENTS: usize = (1 << 24) + (1 << 22);

/// Checks a sweep receipt against the full catalogue of its seed.
pub fn check_sweep_coverage(receipt: &Receipt) -> CoverageReport {
    match seed_of(receipt.details.get("seed")) {
        Some(seed) => check_sweep_against(receipt, &SweepPlan::full(seed)),
        None => {
            CoverageReport { incomplete: vec!["details.seed is missing or not a seed".into()], ..Default::default() }
        }
    }
}

/// Checks a sweep receipt against the catalogue of `plan`.
pub fn check_sweep_against(receipt: &Receipt, plan: &SweepPlan) -> CoverageReport {
    let mut report = CoverageReport::default();
    let cases = |field: &str| receipt.details.get(field).and_then(Value::as_array).cloned().unwrap_or_default();
    let (gpu_cases, cpu_cases) = (cases("gpu_cases"), cases("cpu_cases"));
    if gpu_cases.is_empty() {
        report.incomplete.push("holds no GPU case verdicts (details.gpu_cases is missing or empty)".into());
    }
    check_tally(receipt, gpu_cases.iter().chain(&cpu_cases), &mut report);

    let mut recorded: BTreeMap<String, &Value> = BTreeMap::new();
    let mut unnamed = 0;
    let mut duplicated = Vec::new();
    for entry in &gpu_cases {
        match entry_key(entry) {
            Some(key) => {
                if recorded.insert(key.clone(), entry).is_some() {
                    duplicated.push(key);
                }
            }
            None => unnamed += 1,
        }
    }
    if !duplicated.is_empty() {
        report.incomplete.push(listed("cases appear more than once in the receipt", &duplicated));
    }
    if unnamed > 0 {
        report.incomplete.push(format!("{unnamed} GPU case entries lack primitive, variant, size, family or seed"));
    }
    let reference = reference_digests(plan);
    report.required = reference.len();
    let (mut missing, mut mismatched, mut failed, mut generator) = (vec![], vec![], vec![], vec![]);
    for (key, digest) in &reference {
        let Some(entry) = recorded.get(key) else {
            missing.push(key.clone());
            continue;
        };
        let (input, expected) = match digest {
            Ok(d) => d,
            Err(e) => {
                generator.push(format!("{key}: {e}"));
                continue;
            }
        };
        let text = |k: &str| entry.get(k).and_then(Value::as_str).unwrap_or("");
        if text("input_digest") != input || text("expected_digest") != expected {
            mismatched.push(key.clone());
        } else if text("verdict") != "pass" {
            failed.push(format!("{key} ({})", if text("verdict").is_empty() { "no verdict" } else { text("verdict") }));
        } else {
            report.matched += 1;
        }
    }
    let extra: Vec<String> = recorded.keys().filter(|k| !reference.contains_key(*k)).cloned().collect();
    if !missing.is_empty() {
        report.incomplete.push(listed(
            &format!(
                "of the catalogue's {} GPU cases are not in the receipt (a filtered, quick or partial run?)",
                reference.len()
            ),
            &missing,
        ));
    }
    if !mismatched.is_empty() {
        report.incomplete.push(listed(
            "cases ran on other inputs or were compared with other expected outputs than the catalogue's",
            &mismatched,
        ));
    }
    if !extra.is_empty() {
        report.incomplete.push(listed("cases in the receipt are not in the current catalogue", &extra));
    }
    if !generator.is_empty() {
        report.incomplete.push(listed("catalogue inputs could not be generated here", &generator));
    }
    if !failed.is_empty() {
        report.failures.push(listed("GPU cases did not pass", &failed));
    }
    report
}

/// The tally must equal the verdicts it summarises, and a gated receipt
/// records no failure and no skipped check.
fn check_tally<'a>(receipt: &Receipt, entries: impl Iterator<Item = &'a Value>, report: &mut CoverageReport) {
    let mut counts = super::Tally::default();
    for entry in entries {
        match entry.get("verdict").and_then(Value::as_str) {
            Some("pass" | "clean") => counts.passed += 1,
            Some("fail" | "findings") => counts.failed += 1,
            _ => counts.skipped += 1,
        }
    }
    if counts != receipt.tally {
        report.incomplete.push(format!(
            "its tally ({} passed, {} failed, {} skipped) is not its verdicts ({} passed, {} failed, {} skipped)",
            receipt.tally.passed,
            receipt.tally.failed,
            receipt.tally.skipped,
            counts.passed,
            counts.failed,
            counts.skipped
        ));
    }
    if receipt.tally.skipped > 0 || counts.skipped > 0 {
        report
            .incomplete
            .push(format!("{} check(s) were skipped or have no verdict", counts.skipped.max(receipt.tally.skipped)));
    }
}

/// The sanitizer tools the gate requires for every case.
pub const GATED_TOOLS: [&str; 4] = ["memcheck", "racecheck", "synccheck", "initcheck"];

/// Checks a sanitize receipt: every (case, tool) of the sanitizer
/// catalogue (every primitive at the gate sizes) clean.
pub fn check_sanitize_coverage(receipt: &Receipt) -> CoverageReport {
    let Some(seed) = seed_of(receipt.details.get("seed")) else {
        return CoverageReport {
            incomplete: vec!["details.seed is missing or not a seed".into()],
            ..Default::default()
        };
    };
    let required: Vec<String> = Primitive::ALL
        .iter()
        .flat_map(|&p| catalogue(&SweepPlan::sanitizer(p, &crate::sweep::sizes::SANITIZE_SIZES, seed, &[])))
        .flat_map(|case| GATED_TOOLS.map(|tool| format!("{} {tool}", case.id.key())))
        .collect();
    check_tool_cases(receipt, &required)
}

/// Checks (case, tool) entries of a sanitize receipt against `required` keys.
pub fn check_tool_cases(receipt: &Receipt, required: &[String]) -> CoverageReport {
    let mut report = CoverageReport { required: required.len(), ..Default::default() };
    let entries = receipt.details.get("cases").and_then(Value::as_array).cloned().unwrap_or_default();
    check_tally(receipt, entries.iter(), &mut report);
    let recorded: BTreeMap<String, &Value> =
        entries.iter().filter_map(|e| Some((format!("{} {}", entry_key(e)?, e.get("tool")?.as_str()?), e))).collect();
    let (mut missing, mut unclean) = (vec![], vec![]);
    for key in required {
        match recorded.get(key).and_then(|e| e.get("verdict")).and_then(Value::as_str) {
            None => missing.push(key.clone()),
            Some("clean") => report.matched += 1,
            Some(other) => unclean.push(format!("{key} ({other})")),
        }
    }
    let extra: Vec<String> = recorded.keys().filter(|k| !required.contains(k)).cloned().collect();
    if !missing.is_empty() {
        report.incomplete.push(listed(
            &format!("of the {} (case, tool) pairs of the sanitizer catalogue are not in the receipt", required.len()),
            &missing,
        ));
    }
    if !extra.is_empty() {
        report.incomplete.push(listed("(case, tool) pairs in the receipt are not in the current catalogue", &extra));
    }
    if !unclean.is_empty() {
        report.failures.push(listed("(case, tool) pairs are not clean", &unclean));
    }
    report
}

/// Checks a mutants receipt: every mutant of the gallery caught by at least
/// one check and every check of it decided (a check that did not compile,
/// timed out or broke proves nothing), and for every mutant's (primitive,
/// variant, sizes) a real-kernel control that every check ran to the end
/// and none flagged.
pub fn check_mutants_coverage(receipt: &Receipt) -> CoverageReport {
    let mut report = CoverageReport { required: kernels::mutant::GALLERY.len(), ..Default::default() };
    let list = |field: &str| receipt.details.get(field).and_then(Value::as_array).cloned().unwrap_or_default();
    let (mutants, controls) = (list("mutants"), list("controls"));
    let outcomes = |build: &Value| -> Vec<(String, String)> {
        build
            .get("checks")
            .and_then(Value::as_array)
            .map(|checks| {
                checks
                    .iter()
                    .map(|c| {
                        let text = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                        (text("check"), text("outcome"))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let same_build = |a: &Value, m: &kernels::mutant::Mutant| {
        a.get("primitive").and_then(Value::as_str) == Some(m.primitive)
            && a.get("variant").and_then(Value::as_str) == Some(m.variant)
            && a.get("sizes").and_then(Value::as_array).map(|s| s.iter().filter_map(Value::as_u64).collect::<Vec<_>>())
                == Some(m.sizes.iter().map(|&n| n as u64).collect())
    };
    for m in &kernels::mutant::GALLERY {
        let Some(entry) = mutants.iter().find(|e| e.get("id").and_then(Value::as_u64) == Some(m.id as u64)) else {
            report.incomplete.push(format!("mutant {} ({}) is not in the receipt", m.id, m.name));
            continue;
        };
        let checks = outcomes(entry);
        let undecided: Vec<String> = checks
            .iter()
            .filter(|(_, o)| o != "caught" && o != "not_caught")
            .map(|(c, o)| format!("{c}: {o}"))
            .collect();
        if checks.is_empty() {
            report.incomplete.push(format!("mutant {} ({}) records no check", m.id, m.name));
        } else if !undecided.is_empty() {
            report.failures.push(format!("mutant {} ({}): {}", m.id, m.name, undecided.join(", ")));
        } else if checks.iter().any(|(_, o)| o == "caught") {
            report.matched += 1;
        } else {
            report.failures.push(format!("mutant {} ({}) was caught by no check", m.id, m.name));
        }
        match controls.iter().find(|c| same_build(c, m)) {
            None => report.incomplete.push(format!(
                "no real-kernel control of {} {} at sizes {:?} (mutant {})",
                m.primitive, m.variant, m.sizes, m.id
            )),
            Some(control) => {
                let flagged: Vec<String> = outcomes(control)
                    .into_iter()
                    .filter(|(_, o)| o != "not_caught")
                    .map(|(c, o)| format!("{c}: {o}"))
                    .collect();
                if outcomes(control).is_empty() || !flagged.is_empty() {
                    report.failures.push(format!(
                        "the real-kernel control of {} {} is not clean: {}",
                        m.primitive,
                        m.variant,
                        if flagged.is_empty() { "no check recorded".to_string() } else { flagged.join(", ") }
                    ));
                }
            }
        }
    }
    report.failures.sort();
    report.failures.dedup();
    report
}

#[cfg(test)]
#[path = "coverage_tests.rs"]
mod tests;
