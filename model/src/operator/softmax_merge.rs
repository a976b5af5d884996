//! The online-softmax (max, normaliser) state merge as an operator.

use crate::softmax::{merge_states, SoftmaxState};

/// Merge of [`SoftmaxState`]s `(m, d)`: `m = max(ma, mb)`,
/// `d = da·e^(ma−m) + db·e^(mb−m)`, where a side with `m = -inf` contributes exactly 0
/// (no `-inf − -inf` NaN). Identity `(-inf, 0)`; merging two identities gives `(-inf, 0)`.
/// A state with `m` NaN or `+inf`, or `d` NaN/±inf/negative, is `ModelError::NonFinite`
/// (primitive `"SoftmaxMerge"`, index 0 for the left operand, 1 for the right).
/// Commutative exactly; associative within rounding (relative 1e-15-ish in f64).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SoftmaxMerge;

impl_operator!(SoftmaxMerge => SoftmaxState {
    name: "SoftmaxMerge",
    commutative: true,
    identity: SoftmaxState::EMPTY,
    combine(a, b) => merge_states(*a, *b)
});
