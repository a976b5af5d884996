//! Kernel families: one CUDA translation unit (and one loaded module) each.

/// A CUDA family file under `kernels/cuda/`, compiled as one NVRTC program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KernelFamily {
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
    /// Correctly rounded segmented f32 / bf16 sums: `exact_segmented_sum.cu`.
    ExactSegmentedSum,
    /// Top-k of rows: `topk.cu`.
    Topk,
}

impl KernelFamily {
    /// Every family, in a fixed order.
    pub const ALL: [KernelFamily; 12] = [
        KernelFamily::Reduce,
        KernelFamily::Scan,
        KernelFamily::ArgReduce,
        KernelFamily::Softmax,
        KernelFamily::Compact,
        KernelFamily::SegmentedReduce,
        KernelFamily::Histogram,
        KernelFamily::FloatReduce,
        KernelFamily::Ceilings,
        KernelFamily::ExactSum,
        KernelFamily::ExactSegmentedSum,
        KernelFamily::Topk,
    ];

    /// The family's source file, relative to `kernels/cuda`.
    pub fn file(self) -> &'static str {
        match self {
            KernelFamily::Reduce => "reduce.cu",
            KernelFamily::Scan => "scan.cu",
            KernelFamily::ArgReduce => "arg_reduce.cu",
            KernelFamily::Softmax => "softmax.cu",
            KernelFamily::Compact => "compact.cu",
            KernelFamily::SegmentedReduce => "segmented_reduce.cu",
            KernelFamily::Histogram => "histogram.cu",
            KernelFamily::FloatReduce => "float_reduce.cu",
            KernelFamily::Ceilings => "ceilings.cu",
            KernelFamily::ExactSum => "exact_sum.cu",
            KernelFamily::ExactSegmentedSum => "exact_segmented_sum.cu",
            KernelFamily::Topk => "topk.cu",
        }
    }
}
