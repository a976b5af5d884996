//! The (m, d) state: running maximum and sum of exponentials relative to it.

use serde::Serialize;

use crate::scalar::Scalar;
use crate::ModelError;

/// Online-softmax state over a set of logits: `m` = their maximum, `d` = Σ e^(x − m).
/// The empty set (or only masked logits) is `EMPTY = (-inf, 0)`, the merge identity.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SoftmaxState {
    /// Running maximum (`-inf` when nothing unmasked was seen).
    pub m: f64,
    /// Normaliser Σ e^(x − m) (0 when empty).
    pub d: f64,
}

impl SoftmaxState {
    /// The identity state `(-inf, 0)`.
    pub const EMPTY: SoftmaxState = SoftmaxState { m: f64::NEG_INFINITY, d: 0.0 };

    /// The state of one logit: `(x, 1)`, or `EMPTY` for a masked `-inf`. NaN or `+inf` →
    /// `ModelError::NonFinite` (primitive `"softmax"`, index 0).
    pub fn from_logit(x: f64) -> Result<SoftmaxState, ModelError> {
        if x.is_nan() || x == f64::INFINITY {
            return Err(ModelError::NonFinite { primitive: "softmax", index: 0, value: x });
        }
        if x == f64::NEG_INFINITY {
            return Ok(SoftmaxState::EMPTY);
        }
        Ok(SoftmaxState { m: x, d: 1.0 })
    }

    /// `true` when no unmasked logit contributed (`m == -inf`).
    pub fn is_empty(&self) -> bool {
        self.m == f64::NEG_INFINITY
    }
}

fn validate(state: &SoftmaxState, operand: usize) -> Result<(), ModelError> {
    let bad_m = state.m.is_nan() || state.m == f64::INFINITY;
    let bad_d = !state.d.is_finite() || state.d < 0.0;
    if bad_m || bad_d {
        return Err(ModelError::NonFinite {
            primitive: "SoftmaxMerge",
            index: operand,
            value: if bad_m { state.m } else { state.d },
        });
    }
    Ok(())
}

/// Merges two states: `m = max(ma, mb)`, `d = da·e^(ma−m) + db·e^(mb−m)` in f64, where a
/// side with `m = -inf` contributes exactly 0 and two empty sides give `(-inf, 0)` (no NaN).
/// Errors: `NonFinite` (primitive `"SoftmaxMerge"`, index 0 = left, 1 = right) for `m` NaN or
/// `+inf`, or `d` nonfinite or negative.
pub fn merge_states(a: SoftmaxState, b: SoftmaxState) -> Result<SoftmaxState, ModelError> {
    validate(&a, 0)?;
    validate(&b, 1)?;
    let m = a.m.max(b.m);
    if m == f64::NEG_INFINITY {
        return Ok(SoftmaxState::EMPTY);
    }
    let part = |s: &SoftmaxState| {
        if s.is_empty() {
            0.0
        } else {
            s.d * (s.m - m).exp()
        }
    };
    Ok(SoftmaxState { m, d: part(&a) + part(&b) })
}

/// The state of a row, folded left to right with [`merge_states`] (the one-pass online
/// normaliser). Masked `-inf` logits are skipped; an empty or all-masked row gives `EMPTY`
/// (the *softmax* of such a row is the error, not its state). NaN/`+inf` →
/// `NonFinite { primitive: "softmax", index }` at the first offending index.
pub fn softmax_state<T: Scalar>(row: &[T]) -> Result<SoftmaxState, ModelError> {
    let mut state = SoftmaxState::EMPTY;
    for (index, x) in row.iter().enumerate() {
        let logit = SoftmaxState::from_logit(x.to_f64()).map_err(|_| ModelError::NonFinite {
            primitive: "softmax",
            index,
            value: x.to_f64(),
        })?;
        state = merge_states(state, logit)?;
    }
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const X: [f64; 8] = [3.0, -1.0, 4.0, 1.0, 5.0, -9.0, 2.0, 6.0];

    #[test]
    fn seed_states_and_merge() {
        let left = softmax_state(&X[..4]).unwrap();
        let right = softmax_state(&X[4..]).unwrap();
        assert_eq!(left.m, 4.0);
        assert_eq!(format!("{:.6}", left.d), "1.424404");
        assert_eq!(right.m, 6.0);
        assert_eq!(format!("{:.6}", right.d), "1.386195");
        // The left contribution rescaled to the common maximum 6 is about 0.192772.
        assert_eq!(format!("{:.6}", left.d * (-2f64).exp()), "0.192772");
        let merged = merge_states(left, right).unwrap();
        assert_eq!(merged.m, 6.0);
        assert_eq!(format!("{:.6}", merged.d), "1.578968");
        let direct: f64 = X.iter().map(|v| (v - 6.0).exp()).sum();
        assert!((merged.d - direct).abs() <= 1e-15 * direct);
    }

    #[test]
    fn two_empty_states_merge_to_empty_without_nan() {
        let e = merge_states(SoftmaxState::EMPTY, SoftmaxState::EMPTY).unwrap();
        assert_eq!(e, SoftmaxState::EMPTY);
        let one = SoftmaxState { m: 2.0, d: 1.0 };
        assert_eq!(merge_states(SoftmaxState::EMPTY, one).unwrap(), one);
        assert_eq!(merge_states(one, SoftmaxState::EMPTY).unwrap(), one);
    }

    #[test]
    fn nonfinite_states_and_logits_rejected() {
        let bad = SoftmaxState { m: f64::INFINITY, d: 1.0 };
        assert!(matches!(merge_states(SoftmaxState::EMPTY, bad), Err(ModelError::NonFinite { index: 1, .. })));
        let e = softmax_state(&[1.0, f64::NAN, f64::INFINITY]).unwrap_err();
        assert!(matches!(e, ModelError::NonFinite { primitive: "softmax", index: 1, .. }));
        assert_eq!(softmax_state::<f64>(&[]).unwrap(), SoftmaxState::EMPTY);
        assert_eq!(softmax_state(&[f64::NEG_INFINITY, f64::NEG_INFINITY]).unwrap(), SoftmaxState::EMPTY);
    }

    fn state() -> impl Strategy<Value = SoftmaxState> {
        prop_oneof![
            1 => Just(SoftmaxState::EMPTY),
            6 => (-200.0f64..200.0, 0.5f64..1000.0).prop_map(|(m, d)| SoftmaxState { m, d }),
        ]
    }

    fn close(a: SoftmaxState, b: SoftmaxState) -> bool {
        a.m == b.m && (a.d - b.d).abs() <= 1e-13 * a.d.abs().max(b.d.abs())
    }

    proptest! {
        #[test]
        fn merge_associative_and_order_independent_within_rounding(a in state(), b in state(), c in state()) {
            let l = merge_states(merge_states(a, b)?, c)?;
            let r = merge_states(a, merge_states(b, c)?)?;
            prop_assert!(close(l, r), "{:?} vs {:?}", l, r);
            let permuted = merge_states(merge_states(c, a)?, b)?;
            prop_assert!(close(l, permuted), "{:?} vs {:?}", l, permuted);
            prop_assert_eq!(merge_states(a, b)?, merge_states(b, a)?);
        }

        #[test]
        fn state_of_concatenation_is_merge_of_states(row in prop::collection::vec(-50.0f64..50.0, 0..40), cut in 0usize..40) {
            let cut = cut.min(row.len());
            let whole = softmax_state(&row)?;
            let merged = merge_states(softmax_state(&row[..cut])?, softmax_state(&row[cut..])?)?;
            prop_assert!(close(whole, merged), "{:?} vs {:?}", whole, merged);
        }
    }
}
