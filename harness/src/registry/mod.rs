//! The primitive registry: the one list of primitives. Every command that
//! iterates over primitives (sweep, sanitize, mutants, bench, report, the
//! receipt gate) takes them from [`Primitive::ALL`], and the command line's
//! `--primitive` values come from the same enum, so `--help` and shell
//! completion list exactly these.

use crate::sweep::gpu::{self, GpuCase};
use crate::sweep::SweepPlan;
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
}

/// Appends one primitive's GPU cases to the catalogue.
pub type CaseBuilder = fn(&SweepPlan, &mut Vec<GpuCase>);

impl Primitive {
    /// Every primitive, in the catalogue's order.
    pub const ALL: [Primitive; 8] = [
        Primitive::Reduce,
        Primitive::Scan,
        Primitive::ArgReduce,
        Primitive::Softmax,
        Primitive::Compact,
        Primitive::SegmentedReduce,
        Primitive::Histogram,
        Primitive::FloatReduce,
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
        }
    }

    /// The builder of its GPU cases.
    pub fn gpu_cases(self) -> CaseBuilder {
        match self {
            Primitive::Reduce => gpu::reduce::cases,
            Primitive::Scan => gpu::scan::cases,
            Primitive::ArgReduce => gpu::arg_reduce::cases,
            Primitive::Softmax => gpu::softmax::cases,
            Primitive::Compact => gpu::compact::cases,
            Primitive::SegmentedReduce => gpu::segmented_reduce::cases,
            Primitive::Histogram => gpu::histogram::cases,
            Primitive::FloatReduce => gpu::float_reduce::cases,
        }
    }
}

impl std::fmt::Display for Primitive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn names_round_trip_and_match_the_command_line_values() {
        for p in Primitive::ALL {
            assert_eq!(Primitive::from_name(p.name()), Some(p));
            let value = p.to_possible_value().expect("every primitive is a CLI value");
            assert_eq!(value.get_name(), p.name());
        }
        assert_eq!(Primitive::value_variants().len(), Primitive::ALL.len());
    }
}
