//! Digests of a case's input and of the model's expected output: what a
//! receipt records next to each verdict and what the receipt gate
//! recomputes on the CPU, so that a receipt proves *which* inputs were run
//! and *which* answers they were compared with, not only that something ran.
//!
//! A digest is a [`Fingerprint`] (`model::digest`): BLAKE3 over
//! little-endian bytes of typed parts, each preceded by its tag and length.

use serde::{Deserialize, Serialize};

/// The digests of one case: its input, and the reference it is judged against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseDigest {
    /// Digest of every input the kernel is given (data, offsets, flags, shape).
    pub input_digest: String,
    /// Digest of the model's expected output (exact values, or the exact
    /// value and the declared bound for float results).
    pub expected_digest: String,
}

pub use model::digest::Fingerprint;
