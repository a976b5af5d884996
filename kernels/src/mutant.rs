//! The planted-bug gallery. Each mutant is a small, documented variant of a
//! real kernel, compiled only when `PRIMLAB_MUTANT` equals its id (see
//! `GpuOptions::mutant`); the real kernels compile with 0 and never contain
//! one. `harness mutants` runs each through the sweep and compute-sanitizer
//! and records which check caught it: the evidence that the harness finds
//! the bugs it exists to find.

/// One planted bug.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mutant {
    /// `PRIMLAB_MUTANT` value.
    pub id: u32,
    /// Short name.
    pub name: &'static str,
    /// Where the planted code sits (file: construct).
    pub planted_in: &'static str,
    /// What the bug does and why it is a real-world bug.
    pub description: &'static str,
    /// The primitive whose sweep and sanitizer runs exercise it.
    pub primitive: &'static str,
    /// Substring of the variant names to run (empty = all variants).
    pub variant: &'static str,
    /// Sizes to run it at.
    pub sizes: &'static [usize],
}

const SMALL: &[usize] = &[1, 31, 33, 257, 513, 4099];
const RECURSION: &[usize] = &[513, 4099, 262_145, 262_145 * 2 + 3];

/// The gallery, by id.
pub const GALLERY: [Mutant; 13] = [
    Mutant {
        id: 1,
        name: "missing-barrier-before-partials",
        planted_in: "common/block_reduce.cuh: block_reduce",
        description:
            "no __syncthreads() between the warp partial writes and warp 0's reads (RAW hazard in shared memory)",
        primitive: "reduce",
        variant: "multipass",
        sizes: SMALL,
    },
    Mutant {
        id: 2,
        name: "barrier-in-warp0-branch",
        planted_in: "common/block_reduce.cuh: block_reduce",
        description: "the block barrier sits inside if (warp == 0): only one warp reaches it",
        primitive: "reduce",
        variant: "",
        sizes: SMALL,
    },
    Mutant {
        id: 3,
        name: "tail-threads-return-before-barrier",
        planted_in: "reduce.cu: multipass kernel",
        description:
            "warps without input return before the block barrier in block_reduce instead of carrying the identity",
        primitive: "reduce",
        variant: "multipass",
        sizes: SMALL,
    },
    Mutant {
        id: 4,
        name: "shuffle-reads-exited-lane",
        planted_in: "reduce.cu: multipass kernel",
        description: "lanes without input exit, so the last warp's full-mask shuffle reads lanes that are gone",
        primitive: "reduce",
        variant: "multipass",
        sizes: SMALL,
    },
    Mutant {
        id: 5,
        name: "scan-forgets-block-offset",
        planted_in: "scan.cu: Blelloch multi-pass offsets",
        description:
            "blocks after the first never add their block offset; invisible when earlier block totals are zero",
        primitive: "scan",
        variant: "blelloch",
        sizes: SMALL,
    },
    Mutant {
        id: 6,
        name: "tail-guard-off-by-one",
        planted_in: "reduce.cu: multipass load guard",
        description: "the tail guard uses <= instead of <, reading one element past the end",
        primitive: "reduce",
        variant: "multipass",
        sizes: SMALL,
    },
    Mutant {
        id: 7,
        name: "uninitialised-shared-read",
        planted_in: "scan.cu: look-back tile prefix broadcast",
        description: "tile 0 never writes its shared prefix slot, so its threads read uninitialised shared memory",
        primitive: "scan",
        variant: "decoupled_lookback",
        sizes: SMALL,
    },
    Mutant {
        id: 8,
        name: "lookback-payload-before-flag",
        planted_in: "common/decoupled_lookback.cuh: lookback_exclusive_prefix",
        description: "a predecessor's payload is read before its status flag is acquired",
        primitive: "scan",
        variant: "decoupled_lookback",
        sizes: &[4099, 65_537, 262_145, 1 << 22],
    },
    Mutant {
        id: 9,
        name: "rejected-item-writes",
        planted_in: "compact.cu: scatter",
        description: "a rejected compaction item still writes to its destination",
        primitive: "compact",
        variant: "",
        sizes: SMALL,
    },
    Mutant {
        id: 10,
        name: "softmax-no-neg-inf-guard",
        planted_in: "common/operators.cuh: SoftmaxMerge (and softmax.cu's per-thread update)",
        description: "merging empty (-inf, 0) states computes exp(-inf - -inf) = NaN for masked rows",
        primitive: "softmax",
        variant: "",
        sizes: SMALL,
    },
    Mutant {
        id: 11,
        name: "argmax-ties-to-highest-index",
        planted_in: "common/operators.cuh: arg_tie_prefers",
        description: "equal values resolve to the highest index instead of the lowest",
        primitive: "arg_reduce",
        variant: "",
        sizes: SMALL,
    },
    Mutant {
        id: 12,
        name: "empty-segment-off-by-one",
        planted_in: "segmented_reduce.cu: segment bounds",
        description: "an empty segment reads offsets[s] as if it held one element",
        primitive: "segmented_reduce",
        variant: "",
        sizes: SMALL,
    },
    Mutant {
        id: 13,
        name: "recursion-wrong-past-512-squared",
        planted_in: "scan.cu: Blelloch recursion",
        description: "the third recursion level's offsets are not added back: wrong only past 512^2 items",
        primitive: "scan",
        variant: "blelloch",
        sizes: RECURSION,
    },
];

/// The mutant with `id`, if any.
pub fn mutant(id: u32) -> Option<&'static Mutant> {
    GALLERY.iter().find(|m| m.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::CUDA_SOURCES;

    #[test]
    fn ids_are_one_to_thirteen_in_order() {
        for (i, m) in GALLERY.iter().enumerate() {
            assert_eq!(m.id as usize, i + 1);
        }
    }

    /// Every mutant is planted somewhere in the CUDA sources (and only under its own #if).
    #[test]
    fn every_mutant_is_planted_in_the_sources() {
        for m in &GALLERY {
            let tag = format!("MUTANT {}:", m.id);
            assert!(
                CUDA_SOURCES.iter().any(|(_, text)| text.contains(&tag)),
                "mutant {} ({}) has no `// {tag}` comment in kernels/cuda",
                m.id,
                m.name
            );
        }
    }
}
