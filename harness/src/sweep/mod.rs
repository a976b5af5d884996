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

/// Bytes of device memory one element may need at most, over every
/// primitive (an int32 input, int64 output and int64 scratch of a scan, a
/// compaction's input, flags and output).
pub const DEVICE_BYTES_PER_ELEMENT: usize = 24;

/// Bytes of device memory one element of the selected primitives' cases
/// may need at most: [`DEVICE_BYTES_PER_ELEMENT`], or less when only the
/// primitives with 64-bit sizes are selected: 4 for `reduce` (its int32
/// input; its scratch is a few bytes per 512 items), 12 for `scan` (int32
/// in, int64 out; its scratch at most 8 bytes per 512 items), their
/// affine-map cases stopping at 2^24. A case that still does not fit the
/// free memory is skipped for memory, and counted so.
pub fn device_bytes_per_element(primitives: &[Primitive]) -> usize {
    let bytes = |p: &Primitive| match p {
        Primitive::Reduce => 4,
        Primitive::Scan => 12,
        _ => DEVICE_BYTES_PER_ELEMENT,
    };
    primitives.iter().map(bytes).max().unwrap_or(DEVICE_BYTES_PER_ELEMENT)
}

/// Rejects sizes no sweep can use: zero, and (with a GPU) sizes whose
/// buffers cannot fit its memory at [`DEVICE_BYTES_PER_ELEMENT`].
pub fn check_sizes(sizes: &[usize], device_memory: Option<usize>) -> Result<()> {
    check_sizes_for(sizes, device_memory, DEVICE_BYTES_PER_ELEMENT)
}

/// [`check_sizes`] at `bytes_per_element` ([`device_bytes_per_element`]).
pub fn check_sizes_for(sizes: &[usize], device_memory: Option<usize>, bytes_per_element: usize) -> Result<()> {
    if sizes.contains(&0) {
        bail!("--sizes: 0 is not a size: every size must be at least 1 (empty inputs are contract cases of their own)");
    }
    if let Some(memory) = device_memory {
        if let Some(&n) = sizes.iter().find(|&&n| n.saturating_mul(bytes_per_element) > memory) {
            bail!(
                "--sizes: n = {n} needs up to {} GB of device memory ({bytes_per_element} bytes per element), \
                 more than the GPU's {:.1} GB",
                n.saturating_mul(bytes_per_element) as f64 / 1e9,
                memory as f64 / 1e9
            );
        }
    }
    Ok(())
}
