//! `harness cases verify`: the outputs a program wrote next to an export,
//! compared with the model's by the contract's rule; a missing or unreadable
//! output is a failure, never a pass.

use super::index::{CaseEntry, Index, FORMAT};
use super::npy;
use crate::registry::Primitive;
use crate::sweep::case::{failure_line, CaseId, Verdict};
use crate::sweep::raw::{self, Dtype};
use anyhow::{bail, Context, Result};
use std::path::Path;

/// The verdict of one exported case on the output found in `dir`.
pub fn verify_case(dir: &Path, case: &CaseEntry) -> Verdict {
    let contract = match Primitive::from_name(&case.primitive)
        .ok_or_else(|| format!("unknown primitive '{}'", case.primitive))
        .and_then(|p| raw::contract(p, &case.contract))
    {
        Ok(c) => c,
        Err(e) => return Verdict::fail("a known contract", e, "index"),
    };
    let dtype = contract.output.dtype;
    if Dtype::from_name(&case.output.dtype) != Some(dtype) {
        return Verdict::fail(dtype.name(), &case.output.dtype, "index output dtype");
    }
    let expected = match npy::read(&dir.join(&case.expected.file), dtype) {
        Ok(a) => a,
        Err(e) => return Verdict::fail("the expected file", e, "expected file"),
    };
    let path = dir.join(&case.output.file);
    if !path.exists() {
        return Verdict::fail(format!("{} written", case.output.file), "no file", "output file");
    }
    match npy::read(&path, dtype) {
        Ok(got) => contract.compare(&expected, &got),
        Err(e) => {
            Verdict::fail(format!("{} of {} {}", case.output.file, expected.count(), dtype.name()), e, "output file")
        }
    }
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
