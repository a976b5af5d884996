//! Kernel families: one CUDA translation unit (and one loaded module) each.

/// A CUDA family file under `kernels/cuda/`, compiled as one NVRTC program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// Integer (and affine-map) reductions: `reduce.cu`.
    Reduce,
    /// Integer (and affine-map) scans: `scan.cu`.
    Scan,
    /// argmax / argmin: `arg_reduce.cu`.
    ArgReduce,
    /// Row softmax: `softmax.cu`.
    Softmax,
    /// Stream compaction: `compact.cu`.
    Compact,
    /// Segmented reductions: `segmented_reduce.cu`.
    SegmentedReduce,
    /// Histograms: `histogram.cu`.
    Histogram,
    /// float32 / bf16 reductions: `float_reduce.cu`.
    FloatReduce,
    /// Bandwidth ceilings for benchmarks (read-only kernel): `ceilings.cu`.
    Ceilings,
    /// Correctly rounded f32 / bf16 sums (exact integer limbs): `exact_sum.cu`.
    ExactSum,
}

impl Family {
    /// Every family, in a fixed order.
    pub const ALL: [Family; 10] = [
        Family::Reduce,
        Family::Scan,
        Family::ArgReduce,
        Family::Softmax,
        Family::Compact,
        Family::SegmentedReduce,
        Family::Histogram,
        Family::FloatReduce,
        Family::Ceilings,
        Family::ExactSum,
    ];

    /// The family's source file, relative to `kernels/cuda`.
    pub fn file(self) -> &'static str {
        match self {
            Family::Reduce => "reduce.cu",
            Family::Scan => "scan.cu",
            Family::ArgReduce => "arg_reduce.cu",
            Family::Softmax => "softmax.cu",
            Family::Compact => "compact.cu",
            Family::SegmentedReduce => "segmented_reduce.cu",
            Family::Histogram => "histogram.cu",
            Family::FloatReduce => "float_reduce.cu",
            Family::Ceilings => "ceilings.cu",
            Family::ExactSum => "exact_sum.cu",
        }
    }
}
