//! What a top-k selects: `k` per row, the largest or the smallest, and where NaN sits.

/// Where NaN sits in a top-k's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TopkNan {
    /// A NaN anywhere is an error naming its first flat index (the default).
    #[default]
    Reject,
    /// Every NaN ranks above every number (`+inf` included), NaNs equal to each other: the
    /// first of a top-k, the last of a bottom-k (as `torch.topk` orders them).
    AboveAll,
}

/// What a top-k selects. The order is total: value (descending for the largest, ascending for
/// the smallest), then index ascending among equal values; `-0.0` equals `+0.0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopkSpec {
    /// Items per row (0 gives empty outputs).
    pub k: usize,
    /// The largest values (a top-k) or the smallest (a bottom-k).
    pub largest: bool,
    /// Where NaN sits.
    pub nan: TopkNan,
}

/// What a top-k sampler draws from: the `k` largest logits of a row, weighted by
/// `exp((logit - max) / temperature)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleSpec {
    /// Survivors per row (at least 1).
    pub k: usize,
    /// The softmax temperature (finite, above 0).
    pub temperature: f32,
}
