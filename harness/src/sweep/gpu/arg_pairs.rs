//! The answers of the arg reductions as the sweep names and digests them:
//! `argmax` / `argmin`, and the digest of `(value, index)` pairs, shared by
//! the host-made cases (`arg_reduce`), the streamed ones past 2^32
//! (`arg_reduce_streamed`) and the user-kernel contracts.

use crate::sweep::digest::Fingerprint;
use kernels::Extremum;

/// `argmax` or `argmin`: the answer part and the case-id infix.
pub(crate) fn extremum_name(e: Extremum) -> &'static str {
    match e {
        Extremum::Max => "argmax",
        Extremum::Min => "argmin",
    }
}

/// The digest of `(value, index)` pairs of int32 values.
pub(crate) fn pair_digest_i32(pairs: &[(i32, usize)]) -> String {
    Fingerprint::new()
        .i64s(&pairs.iter().map(|p| p.0 as i64).collect::<Vec<_>>())
        .u64s(pairs.iter().map(|p| p.1 as u64))
        .finish()
}

/// The digest of `(value, index)` pairs of f32 values.
pub(crate) fn pair_digest_f32(pairs: &[(f32, usize)]) -> String {
    Fingerprint::new()
        .f32s(&pairs.iter().map(|p| p.0).collect::<Vec<_>>())
        .u64s(pairs.iter().map(|p| p.1 as u64))
        .finish()
}
