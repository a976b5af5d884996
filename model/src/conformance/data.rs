//! Regenerates a check's input from `(family, size, seed)`.

use super::{Check, Mismatch};
use crate::generators::{affine_maps, ill_conditioned_f32, ints, softmax_rows, uniform_f32, DataFamily};
use crate::operator::AffineMap;

/// Rows per softmax check.
pub(super) const SOFTMAX_ROWS: usize = 2;

/// A regenerated input.
pub(super) enum Data {
    Ints(Vec<i32>),
    Affine(Vec<AffineMap>),
    /// f32 values and, for ill-conditioned families, the target condition.
    Floats(Vec<f32>, Option<f64>),
    /// Row-major logits, `SOFTMAX_ROWS` rows of `cols`.
    Softmax {
        data: Vec<f32>,
        cols: usize,
    },
}

pub(super) fn generate(check: &Check) -> Result<Data, Mismatch> {
    let refuse =
        |why: String| Mismatch { check: check.describe(), index: None, expected: "a generated input".into(), got: why };
    let family = DataFamily::from_name(&check.family).map_err(|e| refuse(e.to_string()))?;
    let n = check.size;
    Ok(match family {
        DataFamily::AffineMaps => Data::Affine(affine_maps(n, check.seed)),
        DataFamily::UniformFloat => Data::Floats(uniform_f32(n, check.seed), None),
        DataFamily::IllConditioned { condition } => {
            let (v, _) = ill_conditioned_f32(n, condition, check.seed).map_err(|e| refuse(e.to_string()))?;
            Data::Floats(v, Some(condition))
        }
        DataFamily::SoftmaxRows { mask } => Data::Softmax {
            data: softmax_rows(SOFTMAX_ROWS, n, check.seed, mask).map_err(|e| refuse(e.to_string()))?,
            cols: n,
        },
        int => Data::Ints(ints(int, n, check.seed).map_err(|e| refuse(e.to_string()))?),
    })
}

/// Refusal for data of the wrong shape for a kind (a bug in `CheckKind::families`).
pub(super) fn wrong_data(check: &Check) -> Mismatch {
    Mismatch {
        check: check.describe(),
        index: None,
        expected: "input data of the family this check runs on".into(),
        got: "other data".into(),
    }
}
