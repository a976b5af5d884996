//! The sweep's catalogues: the model's hardware-scope checks against the
//! direct definitions (CPU, [`cpu`]) and every GPU kernel variant's cases at
//! the boundary, random and large sizes ([`gpu`]), what a plan selects, and
//! how a case's verdict is compared and digested. `harness sweep` runs
//! them ([`runner`]).

pub mod case;
pub mod compare;
pub mod cpu;
pub mod digest;
pub mod float_check;
pub mod gpu;
pub mod raw;
pub mod runner;
pub mod sizes;
pub mod summary;

use crate::registry::primitive::Primitive;
use anyhow::{bail, Result};

/// What a sweep covers.
#[derive(Debug, Clone)]
pub struct SweepPlan {
    /// Seed of every input.
    pub seed: u64,
    /// Sizes to visit.
    pub sizes: Vec<usize>,
    /// Fewer and smaller cases.
    pub quick: bool,
    /// Primitive filter (empty = all).
    pub primitives: Vec<Primitive>,
    /// Variant substring filter (empty = all).
    pub variants: Vec<String>,
    /// Only the first data family per size (sanitizer runs).
    pub one_family: bool,
}

impl SweepPlan {
    /// The whole GPU catalogue for `seed`: what a full sweep runs and what
    /// the receipt gate requires a receipt to hold.
    pub fn full(seed: u64) -> SweepPlan {
        SweepPlan {
            seed,
            sizes: sizes::sweep_sizes(&[], seed, false, true),
            quick: false,
            primitives: vec![],
            variants: vec![],
            one_family: false,
        }
    }

    /// Every case of `primitive` at exactly `sizes`, every data family (the
    /// catalogue `harness check` and `harness cases` hand to user kernels).
    pub fn of_primitive(primitive: Primitive, sizes: &[usize], seed: u64) -> SweepPlan {
        SweepPlan {
            seed,
            sizes: sizes.to_vec(),
            quick: false,
            primitives: vec![primitive],
            variants: vec![],
            one_family: false,
        }
    }

    /// The cases a sanitizer job of `primitive` runs: the given sizes, one
    /// data family each (the sanitizers check memory and ordering, which do
    /// not depend on the values).
    pub fn sanitizer(primitive: Primitive, sizes: &[usize], seed: u64, variants: &[String]) -> SweepPlan {
        SweepPlan {
            seed,
            sizes: sizes.to_vec(),
            quick: true,
            primitives: vec![primitive],
            variants: variants.to_vec(),
            one_family: true,
        }
    }

    /// Whether `primitive` is selected.
    pub fn wants(&self, primitive: Primitive) -> bool {
        self.primitives.is_empty() || self.primitives.contains(&primitive)
    }

    /// Whether the primitive named `primitive` is selected.
    pub fn wants_primitive(&self, primitive: &str) -> bool {
        Primitive::from_name(primitive).is_some_and(|p| self.wants(p))
    }

    /// Whether `variant` is selected.
    pub fn wants_variant(&self, variant: &str) -> bool {
        self.variants.is_empty() || self.variants.iter().any(|v| variant.contains(v.as_str()))
    }
}

/// A seed drawn from the clock and the process id.
pub fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    (nanos as u64) ^ ((std::process::id() as u64) << 32)
}

pub use crate::registry::primitive::DEVICE_BYTES_PER_ELEMENT;

/// Rejects sizes no sweep can use: zero. A size past what a primitive takes
/// or what the device holds is not refused here: its cases are skipped, and
/// counted so, with the reason ([`out_of_reach`]).
pub fn check_sizes(sizes: &[usize]) -> Result<()> {
    if sizes.contains(&0) {
        bail!("--sizes: 0 is not a size: every size must be at least 1 (empty inputs are contract cases of their own)");
    }
    Ok(())
}

/// Why a case of `primitive` at `n` items cannot run on a device of
/// `device_memory` bytes, if it cannot: `n` past the largest its kernels
/// take ([`Primitive::max_len`]), or its buffers past the device's whole
/// memory at [`Primitive::device_bytes_per_item`]. Such a case is skipped
/// before its input is made (a host input of 2^32 items is gigabytes),
/// never run and never passed; one that fits the device but not its free
/// memory at the time is skipped by its own run, with the numbers.
pub fn out_of_reach(primitive: Primitive, n: usize, device_memory: usize) -> Option<String> {
    let name = primitive.name();
    if n > primitive.max_len() {
        let why = primitive.max_len_reason();
        return Some(format!("{name} takes n up to {} ({why}), not {n}", primitive.max_len()));
    }
    let bytes = n.saturating_mul(primitive.device_bytes_per_item());
    (bytes > device_memory).then(|| {
        format!(
            "skipped for device memory: {name} n={n} needs up to {} ({} bytes an item), more than the device's {}",
            kernels::error::gigabytes(bytes as u64),
            primitive.device_bytes_per_item(),
            kernels::error::gigabytes(device_memory as u64)
        )
    })
}

#[cfg(test)]
mod reach_tests {
    use super::*;

    const H100: usize = 85_000_000_000;
    const H200: usize = 150_000_000_000;
    const PAST_2_32: usize = (1 << 32) + 333;
    const PAST_2_33: usize = (1 << 33) + 555;

    /// Within the primitive's limit and the device's memory: run.
    #[test]
    fn sizes_that_fit_are_in_reach() {
        for primitive in Primitive::ALL {
            assert_eq!(out_of_reach(primitive, 1 << 28, H100), None, "{primitive:?}");
            assert_eq!(out_of_reach(primitive, u32::MAX as usize, H200), None, "{primitive:?}");
        }
        assert_eq!(out_of_reach(Primitive::Reduce, PAST_2_33, H100), None);
        assert_eq!(out_of_reach(Primitive::Scan, PAST_2_32, H100), None, "51.6 GB fits an 85 GB card");
        assert_eq!(out_of_reach(Primitive::Scan, PAST_2_33, H200), None);
    }

    /// Past 2^32 every primitive of 32-bit sizes is skipped naming its limit; the reduce, the
    /// scan, the arg reductions, the softmax, the histogram, the segmented reduction and the
    /// compaction take 64-bit sizes up to their plans' limit, the float sums up to where their
    /// large cases' family stays exact (2^33 + 2^32, both large-offset sizes included).
    #[test]
    fn sizes_past_a_primitive_s_limit_name_it() {
        let sixty_four = [
            Primitive::Reduce,
            Primitive::Scan,
            Primitive::ArgReduce,
            Primitive::Softmax,
            Primitive::Histogram,
            Primitive::SegmentedReduce,
            Primitive::Compact,
            Primitive::FloatReduce,
            Primitive::ExactSum,
        ];
        for primitive in Primitive::ALL {
            let reason = out_of_reach(primitive, PAST_2_32, H200);
            match primitive {
                p if sixty_four.contains(&p) => {
                    assert_eq!(reason, None, "{primitive:?}");
                    assert_eq!(out_of_reach(primitive, PAST_2_33, H200), None, "{primitive:?}");
                }
                _ => {
                    let reason = reason.unwrap_or_else(|| panic!("{primitive:?} has 32-bit sizes"));
                    let want = format!(
                        "{} takes n up to 4294967295 (32-bit sizes on the device), not 4294967629",
                        primitive.name()
                    );
                    assert_eq!(reason, want);
                }
            }
        }
        let past = kernels::reduce::MAX_LEN + 1;
        let reason = out_of_reach(Primitive::Reduce, past, usize::MAX).expect("past the reduce's limit");
        assert!(reason.contains("(its plans' limit)") && reason.contains(&past.to_string()), "{reason}");
        let past = model::generators::SPARSE_EXACT_MAX_LEN + 1;
        for primitive in [Primitive::FloatReduce, Primitive::ExactSum] {
            let reason = out_of_reach(primitive, past, usize::MAX).expect("past the exact family");
            assert!(reason.contains("no longer exact in f32") && reason.contains(&past.to_string()), "{reason}");
        }
        assert_eq!(out_of_reach(Primitive::FloatReduce, PAST_2_33, H100), None, "34.4 GB of f32 fits an 85 GB card");
    }

    /// Buffers past the device's whole memory: skipped with the numbers.
    #[test]
    fn sizes_past_the_device_memory_say_how_much() {
        let reason = out_of_reach(Primitive::Scan, PAST_2_33, H100).expect("103 GB on an 85 GB card");
        assert_eq!(
            reason,
            "skipped for device memory: scan n=8589935147 needs up to 103.1 GB (12 bytes an item), more than \
             the device's 85.0 GB"
        );
        let reason = out_of_reach(Primitive::Compact, 1 << 31, 30_000_000_000).expect("36.5 GB on a 30 GB card");
        assert!(reason.contains("(17 bytes an item)"), "{reason}");
        assert_eq!(out_of_reach(Primitive::Compact, PAST_2_32, H100), None, "73 GB at most fits an 85 GB card");
        assert!(out_of_reach(Primitive::Compact, PAST_2_33, H100).is_some(), "its 86 GB do not fit an 85 GB card");
        assert_eq!(out_of_reach(Primitive::Histogram, PAST_2_33, H100), None, "34.4 GB of int32 fits an 85 GB card");
        let reason = out_of_reach(Primitive::Histogram, PAST_2_33, 30_000_000_000).expect("34.4 GB on a 30 GB card");
        assert!(reason.contains("(4 bytes an item)"), "{reason}");
    }
}
