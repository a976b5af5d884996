//! The CPU conformance sweep: every hardware-scope model against the direct definition, and
//! the laws of the other primitives, over the boundary sizes, random sizes and every data
//! family. The harness runs [`catalogue`] (in parallel, one [`Check`] per task) and reports
//! each [`Mismatch`] with primitive, algorithm, size, family, seed and first bad index.

mod compare;
mod data;
mod float_reduce_checks;
mod kind;
mod law_checks;
mod reduce_checks;
mod scan_checks;
mod softmax_checks;

use thiserror::Error;

pub use kind::CheckKind;

use crate::fixtures::{input_seed, BOUNDARY_SIZES};
use crate::generators::Rng;

/// Seed of the random sizes in [`catalogue`].
pub const CATALOGUE_SEED: u64 = 0x5052_494d_4c41_4221;

/// One check: which model, which algorithm, which input (size, family, seed). Build it with
/// [`Check::new`] or take it from [`catalogue`]; `run` regenerates the input from
/// `(family, size, seed)`, so a failure reproduces from these five fields.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Check {
    /// Primitive, e.g. `"reduce"`, `"scan"`, `"softmax"`.
    pub primitive: String,
    /// Algorithm or law, e.g. `"block_reduce_blocked"`, `"device_scan"`, `"laws"`.
    pub algorithm: String,
    /// Input size (row width for softmax).
    pub size: usize,
    /// Data family name (`generators::DataFamily::name`).
    pub family: String,
    /// Input seed.
    pub seed: u64,
}

/// What a passing check did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckOutcome {
    /// Number of values compared.
    pub comparisons: usize,
    /// Short human note (e.g. passes, levels, achieved condition).
    pub note: String,
}

/// A failing check: the check, the first mismatching index (`None` for a scalar result or a
/// refused check), and the expected and actual values as text.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{check}: first mismatch at index {index:?}: expected {expected}, got {got}")]
pub struct Mismatch {
    /// [`Check::describe`] of the failing check.
    pub check: String,
    /// First mismatching index, if the output is an array.
    pub index: Option<usize>,
    /// Expected value (the direct definition or the law).
    pub expected: String,
    /// Value the model under test produced (or its error).
    pub got: String,
}

impl Check {
    /// A check of `primitive`/`algorithm` on `family` at `size` from `seed`.
    pub fn new(primitive: &str, algorithm: &str, size: usize, family: &str, seed: u64) -> Check {
        Check {
            primitive: primitive.to_string(),
            algorithm: algorithm.to_string(),
            size,
            family: family.to_string(),
            seed,
        }
    }

    /// `"<primitive>/<algorithm> size=<n> family=<family> seed=<seed>"`.
    pub fn describe(&self) -> String {
        format!("{}/{} size={} family={} seed={}", self.primitive, self.algorithm, self.size, self.family, self.seed)
    }

    /// Runs the check. `Err(Mismatch)` when the model under test disagrees with the direct
    /// definition or a law fails, and also when the check itself cannot run (unknown
    /// primitive/algorithm, a family or size it does not apply to, a model error where a
    /// value was expected) — then `index` is `None` and `got` says why.
    pub fn run(&self) -> Result<CheckOutcome, Mismatch> {
        let kind = CheckKind::from_names(&self.primitive, &self.algorithm)
            .ok_or_else(|| self.refused("a known primitive/algorithm pair"))?;
        if !kind.applies_to(&self.family, self.size) {
            return Err(self.refused(&format!("a family and size {} applies to", kind.algorithm())));
        }
        let data = data::generate(self)?;
        kind.run(self, &data)
    }

    fn refused(&self, wanted: &str) -> Mismatch {
        Mismatch { check: self.describe(), index: None, expected: wanted.to_string(), got: "check refused".to_string() }
    }
}

fn checks_for(sizes: &[usize], seed_of: &mut dyn FnMut(&str, usize) -> u64) -> Vec<Check> {
    let mut out = Vec::new();
    for kind in CheckKind::ALL {
        for family in kind.families() {
            for &n in sizes {
                if kind.applies_to(&family, n) {
                    let seed = seed_of(&family, n);
                    out.push(Check::new(kind.primitive(), kind.algorithm(), n, &family, seed));
                }
            }
        }
    }
    out
}

/// The standard sweep: every check kind × every family it applies to × the boundary sizes
/// (1, 31, 32, 33, 255, 256, 257, 511, 512, 513, 4099, 262,144, 262,145; softmax also
/// 131,072 columns) plus random sizes drawn from [`CATALOGUE_SEED`], each kind limited to the
/// sizes it models. Input seeds are the fixtures' `input_seed(family, size)`. Deterministic.
pub fn catalogue() -> Vec<Check> {
    catalogue_with_seed(CATALOGUE_SEED, 6)
}

/// [`catalogue`]'s boundary sizes plus `random_sizes` sizes drawn from `seed` (half below
/// 1100, half up to 300,000); boundary inputs use `input_seed`, random ones seeds drawn from
/// `seed`. Print `seed` with any failure.
pub fn catalogue_with_seed(seed: u64, random_sizes: usize) -> Vec<Check> {
    let mut sizes: Vec<usize> = BOUNDARY_SIZES.to_vec();
    sizes.push(131_072);
    let mut rng = Rng::new(seed);
    let random: Vec<usize> =
        (0..random_sizes).map(|i| if i % 2 == 0 { 1 + rng.index(1100) } else { 1 + rng.index(300_000) }).collect();
    let mut all = checks_for(&sizes, &mut |family, n| input_seed(family, n));
    let mut seeds = Rng::new(seed ^ 0x9e37_79b9_7f4a_7c15);
    all.extend(checks_for(&random, &mut |_, _| seeds.next_u64()));
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_and_inapplicable_checks_are_refused() {
        let e = Check::new("reduce", "nope", 3, "small_ints", 1).run().unwrap_err();
        assert_eq!(e.index, None);
        let e = Check::new("reduce", "warp_reduce", 33, "small_ints", 1).run().unwrap_err();
        assert_eq!(e.got, "check refused");
        let e = Check::new("reduce", "warp_reduce", 3, "no_such_family", 1).run().unwrap_err();
        assert_eq!(e.got, "check refused");
    }

    #[test]
    fn catalogue_is_deterministic_and_covers_every_kind() {
        let a = catalogue();
        assert_eq!(a, catalogue());
        for kind in CheckKind::ALL {
            assert!(a.iter().any(|c| c.algorithm == kind.algorithm() && c.primitive == kind.primitive()));
        }
        for n in [262_144usize, 262_145] {
            assert!(a.iter().any(|c| c.algorithm == "device_scan" && c.size == n));
        }
    }

    #[test]
    fn a_small_sample_of_the_catalogue_passes() {
        // The whole catalogue runs in the release-mode test in tests/; here one of each kind
        // at a small size.
        for kind in CheckKind::ALL {
            for family in kind.families() {
                for n in [1usize, 33] {
                    if kind.applies_to(&family, n) {
                        let c = Check::new(kind.primitive(), kind.algorithm(), n, &family, input_seed(&family, n));
                        if let Err(m) = c.run() {
                            panic!("{m}");
                        }
                    }
                }
            }
        }
    }
}
