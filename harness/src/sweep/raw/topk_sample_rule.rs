//! The sampler's rule ([`Rule::TopkSample`]): each row's draw judged against the model's
//! exact distribution of that row, at float32 precision
//! ([`model::topk_sample::Precision::Float32`]): the drawn column among the row's top k with a
//! nonzero probability, `u` in its CDF interval within `(2k + 8) 2^-24`, and, where the
//! contract writes one, its probability within `(2|x| + 2k + 8) 2^-24` relative.
//!
//! [`Rule::TopkSample`]: super::Rule::TopkSample

use super::{Array, Contract, RawCase, Value};
use crate::sweep::case::Verdict;
use model::topk_sample::{distributions, Precision, RowDistribution, SampleSpec};

/// The parameter `name` of `case` (the contract lists it).
fn param(contract: &Contract, case: &RawCase, name: &str) -> Option<Value> {
    let at = contract.params.iter().position(|p| p.name == name)?;
    case.params.get(at).copied()
}

/// A sampler case's data: logits, uniforms, shape and spec.
struct SampleCase<'a> {
    logits: &'a [f32],
    uniforms: &'a [f32],
    shape: (usize, usize),
    spec: SampleSpec,
}

fn sample_case<'a>(contract: &Contract, case: &'a RawCase) -> Result<SampleCase<'a>, Verdict> {
    let bad = |what: &str| Verdict::fail(what, "other data", "case data");
    let (Some(Array::Float32(logits)), Some(Array::Float32(uniforms))) = (case.inputs.first(), case.inputs.get(1))
    else {
        return Err(bad("float32 logits and uniforms"));
    };
    let size = |name| param(contract, case, name).and_then(Value::as_int).and_then(|v| usize::try_from(v).ok());
    let [Some(rows), Some(cols), Some(k)] = ["rows", "cols", "k"].map(size) else {
        return Err(bad("parameters rows, cols and k"));
    };
    let Some(Value::Float32(temperature)) = param(contract, case, "temperature") else {
        return Err(bad("a float32 parameter temperature"));
    };
    Ok(SampleCase { logits, uniforms, shape: (rows, cols), spec: SampleSpec { k, temperature } })
}

/// Each row's distribution, or a failing verdict (the case data is the model's own).
fn rows_of(c: &SampleCase) -> Result<Vec<RowDistribution>, Verdict> {
    distributions(c.logits, c.shape, c.spec, c.uniforms).map_err(|e| Verdict::fail("a model result", e, "model"))
}

/// The outputs a user's sampler wrote: its columns and, where the contract has them, its
/// probabilities; a failing verdict for the wrong types or lengths.
fn outputs(got: &[Array], rows: usize) -> Result<(&[i64], Option<&[f32]>), Verdict> {
    let Some(Array::Int64(columns)) = got.first() else {
        return Err(Verdict::fail("int64 samples", "another type", "output type"));
    };
    let probabilities = match got.get(1) {
        None => None,
        Some(Array::Float32(p)) => Some(p.as_slice()),
        Some(_) => return Err(Verdict::fail("float32 probabilities", "another type", "output type")),
    };
    if columns.len() != rows || probabilities.is_some_and(|p| p.len() != rows) {
        let lengths = format!("{} samples, {:?} probabilities", columns.len(), probabilities.map(<[f32]>::len));
        return Err(Verdict::fail(format!("{rows} of each"), lengths, "output length"));
    }
    Ok((columns, probabilities))
}

/// The verdict on a user's draws.
pub fn compare(contract: &Contract, case: &RawCase, got: &[Array]) -> Verdict {
    let judged = sample_case(contract, case).and_then(|c| {
        let rows = rows_of(&c)?;
        let (columns, probabilities) = outputs(got, rows.len())?;
        for (r, row) in rows.iter().enumerate() {
            let u = c.uniforms[r];
            if let Err(why) = row.judge(u, columns[r], probabilities.map(|p| p[r]), Precision::Float32) {
                let want = row.columns[row.draw(u)];
                return Err(Verdict::fail_at(r, want, columns[r], &format!("draw of row {r} (u = {u:e}): {why}")));
            }
        }
        Ok(())
    });
    judged.err().unwrap_or(Verdict::Pass)
}

/// Which rows fail (every output of a sampler is one element a row); None when the data is
/// not a sampler's.
pub fn failing_rows(contract: &Contract, case: &RawCase, got: &[Array]) -> Option<Vec<bool>> {
    let c = sample_case(contract, case).ok()?;
    let rows = rows_of(&c).ok()?;
    let (columns, probabilities) = outputs(got, rows.len()).ok()?;
    let judge = |(r, row): (usize, &RowDistribution)| {
        row.judge(c.uniforms[r], columns[r], probabilities.map(|p| p[r]), Precision::Float32).is_err()
    };
    Some(rows.iter().enumerate().map(judge).collect())
}
