//! A sweep case, its verdict, and the one-line failure report that
//! reproduces it (primitive, variant, size, seed, index, expected, got).

use serde::{Deserialize, Serialize};

/// What identifies one check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseId {
    /// Primitive, e.g. "scan".
    pub primitive: String,
    /// Variant with its sub-kind, e.g. "decoupled_lookback.exclusive.i32" (no spaces).
    pub variant: String,
    /// Size as printed: "262145", or "64x4097" for rows x columns.
    pub size: String,
    /// Number of input elements.
    pub n: usize,
    /// Input data family, e.g. "small_ints".
    pub family: String,
    /// Seed of the input.
    pub seed: u64,
}

impl CaseId {
    /// `primitive variant size`: the sanitizer case marker.
    pub fn marker(&self) -> String {
        format!("{} {} {}", self.primitive, self.variant, self.size)
    }

    /// The command that reruns exactly this case in a run of seed
    /// `run_seed`. A case's input seed (`self.seed`) is derived from the
    /// run's seed, the primitive, the size and the family alone, so the same
    /// run seed with only this size and variant regenerates the same input
    /// (passing the case seed itself as `--seed` would derive another).
    pub fn repro(&self, run_seed: u64) -> String {
        format!(
            "harness sweep --gpu-only --primitive {} --variant {} --sizes {} --seed {:#x}",
            self.primitive, self.variant, self.n, run_seed
        )
    }
}

/// Where and how a result differs from the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mismatch {
    /// First differing element (None for a scalar result or an error mismatch).
    pub index: Option<usize>,
    /// What the model says.
    pub expected: String,
    /// What the GPU gave.
    pub got: String,
    /// Extra context (which check: "output", "poison tail", "error kind", ...).
    pub what: String,
}

/// The outcome of one case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "lowercase")]
pub enum Verdict {
    /// Every element matched.
    Pass,
    /// A mismatch.
    Fail(Mismatch),
    /// Not run, with the reason.
    Skipped {
        /// Why.
        reason: String,
    },
}

impl Verdict {
    /// A failure with an element index.
    pub fn fail_at(index: usize, expected: impl ToString, got: impl ToString, what: &str) -> Verdict {
        Verdict::Fail(Mismatch {
            index: Some(index),
            expected: expected.to_string(),
            got: got.to_string(),
            what: what.into(),
        })
    }

    /// A failure without an index (scalars, errors).
    pub fn fail(expected: impl ToString, got: impl ToString, what: &str) -> Verdict {
        Verdict::Fail(Mismatch { index: None, expected: expected.to_string(), got: got.to_string(), what: what.into() })
    }

    /// Whether it passed.
    pub fn passed(&self) -> bool {
        matches!(self, Verdict::Pass)
    }
}

/// A case with its verdict and timing.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CaseResult {
    /// The case.
    #[serde(flatten)]
    pub id: CaseId,
    /// The verdict.
    #[serde(flatten)]
    pub verdict: Verdict,
    /// Wall-clock milliseconds (generation, GPU, model and comparison).
    pub millis: u64,
    /// Digest of the input the kernel was given (GPU cases).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_digest: Option<String>,
    /// Digest of the model's expected output it was compared with (GPU cases).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_digest: Option<String>,
}

impl CaseResult {
    /// A result with no digests (model checks, sharded cases).
    pub fn new(id: CaseId, verdict: Verdict, millis: u64) -> CaseResult {
        CaseResult { id, verdict, millis, input_digest: None, expected_digest: None }
    }

    /// The same result with the digests of its input and reference.
    pub fn with_digest(mut self, digest: Option<crate::sweep::digest::CaseDigest>) -> CaseResult {
        if let Some(d) = digest {
            self.input_digest = Some(d.input_digest);
            self.expected_digest = Some(d.expected_digest);
        }
        self
    }
}

impl CaseId {
    /// The key that names this case in a catalogue and in a receipt.
    pub fn key(&self) -> String {
        format!("{} {} {} {} {:#x}", self.primitive, self.variant, self.size, self.family, self.seed)
    }
}

/// The one-line report: `primitive/variant n=size seed=0x.. family=.. index=.. expected=.. got=..`.
pub fn failure_line(id: &CaseId, mismatch: &Mismatch) -> String {
    let index = mismatch.index.map(|i| i.to_string()).unwrap_or_else(|| "-".into());
    format!(
        "{}/{} n={} seed={:#x} family={} {}index={} expected={} got={}",
        id.primitive,
        id.variant,
        id.size,
        id.seed,
        id.family,
        if mismatch.what.is_empty() { String::new() } else { format!("check={} ", mismatch.what) },
        index,
        mismatch.expected,
        mismatch.got
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_line_names_everything_needed_to_reproduce_it() {
        let id = CaseId {
            primitive: "scan".into(),
            variant: "blelloch.exclusive.i32".into(),
            size: "262145".into(),
            n: 262_145,
            family: "small_ints".into(),
            seed: 0x5eed,
        };
        let Verdict::Fail(m) = Verdict::fail_at(262_144, 7, 0, "output") else { unreachable!() };
        assert_eq!(
            failure_line(&id, &m),
            "scan/blelloch.exclusive.i32 n=262145 seed=0x5eed family=small_ints check=output index=262144 expected=7 got=0"
        );
        assert_eq!(id.marker(), "scan blelloch.exclusive.i32 262145");
    }
}
