//! The list of primitives: names, the command line's values, the kernel
//! families each launches, and each one's files in every layer. Nothing here
//! reaches the catalogues, so the sweep, which names primitives, imports this
//! file and not the registry that lists the catalogues (no import circle).

use serde::{Deserialize, Serialize};

/// Bytes of device memory one element may need at most, over every
/// primitive (an int32 input, int64 output and int64 scratch of a scan, a
/// compaction's input, flags and output).
pub const DEVICE_BYTES_PER_ELEMENT: usize = 24;

/// A primitive of the library.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum Primitive {
    /// int32 -> int64 sum (and the affine-map operator).
    Reduce,
    /// Exclusive and inclusive scans, int32 -> int64 (and affine maps).
    Scan,
    /// argmax / argmin, whole arrays and rows.
    ArgReduce,
    /// Row softmax, f32 and bf16.
    Softmax,
    /// Stream compaction by predicate or flags.
    Compact,
    /// Reductions over half-open segments.
    SegmentedReduce,
    /// Even-bin histograms.
    Histogram,
    /// f32 / bf16 sums with f32 accumulation.
    FloatReduce,
    /// Correctly rounded f32 / bf16 sums (exact integer limbs), whole and segmented.
    ExactSum,
    /// The k largest (or smallest) values of each row and their indices, in one total order.
    Topk,
}

impl Primitive {
    /// Every primitive, in the catalogue's order.
    pub const ALL: [Primitive; 10] = [
        Primitive::Reduce,
        Primitive::Scan,
        Primitive::ArgReduce,
        Primitive::Softmax,
        Primitive::Compact,
        Primitive::SegmentedReduce,
        Primitive::Histogram,
        Primitive::FloatReduce,
        Primitive::ExactSum,
        Primitive::Topk,
    ];

    /// The name used on the command line, in receipts and in case ids.
    pub fn name(self) -> &'static str {
        match self {
            Primitive::Reduce => "reduce",
            Primitive::Scan => "scan",
            Primitive::ArgReduce => "arg_reduce",
            Primitive::Softmax => "softmax",
            Primitive::Compact => "compact",
            Primitive::SegmentedReduce => "segmented_reduce",
            Primitive::Histogram => "histogram",
            Primitive::FloatReduce => "float_reduce",
            Primitive::ExactSum => "exact_sum",
            Primitive::Topk => "topk",
        }
    }

    /// The primitive named `name`, if any.
    pub fn from_name(name: &str) -> Option<Primitive> {
        Primitive::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Every name, comma-separated (for error messages).
    pub fn names() -> String {
        Primitive::ALL.map(Primitive::name).join(", ")
    }

    /// The largest n the sweep runs it at: the kernels' limit for the reduce
    /// and the scans (their plans' grid limits, 2^40 - 512), the arg
    /// reductions (2^40, in windows of 2^30), the softmax (2^40 logits, in
    /// rows), the histogram (2^40 samples, u64 counts in windows of 2^31),
    /// the segmented reduction (2^40 items, u64 offsets past u32::MAX) and the
    /// compaction (2^40 items, a u64 count, three-phase in windows of 2^30);
    /// for the float
    /// sums, whose kernels take far more (`float_reduce::MAX_LEN`, 2^40 inputs
    /// for the correctly rounded sum), the last size at which the family their
    /// large cases need stays exact in f32 ([`model::generators::SPARSE_EXACT_MAX_LEN`],
    /// 2^33 + 2^32); `u32::MAX` for the others, whose positions, counts and
    /// offsets are 32-bit on the device. [`Primitive::max_len_reason`] says which.
    pub fn max_len(self) -> usize {
        match self {
            Primitive::Reduce => kernels::reduce::MAX_LEN,
            Primitive::Scan => kernels::scan::MAX_LEN,
            Primitive::ArgReduce => kernels::arg_reduce::MAX_LEN,
            Primitive::Softmax => kernels::softmax::MAX_LEN,
            Primitive::Histogram => kernels::histogram::MAX_LEN,
            Primitive::SegmentedReduce => kernels::segmented_reduce::MAX_LEN,
            Primitive::Compact => kernels::compact::MAX_LEN,
            Primitive::FloatReduce => kernels::float_reduce::MAX_LEN.min(model::generators::SPARSE_EXACT_MAX_LEN),
            Primitive::ExactSum => {
                (kernels::exact_sum::EXACT_MAX_INPUTS as usize).min(model::generators::SPARSE_EXACT_MAX_LEN)
            }
            _ => u32::MAX as usize,
        }
    }

    /// Why [`Primitive::max_len`] is where it is, for the line that skips a
    /// larger case.
    pub fn max_len_reason(self) -> &'static str {
        match self {
            Primitive::Reduce
            | Primitive::Scan
            | Primitive::ArgReduce
            | Primitive::Softmax
            | Primitive::Histogram
            | Primitive::SegmentedReduce
            | Primitive::Compact => "its plans' limit",
            Primitive::FloatReduce | Primitive::ExactSum => {
                "past it the sweep's sparse integer family is no longer exact in f32"
            }
            _ => "32-bit sizes on the device",
        }
    }

    /// Bytes of device memory one item of its largest case may need at most:
    /// 4 for the reduce, the arg reductions, the float sums, the histogram and
    /// the segmented reduction (an int32 or f32 input; their scratch a few
    /// bytes per 512 or 4096
    /// items, or under 1 MB), 12 for the scan (int32 in,
    /// int64 out; its scratch at most 8 bytes per 512 items), 8 for the softmax
    /// (f32 logits in, f32 probabilities out, a byte a row), 17 for the
    /// compaction (int32 input and output, u8 selector flags, and the u32
    /// three-phase's u32 flags and positions of every item below 2^32; past it
    /// the wide path needs 9 bytes an item and one window's 8.6 GB), 24 for
    /// the others (over all of them: an int32 input, an int64 output and
    /// int64 scratch). The affine-map cases stop at 2^24.
    pub fn device_bytes_per_item(self) -> usize {
        match self {
            Primitive::Reduce
            | Primitive::ArgReduce
            | Primitive::FloatReduce
            | Primitive::ExactSum
            | Primitive::Histogram
            | Primitive::SegmentedReduce => 4,
            Primitive::Scan => 12,
            Primitive::Softmax => 8,
            Primitive::Compact => 17,
            _ => DEVICE_BYTES_PER_ELEMENT,
        }
    }

    /// How many jobs, at most, a sanitizer run of its cases is split into (by
    /// variant), so that no single job sets the length of `harness sanitize`
    /// and `harness mutants`. Top-k's racecheck took 311 s as one job on the
    /// H100 (the sanitize receipt of sources 28c1a7f941ec) and its mutants'
    /// control 282 s, while no other primitive's job took more than 27 s;
    /// each extra job costs a process and a sanitizer start, so only top-k is
    /// split.
    pub fn sanitizer_shards(self) -> usize {
        match self {
            Primitive::Topk => 6,
            _ => 1,
        }
    }

    /// The kernel families its cases launch (compiled before the first case).
    pub fn families(self) -> &'static [kernels::KernelFamily] {
        use kernels::KernelFamily as F;
        match self {
            Primitive::Reduce => &[F::Reduce],
            Primitive::Scan => &[F::Scan],
            Primitive::ArgReduce => &[F::ArgReduce],
            Primitive::Softmax => &[F::Softmax],
            Primitive::Compact => &[F::Compact],
            Primitive::SegmentedReduce => &[F::SegmentedReduce],
            Primitive::Histogram => &[F::Histogram],
            Primitive::FloatReduce => &[F::FloatReduce],
            Primitive::ExactSum => &[F::ExactSum, F::ExactSegmentedSum],
            Primitive::Topk => &[F::Topk],
        }
    }
}

/// A primitive's files in every layer, as paths from the workspace root: the
/// one place that lists them. Each layer holds a file that bears the
/// primitive's name exactly (`scan` is `kernels/cuda/scan.cu`,
/// `kernels/src/scan.rs`, `model/src/scan.rs`, `harness/src/sweep/gpu/scan.rs`,
/// `harness/src/sweep/raw/scan.rs`, `harness/src/bench/entries/scan.rs`), and
/// every file of a layer's folder whose name starts with the primitive's or a
/// part's name is listed here: a test holds the lists to the tree
/// (`registry::tests`), so they cannot drift.
#[derive(Debug, Clone, Copy)]
#[allow(dead_code)] // read by the tests that hold it to the tree, and by people
pub struct Files {
    /// Its parts: names of their own that some of its files bear (a part has
    /// a kernel family, a model or cases of its own; no layer must hold one).
    pub parts: &'static [&'static str],
    /// CUDA sources (`kernels/cuda/`).
    pub cuda: &'static [&'static str],
    /// Launch code and its tests (`kernels/src/`), and its plain-data spec (`types/src/`).
    pub launch: &'static [&'static str],
    /// The exact model, its tests, fixture writers and conformance checks (`model/src/`).
    pub model: &'static [&'static str],
    /// GPU cases of the sweep (`harness/src/sweep/gpu/`).
    pub sweep: &'static [&'static str],
    /// Contracts and raw cases for user kernels (`harness/src/sweep/raw/`).
    pub contracts: &'static [&'static str],
    /// Bench entries (`harness/src/bench/entries/`).
    pub bench: &'static [&'static str],
}

impl Primitive {
    /// Its files in every layer ([`Files`]).
    #[allow(dead_code)] // read by the tests that hold it to the tree, and by people
    pub fn files(self) -> Files {
        match self {
            Primitive::Reduce => Files {
                parts: &[],
                cuda: &["kernels/cuda/reduce.cu"],
                launch: &["kernels/src/reduce.rs", "kernels/src/reduce_tests.rs"],
                model: &[
                    "model/src/reduce.rs",
                    "model/src/hardware/multipass_reduce.rs",
                    "model/src/fixtures/reduce.rs",
                    "model/src/conformance/reduce_checks.rs",
                ],
                sweep: &["harness/src/sweep/gpu/reduce.rs"],
                contracts: &["harness/src/sweep/raw/reduce.rs"],
                bench: &["harness/src/bench/entries/reduce.rs"],
            },
            Primitive::Scan => Files {
                parts: &[],
                cuda: &["kernels/cuda/scan.cu"],
                launch: &["kernels/src/scan.rs", "kernels/src/scan_tests.rs"],
                model: &[
                    "model/src/scan.rs",
                    "model/src/hardware/device_scan.rs",
                    "model/src/fixtures/scan.rs",
                    "model/src/conformance/scan_checks.rs",
                ],
                sweep: &["harness/src/sweep/gpu/scan.rs"],
                contracts: &["harness/src/sweep/raw/scan.rs"],
                bench: &["harness/src/bench/entries/scan.rs"],
            },
            Primitive::ArgReduce => Files {
                parts: &[],
                cuda: &["kernels/cuda/arg_reduce.cu"],
                launch: &["kernels/src/arg_reduce.rs", "kernels/src/arg_reduce_tests.rs"],
                model: &["model/src/arg_reduce.rs"],
                sweep: &["harness/src/sweep/gpu/arg_reduce.rs", "harness/src/sweep/gpu/arg_reduce_streamed.rs"],
                contracts: &["harness/src/sweep/raw/arg_reduce.rs"],
                bench: &["harness/src/bench/entries/arg_reduce.rs"],
            },
            Primitive::Softmax => Files {
                parts: &[],
                cuda: &["kernels/cuda/softmax.cu"],
                launch: &["kernels/src/softmax.rs", "kernels/src/softmax_tests.rs", "kernels/src/softmax_tolerance.rs"],
                model: &[
                    "model/src/softmax/mod.rs",
                    "model/src/softmax/block_tree.rs",
                    "model/src/softmax/exact.rs",
                    "model/src/softmax/probabilities.rs",
                    "model/src/softmax/rows.rs",
                    "model/src/softmax/state.rs",
                    "model/src/generators/softmax_rows.rs",
                    "model/src/fixtures/softmax.rs",
                    "model/src/conformance/softmax_checks.rs",
                ],
                sweep: &[
                    "harness/src/sweep/gpu/softmax.rs",
                    "harness/src/sweep/gpu/softmax_streamed.rs",
                    "harness/src/sweep/gpu/softmax_streamed_tests.rs",
                ],
                contracts: &["harness/src/sweep/raw/softmax.rs"],
                bench: &["harness/src/bench/entries/softmax.rs"],
            },
            Primitive::Compact => Files {
                parts: &[],
                cuda: &["kernels/cuda/compact.cu"],
                launch: &["kernels/src/compact.rs", "kernels/src/compact_tests.rs"],
                model: &["model/src/compact.rs", "model/src/fixtures/compact.rs"],
                sweep: &["harness/src/sweep/gpu/compact.rs", "harness/src/sweep/gpu/compact_streamed.rs"],
                contracts: &["harness/src/sweep/raw/compact.rs"],
                bench: &["harness/src/bench/entries/compact.rs"],
            },
            Primitive::SegmentedReduce => Files {
                parts: &[],
                cuda: &["kernels/cuda/segmented_reduce.cu"],
                launch: &["kernels/src/segmented_reduce.rs", "kernels/src/segmented_reduce_tests.rs"],
                model: &["model/src/segmented_reduce.rs", "model/src/fixtures/segmented_reduce.rs"],
                sweep: &[
                    "harness/src/sweep/gpu/segmented_reduce.rs",
                    "harness/src/sweep/gpu/segmented_reduce_streamed.rs",
                ],
                contracts: &["harness/src/sweep/raw/segmented_reduce.rs"],
                bench: &["harness/src/bench/entries/segmented_reduce.rs"],
            },
            Primitive::Histogram => Files {
                parts: &[],
                cuda: &["kernels/cuda/histogram.cu"],
                launch: &["kernels/src/histogram.rs", "kernels/src/histogram_tests.rs", "types/src/histogram_spec.rs"],
                model: &["model/src/histogram.rs", "model/src/fixtures/histogram.rs"],
                sweep: &["harness/src/sweep/gpu/histogram.rs", "harness/src/sweep/gpu/histogram_streamed.rs"],
                contracts: &["harness/src/sweep/raw/histogram.rs"],
                bench: &["harness/src/bench/entries/histogram.rs"],
            },
            Primitive::FloatReduce => Files {
                parts: &[],
                cuda: &["kernels/cuda/float_reduce.cu"],
                launch: &["kernels/src/float_reduce.rs", "kernels/src/float_reduce_tests.rs"],
                // The exact value and the declared bounds it is held to are `exact`'s
                // (`model/src/exact/exact_sum.rs`, `model/src/exact/bounds.rs`).
                model: &[
                    "model/src/float_reduce.rs",
                    "model/src/float_reduce_tests.rs",
                    "model/src/hardware/float_tile.rs",
                    "model/src/hardware/float_tile_tests.rs",
                    "model/src/fixtures/float_reduce.rs",
                    "model/src/conformance/float_reduce_checks.rs",
                ],
                sweep: &["harness/src/sweep/gpu/float_reduce.rs", "harness/src/sweep/float_check.rs"],
                contracts: &["harness/src/sweep/raw/float_reduce.rs"],
                bench: &["harness/src/bench/entries/float_reduce.rs"],
            },
            Primitive::ExactSum => Files {
                parts: &["exact_segmented_sum"],
                cuda: &["kernels/cuda/exact_sum.cu", "kernels/cuda/exact_segmented_sum.cu"],
                launch: &[
                    "kernels/src/exact_sum.rs",
                    "kernels/src/exact_segmented_sum.rs",
                    "kernels/src/exact_segmented_sum_tests.rs",
                ],
                model: &[
                    "model/src/exact/exact_sum.rs",
                    "model/src/exact/exact_segmented_sum.rs",
                    "model/src/exact/correctly_rounded.rs",
                    "model/src/exact/binned.rs",
                ],
                sweep: &[
                    "harness/src/sweep/gpu/exact_sum.rs",
                    "harness/src/sweep/gpu/exact_segmented_sum.rs",
                    "harness/src/sweep/gpu/exact_segmented_sum_tests.rs",
                ],
                // One contract for the whole and the segmented sums.
                contracts: &["harness/src/sweep/raw/exact_sum.rs"],
                bench: &["harness/src/bench/entries/exact_sum.rs", "harness/src/bench/entries/exact_segmented_sum.rs"],
            },
            Primitive::Topk => Files {
                parts: &["topk_sample"],
                // The sampler is launched from the selection's source and launch code.
                cuda: &["kernels/cuda/topk.cu"],
                launch: &["kernels/src/topk.rs", "kernels/src/topk_tests.rs", "types/src/topk_spec.rs"],
                model: &[
                    "model/src/topk.rs",
                    "model/src/topk_tests.rs",
                    "model/src/topk_sample.rs",
                    "model/src/topk_sample_tests.rs",
                    "model/src/hardware/radix_select.rs",
                    "model/src/hardware/sample_draw.rs",
                    "model/src/generators/topk_rows.rs",
                ],
                sweep: &["harness/src/sweep/gpu/topk.rs", "harness/src/sweep/gpu/topk_sample.rs"],
                contracts: &[
                    "harness/src/sweep/raw/topk.rs",
                    "harness/src/sweep/raw/topk_sample.rs",
                    "harness/src/sweep/raw/topk_sample_rule.rs",
                ],
                bench: &["harness/src/bench/entries/topk.rs", "harness/src/bench/entries/topk_sample.rs"],
            },
        }
    }
}

impl Files {
    /// Every file, layer by layer.
    #[allow(dead_code)] // read by the tests that hold it to the tree
    pub fn all(&self) -> impl Iterator<Item = &'static str> {
        [self.cuda, self.launch, self.model, self.sweep, self.contracts, self.bench].into_iter().flatten().copied()
    }
}

impl std::fmt::Display for Primitive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
