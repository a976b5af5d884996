//! The planted-bug gallery. Each mutant is a small, documented variant of a
//! real kernel: edits of the kernel sources ([`Patch`], in
//! `mutant_patches.rs`) applied to a family's translation unit when a GPU is
//! opened with its id (see `GpuOptions::mutant`); the shipped `.cu` files
//! hold no planted code, and id 0 compiles them as they are. `harness
//! mutants` runs each through the sweep and compute-sanitizer and records
//! which check caught it: the evidence that the harness finds the bugs it
//! exists to find.

use crate::kernel_family::KernelFamily;
pub use crate::mutant_patches::Patch;
use crate::mutant_patches::*;

/// One planted bug.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mutant {
    /// Its id (`GpuOptions::mutant`; 0 is the real kernels).
    pub id: u32,
    /// Short name.
    pub name: &'static str,
    /// Where the planted code sits (file: construct).
    pub planted_in: &'static str,
    /// The kernel families whose compiled code the planted bug changes (the
    /// family of `primitive` first); a test compiles each with and without it.
    pub families: &'static [KernelFamily],
    /// What the bug does and why it is a real-world bug.
    pub description: &'static str,
    /// The primitive whose sweep and sanitizer runs exercise it.
    pub primitive: &'static str,
    /// Substring of the variant names to run (empty = all variants).
    pub variant: &'static str,
    /// Sizes to run it at.
    pub sizes: &'static [usize],
    /// The edits that plant it.
    pub patches: &'static [Patch],
}

const SMALL: &[usize] = &[1, 31, 33, 257, 513, 4099];
const RECURSION: &[usize] = &[513, 4099, 262_145, 262_145 * 2 + 3];
/// Whole arrays of top-k (its row shapes run beside them at every size list).
const TOPK_ARRAYS: &[usize] = &[33, 4099];
/// A whole array just past `TOPK.grid_narrow_min_cols`, where the grid schedule narrows over
/// several levels and reads list A after the first.
const TOPK_NARROWED_ARRAYS: &[usize] = &[(1 << 20) + 1];

/// The gallery, by id.
pub const GALLERY: [Mutant; 22] = [
    Mutant {
        id: 1,
        name: "missing-barrier-before-partials",
        planted_in: "common/block_reduce.cuh: block_reduce",
        description:
            "no __syncthreads() between the warp partial writes and warp 0's reads (RAW hazard in shared memory)",
        families: &[KernelFamily::Reduce],
        primitive: "reduce",
        variant: "multipass",
        sizes: SMALL,
        patches: PLANT_1,
    },
    Mutant {
        id: 2,
        name: "barrier-in-warp0-branch",
        planted_in: "common/block_reduce.cuh: block_reduce",
        description: "the block barrier sits inside if (warp == 0): only one warp reaches it",
        families: &[KernelFamily::Reduce],
        primitive: "reduce",
        variant: "",
        sizes: SMALL,
        patches: PLANT_2,
    },
    Mutant {
        id: 3,
        name: "tail-threads-return-before-barrier",
        planted_in: "reduce.cu: multipass kernel",
        description:
            "warps without input return before the block barrier in block_reduce instead of carrying the identity",
        families: &[KernelFamily::Reduce],
        primitive: "reduce",
        variant: "multipass",
        sizes: SMALL,
        patches: PLANT_3,
    },
    Mutant {
        id: 4,
        name: "shuffle-reads-exited-lane",
        planted_in: "reduce.cu: multipass kernel",
        description: "lanes without input exit, so the last warp's full-mask shuffle reads lanes that are gone",
        families: &[KernelFamily::Reduce],
        primitive: "reduce",
        variant: "multipass",
        sizes: SMALL,
        patches: PLANT_4,
    },
    Mutant {
        id: 5,
        name: "scan-forgets-block-offset",
        planted_in: "scan.cu: Blelloch multi-pass offsets",
        description:
            "blocks after the first never add their block offset; invisible when earlier block totals are zero",
        families: &[KernelFamily::Scan],
        primitive: "scan",
        variant: "blelloch",
        sizes: SMALL,
        patches: PLANT_5,
    },
    Mutant {
        id: 6,
        name: "tail-guard-off-by-one",
        planted_in: "reduce.cu: multipass load guard",
        description: "the tail guard uses <= instead of <, reading one element past the end",
        families: &[KernelFamily::Reduce],
        primitive: "reduce",
        variant: "multipass",
        sizes: SMALL,
        patches: PLANT_6,
    },
    Mutant {
        id: 7,
        name: "uninitialised-shared-read",
        planted_in: "scan.cu: look-back tile prefix broadcast",
        description: "tile 0 never writes its shared prefix slot, so its threads read uninitialised shared memory",
        families: &[KernelFamily::Scan],
        primitive: "scan",
        variant: "decoupled_lookback",
        sizes: SMALL,
        patches: PLANT_7,
    },
    Mutant {
        id: 8,
        name: "lookback-window-drops-prefix-tile",
        planted_in: "common/decoupled_lookback.cuh: lookback_exclusive_prefix",
        description: "the look-back window starts one lane late, dropping the inclusive prefix of the published \
                      tile that ends the walk (every tile after the first loses everything before it)",
        families: &[KernelFamily::Scan, KernelFamily::Compact],
        primitive: "scan",
        variant: "decoupled_lookback",
        sizes: &[4099, 65_537, 262_145, 1 << 22],
        patches: PLANT_8,
    },
    Mutant {
        id: 9,
        name: "rejected-item-writes",
        planted_in: "compact.cu: scatter",
        description: "a rejected compaction item still writes to its destination",
        families: &[KernelFamily::Compact],
        primitive: "compact",
        variant: "",
        sizes: SMALL,
        patches: PLANT_9,
    },
    Mutant {
        id: 10,
        name: "softmax-no-neg-inf-guard",
        planted_in: "common/operators.cuh: SoftmaxMerge (and softmax.cu's per-thread update)",
        description: "merging empty (-inf, 0) states computes exp(-inf - -inf) = NaN for masked rows",
        families: &[KernelFamily::Softmax],
        primitive: "softmax",
        variant: "",
        sizes: SMALL,
        patches: PLANT_10,
    },
    Mutant {
        id: 11,
        name: "argmax-ties-to-highest-index",
        planted_in: "common/operators.cuh: arg_tie_prefers",
        description: "equal values resolve to the highest index instead of the lowest",
        families: &[KernelFamily::ArgReduce],
        primitive: "arg_reduce",
        variant: "",
        sizes: SMALL,
        patches: PLANT_11,
    },
    Mutant {
        id: 12,
        name: "empty-segment-off-by-one",
        planted_in: "segmented_reduce.cu: segment bounds",
        description: "an empty segment reads offsets[s] as if it held one element",
        families: &[KernelFamily::SegmentedReduce],
        primitive: "segmented_reduce",
        variant: "",
        sizes: SMALL,
        patches: PLANT_12,
    },
    Mutant {
        id: 13,
        name: "recursion-wrong-past-512-squared",
        planted_in: "scan.cu: Blelloch recursion",
        description: "the third recursion level's offsets are not added back: wrong only past 512^2 items",
        families: &[KernelFamily::Scan],
        primitive: "scan",
        variant: "blelloch",
        sizes: RECURSION,
        patches: PLANT_13,
    },
    Mutant {
        id: 14,
        name: "superaccumulator-drops-a-carry",
        planted_in: "common/superaccumulator.cuh: normalise",
        description: "the carry out of word 3 (values in [2^-54, 1)) is dropped when the limbs are normalised",
        families: &[KernelFamily::ExactSum, KernelFamily::ExactSegmentedSum],
        primitive: "exact_sum",
        variant: "",
        sizes: SMALL,
        patches: PLANT_14,
    },
    Mutant {
        id: 15,
        name: "topk-tie-rule-inverted",
        planted_in: "topk.cu: rank_of / column_of",
        description: "equal values rank the higher index first (the column, not its complement, below the key)",
        families: &[KernelFamily::Topk],
        primitive: "topk",
        variant: "",
        sizes: TOPK_ARRAYS,
        patches: PLANT_15,
    },
    Mutant {
        id: 16,
        name: "topk-kth-run-cut-short",
        planted_in: "topk.cu: gather",
        description: "one tie of the k-th value fewer than needed is kept (an off-by-one in the remaining count)",
        families: &[KernelFamily::Topk],
        primitive: "topk",
        variant: "",
        sizes: TOPK_ARRAYS,
        patches: PLANT_16,
    },
    Mutant {
        id: 17,
        name: "topk-histogram-drops-last-bin",
        planted_in: "topk.cu: radix_select",
        description: "the digit histogram never counts its last bin (an off-by-one in a loop bound over the bins)",
        families: &[KernelFamily::Topk],
        primitive: "topk",
        variant: "",
        sizes: TOPK_ARRAYS,
        patches: PLANT_17,
    },
    Mutant {
        id: 18,
        name: "topk-sample-ignores-temperature",
        planted_in: "topk.cu: sample_weight",
        description: "the sampler's weights drop the temperature (exp(v - max) for every T)",
        families: &[KernelFamily::Topk],
        primitive: "topk",
        variant: "sample",
        sizes: TOPK_ARRAYS,
        patches: PLANT_18,
    },
    Mutant {
        id: 19,
        name: "histogram-window-overwrites-totals",
        planted_in: "histogram.cu: histogram_add_window",
        description: "a window's u32 counts overwrite the u64 totals instead of adding to them (past 2^32 samples only the last window would count)",
        families: &[KernelFamily::Histogram],
        primitive: "histogram",
        variant: "windows",
        sizes: SMALL,
        patches: PLANT_19,
    },
    Mutant {
        id: 20,
        name: "segmented-o64-reads-u32-offsets",
        planted_in: "segmented_reduce.cu: entry points",
        description: "the u64-offset (_o64) int64 sums are instantiated for u32 offsets (a wrong template argument: each u64 offset read as two u32 words)",
        families: &[KernelFamily::SegmentedReduce],
        primitive: "segmented_reduce",
        variant: "o64",
        sizes: SMALL,
        patches: PLANT_20,
    },
    Mutant {
        id: 21,
        name: "compact-window-ignores-base",
        planted_in: "compact.cu: compact_scatter_window",
        description: "the window scatter of a compaction past 2^32 items forgets the kept count of the earlier windows (each window writes from position 0; the count is the last window's alone)",
        families: &[KernelFamily::Compact],
        primitive: "compact",
        variant: "c64",
        sizes: SMALL,
        patches: PLANT_21,
    },
    Mutant {
        id: 22,
        name: "topk-list-segments-overlap",
        planted_in: "topk.cu: grid_collect_histogram",
        description: "every block of a row appends its ranks of list A from the row's start instead of its own segment's (the blocks overwrite each other; rows of several narrowing levels only)",
        families: &[KernelFamily::Topk],
        primitive: "topk",
        // The f32 grid schedule alone: its sweep reaches the appends at 2^20 + 1. The sanitizer
        // runs only top-k's row shapes at this size (no whole array), where the bug is not, and
        // every other variant's rows would add minutes of racecheck that test nothing it touches.
        variant: "grid_threshold_select.f32",
        sizes: TOPK_NARROWED_ARRAYS,
        patches: PLANT_22,
    },
];

/// The mutant with `id`, if any.
pub fn mutant(id: u32) -> Option<&'static Mutant> {
    GALLERY.iter().find(|m| m.id == id)
}

/// `unit` (the translation unit of `family`) with mutant `id`'s edits applied: each patch
/// whose `original` occurs once is replaced, one that occurs nowhere leaves the unit as it
/// is (its file is not part of this family). Errors name an unknown id, or a patch whose
/// `original` occurs more than once (it would not say where).
pub fn plant(id: u32, family: KernelFamily, unit: &str) -> Result<String, String> {
    let m = mutant(id).ok_or_else(|| format!("no mutant {id} in the gallery (ids 1 to {})", GALLERY.len()))?;
    let mut planted = unit.to_string();
    for patch in m.patches {
        match planted.matches(patch.original).count() {
            0 => {}
            1 => planted = planted.replacen(patch.original, patch.planted, 1),
            n => {
                return Err(format!(
                    "mutant {id} ({}): its edit of {} occurs {n} times in {}'s translation unit, not once",
                    m.name,
                    patch.file,
                    family.file()
                ))
            }
        }
    }
    Ok(planted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::CUDA_SOURCES;
    use std::collections::BTreeMap;

    #[test]
    fn the_narrowed_array_mutant_runs_where_rows_narrow_over_several_levels() {
        assert!(TOPK_NARROWED_ARRAYS.iter().all(|&n| n >= crate::policy::TOPK.grid_narrow_min_cols as usize));
    }

    #[test]
    fn ids_are_one_to_twenty_two_in_order() {
        for (i, m) in GALLERY.iter().enumerate() {
            assert_eq!(m.id as usize, i + 1);
        }
    }

    /// Every edit's `original` occurs exactly once in its file and in the translation unit
    /// of every family of its mutant that includes that file, and at least one family; the
    /// shipped sources hold no planted code.
    #[test]
    fn every_patch_names_production_code_that_occurs_once() {
        for m in &GALLERY {
            assert!(!m.families.is_empty() && !m.patches.is_empty(), "mutant {} plants nothing", m.id);
            for patch in m.patches {
                let what = format!("mutant {} ({}), its edit of {}", m.id, m.name, patch.file);
                let source = CUDA_SOURCES.iter().find(|(name, _)| *name == patch.file).map(|(_, text)| *text);
                let source = source.unwrap_or_else(|| panic!("{what}: no such source"));
                assert_eq!(source.matches(patch.original).count(), 1, "{what}: in the file");
                assert_ne!(patch.original, patch.planted, "{what}: plants nothing");
                let in_families = m.families.iter().filter(|f| {
                    let unit = crate::sources::translation_unit(f.file()).expect("embedded");
                    let count = unit.matches(patch.original).count();
                    assert!(count <= 1, "{what}: {count} times in {}", f.file());
                    count == 1
                });
                assert!(in_families.count() >= 1, "{what}: in none of its families' translation units");
            }
        }
        for (name, text) in CUDA_SOURCES {
            assert!(!text.contains("PRIMLAB_MUTANT") && !text.contains("MUTANT "), "{name} holds planted code");
        }
    }

    #[test]
    fn planting_applies_every_edit_once_and_refuses_what_it_cannot_place() {
        let unit = crate::sources::translation_unit(KernelFamily::Topk.file()).expect("embedded");
        let planted = plant(15, KernelFamily::Topk, &unit).expect("mutant 15 plants in topk.cu");
        for patch in PLANT_15 {
            assert!(!planted.contains(patch.original) && planted.contains(patch.planted), "{}", patch.original);
        }
        let untouched = crate::sources::translation_unit(KernelFamily::Histogram.file()).expect("embedded");
        assert_eq!(plant(15, KernelFamily::Histogram, &untouched).expect("no edit applies"), untouched);
        let twice = format!("{unit}\n{}", PLANT_15[0].original);
        let error = plant(15, KernelFamily::Topk, &twice).expect_err("ambiguous");
        assert!(error.contains("occurs 2 times") && error.contains("topk-tie-rule-inverted"), "{error}");
        assert!(plant(99, KernelFamily::Topk, &unit).expect_err("unknown").contains("no mutant 99"));
    }

    /// The `.text*` sections (machine code) of a cubin, by name. Line tables,
    /// symbols and other debug sections are left out: a mutant must change code.
    fn code_sections(cubin: &[u8]) -> BTreeMap<String, Vec<u8>> {
        let u16_at = |o: usize| u16::from_le_bytes([cubin[o], cubin[o + 1]]) as usize;
        let u32_at = |o: usize| u32::from_le_bytes(cubin[o..o + 4].try_into().expect("4 bytes")) as usize;
        let u64_at = |o: usize| u64::from_le_bytes(cubin[o..o + 8].try_into().expect("8 bytes")) as usize;
        assert_eq!(&cubin[..5], b"\x7fELF\x02", "not a 64-bit ELF cubin");
        let (shoff, shentsize, shnum, shstrndx) = (u64_at(0x28), u16_at(0x3a), u16_at(0x3c), u16_at(0x3e));
        let header = |i: usize| shoff + i * shentsize;
        let names_at = u64_at(header(shstrndx) + 0x18);
        let mut out = BTreeMap::new();
        for i in 0..shnum {
            let h = header(i);
            let name_start = names_at + u32_at(h);
            let name_len = cubin[name_start..].iter().position(|&b| b == 0).expect("NUL-terminated name");
            let name = String::from_utf8_lossy(&cubin[name_start..name_start + name_len]).into_owned();
            if name.starts_with(".text") {
                let (offset, size) = (u64_at(h + 0x18), u64_at(h + 0x20));
                out.insert(name, cubin[offset..offset + size].to_vec());
            }
        }
        out
    }

    /// Each mutant changes the machine code of every family it claims: its
    /// edits land in code that family compiles and instantiates (sm_90, as
    /// on the H200).
    /// Needs libnvrtc (`make setup`); without it the test fails, never passes.
    #[test]
    fn every_mutant_changes_the_code_of_the_families_it_claims() {
        if let Err(e) = crate::compile::ensure_nvrtc() {
            panic!("{e}: run `make setup` and set LD_LIBRARY_PATH (see the Makefile)");
        }
        let compile = |family: KernelFamily, mutant: u32| {
            let compiled = crate::compile::compile_family(family, "sm_90", mutant)
                .unwrap_or_else(|e| panic!("mutant {mutant}, {}: {e}", family.file()));
            assert!(compiled.log.is_empty(), "{} mutant {mutant} warned:\n{}", family.file(), compiled.log);
            code_sections(&compiled.cubin)
        };
        let mut builds: Vec<(u32, KernelFamily)> =
            GALLERY.iter().flat_map(|m| m.families.iter().map(move |f| (m.id, *f))).collect();
        let mut families: Vec<KernelFamily> = builds.iter().map(|(_, f)| *f).collect();
        families.sort();
        families.dedup();
        builds.extend(families.iter().map(|f| (0, *f)));
        // The comparison's own control: mutant 9 is planted in compact.cu only, so
        // histogram.cu must compile to the same code with it as without it.
        builds.extend([(0, KernelFamily::Histogram), (9, KernelFamily::Histogram)]);
        // Compile on every core: about twenty NVRTC programs.
        let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
        let next = std::sync::atomic::AtomicUsize::new(0);
        let results = std::sync::Mutex::new(BTreeMap::new());
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(&(mutant, family)) = builds.get(i) else { break };
                    let code = compile(family, mutant);
                    results.lock().unwrap_or_else(|p| p.into_inner()).insert((mutant, family), code);
                });
            }
        });
        let results = results.into_inner().unwrap_or_else(|p| p.into_inner());
        let mut identical = Vec::new();
        for m in &GALLERY {
            for family in m.families {
                let real = &results[&(0, *family)];
                assert!(!real.is_empty(), "{}: no code sections", family.file());
                if results[&(m.id, *family)] == *real {
                    identical.push(format!("mutant {} ({}) in {}", m.id, m.name, family.file()));
                }
            }
        }
        assert!(identical.is_empty(), "compiled to the real kernels' code: {identical:?}");
        assert_eq!(
            results[&(9, KernelFamily::Histogram)],
            results[&(0, KernelFamily::Histogram)],
            "the code comparison sees a difference where the sources are the same"
        );
    }
}
