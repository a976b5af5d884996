//! Every field of a gated receipt judged, beside its coverage
//! ([`super::coverage`]): a gated receipt records no failure anywhere (its
//! tallies, its `failures` list, its findings), holds no entry twice, names
//! only checks that exist, has tallies equal to its verdicts, and is a run of
//! the real kernels (no mutant) on a GPU whose machine it describes. A field
//! the gate does not read is a field a tampered receipt can use, so each rule
//! here names the field it reads.

use super::coverage::{seed_of, CoverageReport};
use super::{Receipt, Tally};
use crate::sweep::SweepPlan;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The checks of a mutants run, each decided once for every build.
pub const MUTANT_CHECKS: [&str; 5] = ["sweep", "memcheck", "racecheck", "synccheck", "initcheck"];

/// How many keys a problem line names.
const SHOWN: usize = 5;

fn listed(what: &str, keys: &[String]) -> String {
    let shown: Vec<&str> = keys.iter().take(SHOWN).map(String::as_str).collect();
    let more = if keys.len() > SHOWN { format!(" and {} more", keys.len() - SHOWN) } else { String::new() };
    format!("{} {what}: {}{more}", keys.len(), shown.join("; "))
}

fn array<'a>(value: &'a Value, field: &str) -> &'a [Value] {
    value.get(field).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

fn text<'a>(value: &'a Value, field: &str) -> &'a str {
    value.get(field).and_then(Value::as_str).unwrap_or("")
}

/// Judges the fields of `receipt` (of the gated kind it claims) that the
/// coverage rules do not read, adding what is wrong to `report`.
pub fn judge(receipt: &Receipt, report: &mut CoverageReport) {
    judge_common(receipt, report);
    match receipt.kind.as_str() {
        "sweep" => judge_sweep(receipt, report),
        "sanitize" => judge_sanitize(receipt, report),
        "mutants" => judge_mutants(receipt, report),
        other => report.incomplete.push(format!("'{other}' is not a gated receipt kind")),
    }
}

/// Every gated receipt: a GPU run described by its machine, no failed or
/// skipped check in its tally, an empty `failures` list, and (for the
/// sweep and sanitize runs, which record it) the real kernels: mutant 0.
pub fn judge_common(receipt: &Receipt, report: &mut CoverageReport) {
    let m = &receipt.machine;
    let empty: Vec<&str> =
        [("gpu", &m.gpu), ("compute_capability", &m.compute_capability), ("driver", &m.driver), ("nvrtc", &m.nvrtc)]
            .into_iter()
            .filter(|(_, v)| v.trim().is_empty())
            .map(|(k, _)| k)
            .collect();
    if !empty.is_empty() || m.sm_count <= 0 || m.memory_bytes == 0 {
        report.incomplete.push(format!(
            "its machine does not describe a GPU (empty: {}; {} SMs, {} bytes of memory)",
            if empty.is_empty() { "none".to_string() } else { empty.join(", ") },
            m.sm_count,
            m.memory_bytes
        ));
    }
    if receipt.tally.failed > 0 {
        report.failures.push(format!("its tally records {} failed check(s)", receipt.tally.failed));
    }
    if receipt.tally.skipped > 0 {
        report.incomplete.push(format!("its tally records {} skipped check(s)", receipt.tally.skipped));
    }
    let failures = array(&receipt.details, "failures");
    if !failures.is_empty() {
        let lines: Vec<String> =
            failures.iter().map(|f| f.as_str().map_or_else(|| f.to_string(), str::to_string)).collect();
        report.failures.push(listed("failures are listed in details.failures", &lines));
    }
    if receipt.kind != "mutants" {
        match receipt.details.get("mutant").and_then(Value::as_u64) {
            Some(0) => {}
            other => report.incomplete.push(format!(
                "details.mutant is {}: only a run of the real kernels (mutant 0) is gated",
                other.map_or("missing".to_string(), |m| m.to_string())
            )),
        }
    }
}

/// Counts of verdicts: `pass`/`clean` passed, `fail`/`findings` failed,
/// anything else skipped.
pub fn count_verdicts<'a>(entries: impl IntoIterator<Item = &'a Value>) -> Tally {
    let mut counts = Tally::default();
    for entry in entries {
        match entry.get("verdict").and_then(Value::as_str) {
            Some("pass" | "clean") => counts.passed += 1,
            Some("fail" | "findings") => counts.failed += 1,
            _ => counts.skipped += 1,
        }
    }
    counts
}

fn tally_of(value: Option<&Value>) -> Option<Tally> {
    serde_json::from_value(value?.clone()).ok()
}

fn show(t: &Tally) -> String {
    format!("{} passed, {} failed, {} skipped", t.passed, t.failed, t.skipped)
}

/// The sweep, against the model checks of its seed's catalogue.
fn judge_sweep(receipt: &Receipt, report: &mut CoverageReport) {
    match seed_of(receipt.details.get("seed")) {
        Some(seed) => judge_sweep_with(receipt, &model_check_keys(seed), report),
        None => report.incomplete.push("details.seed is missing or not a seed".into()),
    }
}

/// The sweep: the GPU ran (`gpu_skipped` is null), `gpu_tally` and
/// `cpu_tally` equal their cases' verdicts and add up to the tally, and the
/// model checks are exactly `model_checks` (keys), once each, every one passed.
pub fn judge_sweep_with(receipt: &Receipt, model_checks: &BTreeSet<String>, report: &mut CoverageReport) {
    let d = &receipt.details;
    if !d.get("gpu_skipped").is_some_and(Value::is_null) {
        report.incomplete.push(format!(
            "details.gpu_skipped is {}: a gated sweep ran its GPU cases",
            d.get("gpu_skipped").map_or("missing".to_string(), Value::to_string)
        ));
    }
    let (gpu, cpu) = (array(d, "gpu_cases"), array(d, "cpu_cases"));
    let mut sum = Tally::default();
    for (field, cases) in [("gpu_tally", gpu), ("cpu_tally", cpu)] {
        let counted = count_verdicts(cases);
        match tally_of(d.get(field)) {
            Some(t) if t == counted => {}
            Some(t) => report.incomplete.push(format!(
                "details.{field} ({}) is not its cases' verdicts ({})",
                show(&t),
                show(&counted)
            )),
            None => report.incomplete.push(format!("details.{field} is missing or not a tally")),
        }
        sum = Tally {
            passed: sum.passed + counted.passed,
            failed: sum.failed + counted.failed,
            skipped: sum.skipped + counted.skipped,
        };
    }
    if sum != receipt.tally {
        report.incomplete.push(format!(
            "its tally ({}) is not the sum of its GPU and model verdicts ({})",
            show(&receipt.tally),
            show(&sum)
        ));
    }
    judge_model_checks(cpu, model_checks, report);
}

/// The keys of the model checks a full sweep of `seed` runs.
pub fn model_check_keys(seed: u64) -> BTreeSet<String> {
    let plan = SweepPlan { sizes: vec![], ..SweepPlan::full(seed) };
    crate::sweep::cpu::checks(&plan, false)
        .into_iter()
        .map(|c| format!("{} {} {} {} {:#x}", c.primitive, c.algorithm, c.size, c.family, c.seed))
        .collect()
}

fn entry_key(entry: &Value) -> String {
    let seed = seed_of(entry.get("seed")).map_or("?".to_string(), |s| format!("{s:#x}"));
    format!(
        "{} {} {} {} {seed}",
        text(entry, "primitive"),
        text(entry, "variant"),
        text(entry, "size"),
        text(entry, "family")
    )
}

/// The model checks: the catalogue's, each once, each passed.
pub fn judge_model_checks(cpu: &[Value], required: &BTreeSet<String>, report: &mut CoverageReport) {
    let mut seen = BTreeSet::new();
    let (mut twice, mut unpassed, mut extra) = (vec![], vec![], vec![]);
    for entry in cpu {
        let key = entry_key(entry);
        if !seen.insert(key.clone()) {
            twice.push(key.clone());
        }
        if !required.contains(&key) {
            extra.push(key.clone());
        }
        if text(entry, "verdict") != "pass" {
            unpassed.push(format!("{key} ({})", text(entry, "verdict")));
        }
    }
    let missing: Vec<String> = required.difference(&seen).cloned().collect();
    if !missing.is_empty() {
        report.incomplete.push(listed(
            &format!("of the {} model checks of the catalogue are not in the receipt", required.len()),
            &missing,
        ));
    }
    if !extra.is_empty() {
        report.incomplete.push(listed("model checks in the receipt are not in the catalogue", &extra));
    }
    if !twice.is_empty() {
        report.incomplete.push(listed("model checks appear more than once", &twice));
    }
    if !unpassed.is_empty() {
        report.failures.push(listed("model checks did not pass", &unpassed));
    }
}

/// The sanitizer run: each (case, tool) once; a `clean` verdict lists no
/// finding.
pub fn judge_sanitize(receipt: &Receipt, report: &mut CoverageReport) {
    let mut seen = BTreeSet::new();
    let (mut twice, mut contradicted) = (vec![], vec![]);
    for entry in array(&receipt.details, "cases") {
        let key = format!("{} {}", entry_key(entry), text(entry, "tool"));
        if !seen.insert(key.clone()) {
            twice.push(key.clone());
        }
        if text(entry, "verdict") == "clean" && !array(entry, "findings").is_empty() {
            contradicted.push(key);
        }
    }
    if !twice.is_empty() {
        report.incomplete.push(listed("(case, tool) pairs appear more than once", &twice));
    }
    if !contradicted.is_empty() {
        report.failures.push(listed("(case, tool) pairs are called clean but list findings", &contradicted));
    }
}

/// A mutants build's identity: (primitive, variant, sizes).
fn build_key(entry: &Value) -> String {
    let sizes: Vec<String> = array(entry, "sizes").iter().map(Value::to_string).collect();
    format!("{} {} [{}]", text(entry, "primitive"), text(entry, "variant"), sizes.join(","))
}

/// The identity of a gallery mutant's build, as [`build_key`] writes it.
fn gallery_key(m: &kernels::mutant::Mutant) -> String {
    let sizes: Vec<String> = m.sizes.iter().map(usize::to_string).collect();
    format!("{} {} [{}]", m.primitive, m.variant, sizes.join(","))
}

/// The outcomes of a build's checks by name, or why they are not the five
/// checks once each.
fn build_checks(entry: &Value) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for check in array(entry, "checks") {
        let name = text(check, "check");
        if !MUTANT_CHECKS.contains(&name) {
            return Err(format!("names a check '{name}' that does not exist ({})", MUTANT_CHECKS.join(", ")));
        }
        if out.insert(name.to_string(), text(check, "outcome").to_string()).is_some() {
            return Err(format!("records the check '{name}' more than once"));
        }
    }
    if out.len() != MUTANT_CHECKS.len() {
        return Err(format!("records {} of the {} checks", out.len(), MUTANT_CHECKS.len()));
    }
    Ok(out)
}

/// The mutants run: each mutant of the gallery once and as the gallery
/// describes it, each control once, every build with the five checks once
/// each, and a tally equal to the builds' verdicts (a mutant passes when
/// some check caught it and every check decided; a control when every
/// check ran and none flagged it).
pub fn judge_mutants(receipt: &Receipt, report: &mut CoverageReport) {
    let gallery = &kernels::mutant::GALLERY;
    let mut counted = Tally::default();
    let mut ids = BTreeSet::new();
    for entry in array(&receipt.details, "mutants") {
        let id = entry.get("id").and_then(Value::as_u64).unwrap_or(u64::MAX);
        let Some(m) = gallery.iter().find(|m| m.id as u64 == id) else {
            report.incomplete.push(format!("mutant {id} is not in the gallery"));
            continue;
        };
        if !ids.insert(id) {
            report.incomplete.push(format!("mutant {id} ({}) appears more than once", m.name));
        }
        if text(entry, "name") != m.name || build_key(entry) != gallery_key(m) {
            report.incomplete.push(format!(
                "mutant {id} is recorded as another build than the gallery's {} ({})",
                m.name,
                gallery_key(m)
            ));
        }
        match build_checks(entry) {
            Err(why) => report.incomplete.push(format!("mutant {id} ({}) {why}", m.name)),
            Ok(checks) => {
                let decided = checks.values().all(|o| o == "caught" || o == "not_caught");
                let caught = checks.values().any(|o| o == "caught");
                if decided && caught {
                    counted.passed += 1
                } else {
                    counted.failed += 1
                }
            }
        }
    }
    let wanted: BTreeSet<String> = gallery.iter().map(gallery_key).collect();
    let mut controls = BTreeSet::new();
    for entry in array(&receipt.details, "controls") {
        let key = build_key(entry);
        if !controls.insert(key.clone()) {
            report.incomplete.push(format!("the control {key} appears more than once"));
        }
        if !wanted.contains(&key) {
            report.incomplete.push(format!("the control {key} is no mutant's build"));
        }
        match build_checks(entry) {
            Err(why) => report.incomplete.push(format!("the control {key} {why}")),
            Ok(checks) if checks.values().all(|o| o == "not_caught") => counted.passed += 1,
            Ok(_) => counted.failed += 1,
        }
    }
    if counted != receipt.tally {
        report.incomplete.push(format!(
            "its tally ({}) is not its builds' verdicts ({})",
            show(&receipt.tally),
            show(&counted)
        ));
    }
}

#[cfg(test)]
#[path = "judge_tests.rs"]
mod tests;
