//! The one error type of the model: every failure names the primitive (and, where it helps
//! reproduce the failure, the index, lane, row or value).

use serde::Serialize;
use thiserror::Error;

/// Every way a model primitive can refuse its input.
///
/// Errors are values, never panics: user input that breaks a contract (an empty argmax, a NaN
/// logit, decreasing segment offsets, an int64 intermediate that overflows in the tree order the
/// GPU uses) comes back as one of these variants. `Serialize` writes the variant name under
/// `"kind"` so fixtures can record expected errors.
#[derive(Debug, Clone, PartialEq, Error, Serialize)]
#[serde(tag = "kind")]
#[non_exhaustive]
pub enum ModelError {
    /// The primitive has no answer for zero elements (argmax, softmax of an empty row).
    #[error("{primitive}: empty input")]
    EmptyInput {
        /// The primitive that refused the input.
        primitive: &'static str,
    },
    /// A checked integer combine left its type (Signed 64-bit intermediate overflow); `detail`
    /// names the step of the schedule and the operands.
    #[error("{primitive}: Signed 64-bit intermediate overflow ({detail})")]
    Overflow {
        /// The primitive (or schedule) in which the overflowing combine happened.
        primitive: &'static str,
        /// Where in the schedule and which operands.
        detail: String,
    },
    /// A NaN or infinity where the contract wants a finite value (or, for softmax, a value that
    /// is not -inf/finite). `index` is the first offending index (flat index for row APIs).
    #[error("{primitive}: nonfinite value {value} at index {index}")]
    NonFinite {
        /// The primitive that refused the value.
        primitive: &'static str,
        /// First offending index (for row-major APIs: the flat index `row * cols + col`).
        index: usize,
        /// The offending value, widened to f64.
        value: f64,
    },
    /// Softmax rows with no unmasked logit; every such row is listed, in increasing order.
    #[error("softmax: rows with no unmasked logit: {rows:?}")]
    AllMasked {
        /// Every all-masked row index.
        rows: Vec<usize>,
    },
    /// Segment offsets that decrease, pass `n`, or are missing.
    #[error("segmented: bad offsets: {detail}")]
    BadOffsets {
        /// Which offset position and why.
        detail: String,
    },
    /// A shuffle in which a participating lane reads a lane that has exited (is not in the
    /// participation set): undefined on the GPU, so the model refuses it.
    #[error("warp shuffle: lane {lane} reads absent source lane {source_lane}")]
    AbsentLane {
        /// The reading (participating) lane.
        lane: usize,
        /// The absent lane it reads.
        source_lane: usize,
    },
    /// The warp result lives in lane 0, but lane 0 is not a participant.
    #[error("{primitive}: lane 0, which holds the result, does not participate")]
    NoResultLane {
        /// The primitive.
        primitive: &'static str,
    },
    /// A width, lane count or block size that the schedule does not support (for example a
    /// Blelloch width that is not a power of two, or a warp that is not 32 lanes).
    #[error("{primitive}: invalid width {width}: {detail}")]
    InvalidWidth {
        /// The primitive.
        primitive: &'static str,
        /// The width given.
        width: usize,
        /// What the schedule requires.
        detail: String,
    },
    /// More items than one instance of the schedule holds (for example more items than a block
    /// scan's width).
    #[error("{primitive}: {len} items exceed the limit of {limit}")]
    TooLarge {
        /// The primitive.
        primitive: &'static str,
        /// The number of items given.
        len: usize,
        /// The most the schedule holds.
        limit: usize,
    },
    /// A row-major buffer whose length is not `rows * cols`, or parallel slices of unequal
    /// length, or a flag that is not 0/1.
    #[error("{primitive}: bad shape: {detail}")]
    BadShape {
        /// The primitive.
        primitive: &'static str,
        /// What does not fit.
        detail: String,
    },
    /// A histogram specification outside the contract (bins outside 1..=4096, lower >= upper,
    /// nonfinite bounds, a scale that is not finite in f32).
    #[error("histogram: bad specification: {detail}")]
    BadHistogram {
        /// Why the specification is refused.
        detail: String,
    },
    /// A schedule that would reorder the inputs of a non-commutative operator.
    #[error("{primitive}: operator {operator} is not commutative; layout {layout} would reorder its inputs")]
    OrderNotPreserved {
        /// The schedule.
        primitive: &'static str,
        /// The operator's name.
        operator: &'static str,
        /// The refused layout.
        layout: &'static str,
    },
    /// A top-k sample that has no answer: `k = 0`, a temperature that is not finite and
    /// positive, a uniform outside `[0, 1)`, or a row with no finite logit (every value `-inf`).
    #[error("topk_sample: {detail}")]
    BadSample {
        /// Which row or parameter, and why.
        detail: String,
    },
    /// A generator asked for something it does not make (a float family from the integer
    /// generator, a condition number below 1).
    #[error("generator {generator}: {detail}")]
    BadGenerator {
        /// The generator function.
        generator: &'static str,
        /// Why the request is refused.
        detail: String,
    },
}

/// The name of the [`ModelError`] variant that `$error` is, among the listed ones
/// (every variant, or the match is not exhaustive): each name written once,
/// as `stringify!` spells it, which is also how serde's `kind` tag spells it.
macro_rules! variant_name {
    ($error:expr; $($variant:ident),+ $(,)?) => {
        match $error {
            $(ModelError::$variant { .. } => stringify!($variant),)+
        }
    };
}

impl ModelError {
    /// Re-attributes an overflow to the schedule that hit it: `Overflow` gets `primitive` and
    /// the `location` (step, index, lane) prefixed to its detail; every other variant is
    /// returned unchanged (they already name what they need).
    pub fn at(self, primitive: &'static str, location: impl std::fmt::Display) -> Self {
        match self {
            ModelError::Overflow { detail, .. } => {
                ModelError::Overflow { primitive, detail: format!("{location}: {detail}") }
            }
            other => other,
        }
    }

    /// The variant's name, as written under `"kind"` in fixtures.
    pub fn kind(&self) -> &'static str {
        variant_name! {
            self; EmptyInput, Overflow, NonFinite, AllMasked, BadOffsets, AbsentLane, NoResultLane, InvalidWidth,
            TooLarge, BadShape, BadHistogram, OrderNotPreserved, BadGenerator, BadSample
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_relocates_overflow_only() {
        let e = ModelError::Overflow { primitive: "SumI64", detail: "1 + 2".into() }.at("block_scan", "up 1, index 1");
        assert_eq!(e, ModelError::Overflow { primitive: "block_scan", detail: "up 1, index 1: 1 + 2".into() });
        let other = ModelError::EmptyInput { primitive: "argmax" };
        assert_eq!(other.clone().at("x", "y"), other);
    }

    #[test]
    fn serializes_kind_tag() {
        let e = ModelError::AllMasked { rows: vec![1, 3] };
        let v = serde_json::to_value(&e).expect("serializable");
        assert_eq!(v["kind"], "AllMasked");
        assert_eq!(v["rows"], serde_json::json!([1, 3]));
        assert_eq!(e.kind(), "AllMasked");
    }
}
