//! The list of primitives: names, the command line's values, the kernel
//! families each launches. Nothing here reaches the catalogues, so the
//! sweep, which names primitives, imports this file and not the registry
//! that lists the catalogues (no import circle).

use serde::{Deserialize, Serialize};

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

impl std::fmt::Display for Primitive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
