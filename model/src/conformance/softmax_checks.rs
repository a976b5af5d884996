//! The softmax block merge tree against the sequential state, f64 probabilities against the
//! exact reference, and masked-row reporting.

use super::compare::{holds, ok, same};
use super::data::{wrong_data, Data, SOFTMAX_ROWS};
use super::{Check, CheckOutcome, Mismatch};
use crate::softmax::{block_state, softmax, softmax_exact_f32, softmax_rows, softmax_state};
use crate::ModelError;

/// Widest row whose probabilities are also compared with the exact reference (the exact
/// reference costs ~2 µs per logit).
const EXACT_LIMIT: usize = 4099;

pub(super) fn block_tree(check: &Check, data: &Data) -> Result<CheckOutcome, Mismatch> {
    let Data::Softmax { data, cols } = data else {
        return Err(wrong_data(check));
    };
    let mut comparisons = 0;
    let mut masked = Vec::new();
    for (r, row) in data.chunks(*cols).enumerate() {
        let tree = ok(check, "block_state", block_state(row))?;
        let seq = ok(check, "softmax_state", softmax_state(row))?;
        comparisons += same(check, &format!("row {r} m"), &seq.m, &tree.m)?;
        let close = (tree.d - seq.d).abs() <= 1e-12 * seq.d.abs();
        comparisons +=
            holds(check, &format!("row {r} d within 1e-12 relative of {}", seq.d), close, || tree.d.to_string())?;
        if seq.is_empty() {
            masked.push(r);
            continue;
        }
        if *cols <= EXACT_LIMIT {
            let p = ok(check, "softmax", softmax(row))?;
            let exact = ok(check, "softmax_exact_f32", softmax_exact_f32(row))?;
            for (i, (g, e)) in p.iter().zip(&exact).enumerate() {
                if (g - e).abs() > 1e-11 * e.abs() + 1e-300 {
                    return Err(Mismatch {
                        check: check.describe(),
                        index: Some(r * cols + i),
                        expected: format!("exact probability {e:e} (1e-11 relative)"),
                        got: format!("{g:e}"),
                    });
                }
            }
            comparisons += p.len();
        }
    }
    let rows_result = softmax_rows(data, SOFTMAX_ROWS, *cols);
    let expected_error = if masked.is_empty() { None } else { Some(ModelError::AllMasked { rows: masked.clone() }) };
    same(check, "softmax_rows error", &expected_error, &rows_result.err())?;
    Ok(CheckOutcome { comparisons: comparisons + 1, note: format!("{} rows, masked rows {masked:?}", SOFTMAX_ROWS) })
}
