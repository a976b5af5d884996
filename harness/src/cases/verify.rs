//! `harness cases verify`: the outputs a program wrote next to an export,
//! compared with the model's by the contract's rule (the inputs and
//! parameters are read back too: a tolerance is judged on them); a missing
//! or unreadable output is a failure, never a pass.

use super::index::{CaseEntry, Index, FORMAT};
use super::npy;
use crate::registry::Primitive;
use crate::sweep::case::{failure_line, CaseId, Verdict};
use crate::sweep::raw::{self, Contract, Dtype, RawCase, Value};
use anyhow::{bail, Context, Result};
use std::path::Path;

/// The verdict of one exported case on the outputs found in `dir`.
pub fn verify_case(dir: &Path, case: &CaseEntry) -> Verdict {
    let contract = match Primitive::from_name(&case.primitive)
        .ok_or_else(|| format!("unknown primitive '{}'", case.primitive))
        .and_then(|p| raw::contract(p, &case.contract))
    {
        Ok(c) => c,
        Err(e) => return Verdict::fail("a known contract", e, "index"),
    };
    let model = match model_case(dir, contract, case) {
        Ok(m) => m,
        Err(verdict) => return verdict,
    };
    let mut got = Vec::new();
    for (buffer, entry) in contract.outputs.iter().zip(&case.outputs) {
        let path = dir.join(&entry.file);
        if !path.exists() {
            return Verdict::fail(format!("{} written", entry.file), "no file", "output file");
        }
        match npy::read(&path, buffer.dtype) {
            Ok(array) => got.push(array),
            Err(e) => {
                return Verdict::fail(
                    format!("{} of {} {}", entry.file, entry.len, buffer.dtype.name()),
                    e,
                    "output file",
                )
            }
        }
    }
    contract.compare(&model, &got)
}

/// The case's inputs, parameters and model outputs as the export wrote
/// them, checked against the contract's types; a failure verdict when the
/// index or a file does not fit.
fn model_case(dir: &Path, contract: &Contract, case: &CaseEntry) -> Result<RawCase, Verdict> {
    let counts = [
        ("inputs", contract.inputs.len(), case.inputs.len()),
        ("params", contract.params.len(), case.params.len()),
        ("expected", contract.outputs.len(), case.expected.len()),
        ("outputs", contract.outputs.len(), case.outputs.len()),
    ];
    if let Some((what, want, found)) = counts.into_iter().find(|(_, want, found)| want != found) {
        return Err(Verdict::fail(format!("{want} {what}"), format!("{found} {what}"), "index"));
    }
    let typed = |want: Dtype, found: &str, what: &str| {
        if Dtype::from_name(found) == Some(want) {
            Ok(())
        } else {
            Err(Verdict::fail(want.name(), found, &format!("index {what} dtype")))
        }
    };
    let read = |file: &str, dtype: Dtype, what: &str| {
        npy::read(&dir.join(file), dtype)
            .map_err(|e| Verdict::fail(format!("the {what} file"), e, &format!("{what} file")))
    };
    let mut inputs = Vec::new();
    for (buffer, entry) in contract.inputs.iter().zip(&case.inputs) {
        typed(buffer.dtype, &entry.dtype, "input")?;
        inputs.push(read(&entry.file, buffer.dtype, "input")?);
    }
    let mut params = Vec::new();
    for (param, entry) in contract.params.iter().zip(&case.params) {
        if entry.name != param.name {
            return Err(Verdict::fail(param.name, &entry.name, "index parameter"));
        }
        typed(param.dtype, &entry.dtype, "parameter")?;
        params.push(
            Value::from_json(param.dtype, &entry.value).map_err(|e| Verdict::fail(param.name, e, "index parameter"))?,
        );
    }
    let mut expected = Vec::new();
    for (k, (buffer, entry)) in contract.outputs.iter().zip(&case.expected).enumerate() {
        typed(buffer.dtype, &case.outputs[k].dtype, "output")?;
        typed(contract.expected_dtype(k), &entry.dtype, "expected")?;
        expected.push(read(&entry.file, contract.expected_dtype(k), "expected")?);
    }
    Ok(RawCase { inputs, params, expected })
}

/// The case id of an index entry (for failure lines).
pub fn case_id(case: &CaseEntry) -> CaseId {
    let seed = crate::cli::parse_seed(&case.seed).unwrap_or(0);
    CaseId {
        primitive: case.primitive.clone(),
        variant: case.variant.clone(),
        size: case.size.clone(),
        n: case.n,
        family: case.family.clone(),
        seed,
    }
}

/// Runs `cases verify`; Ok(false) on any failure or when the index holds no case.
pub fn run(dir: &Path, max_shown: usize) -> Result<bool> {
    let path = dir.join("index.json");
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let index: Index =
        serde_json::from_str(&text).with_context(|| format!("{} is not an export's index", path.display()))?;
    if index.format != FORMAT {
        bail!("{}: format '{}' where '{FORMAT}' is required", path.display(), index.format);
    }
    let (mut passed, mut failed, mut shown) = (0usize, 0usize, 0usize);
    for case in &index.cases {
        match verify_case(dir, case) {
            Verdict::Fail(m) => {
                failed += 1;
                if shown < max_shown {
                    shown += 1;
                    println!("FAIL {} ({})", failure_line(&case_id(case), &m), case.case);
                }
            }
            Verdict::Pass => passed += 1,
            Verdict::Skipped { .. } => failed += 1,
        }
    }
    println!("cases verify: {passed} passed, {failed} failed of {} cases in {}", index.cases.len(), dir.display());
    if index.cases.is_empty() {
        eprintln!("cases verify: the index holds no case: nothing was checked");
    }
    Ok(failed == 0 && !index.cases.is_empty())
}
