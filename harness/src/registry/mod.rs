//! The primitive registry: the one list of primitives. Every command that
//! iterates over primitives (sweep, sanitize, mutants, bench, report, the
//! receipt gate) takes them from [`Primitive::ALL`], and the command line's
//! `--primitive` values come from the same enum, so `--help` and shell
//! completion list exactly these.

use crate::sweep::gpu::{self, GpuCase};
use crate::sweep::raw::{Contract, RawBuilder};
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
    /// Correctly rounded f32 / bf16 sums (exact integer limbs), whole and segmented.
    ExactSum,
}

/// Appends one primitive's GPU cases to the catalogue.
pub type CaseBuilder = fn(&SweepPlan, &mut Vec<GpuCase>);

/// Registers one primitive's benchmark entries (one per variant and size or shape).
pub type BenchRegistrar = fn(&crate::bench::config::BenchConfig, &mut crate::bench::entries::Registry);

impl Primitive {
    /// Every primitive, in the catalogue's order.
    pub const ALL: [Primitive; 9] = [
        Primitive::Reduce,
        Primitive::Scan,
        Primitive::ArgReduce,
        Primitive::Softmax,
        Primitive::Compact,
        Primitive::SegmentedReduce,
        Primitive::Histogram,
        Primitive::FloatReduce,
        Primitive::ExactSum,
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
        }
    }

    /// The builder of its GPU cases.
    pub fn gpu_cases(self) -> CaseBuilder {
        self.runners().0
    }

    /// The registrar of its benchmark entries.
    pub fn bench_entries(self) -> BenchRegistrar {
        self.runners().1
    }

    /// Its GPU case builder and its benchmark registrar, one row per
    /// primitive (so a new primitive is wired into both in one place).
    fn runners(self) -> (CaseBuilder, BenchRegistrar) {
        use crate::bench::entries as e;
        match self {
            Primitive::Reduce => (gpu::reduce::cases, e::reduce::register),
            Primitive::Scan => (gpu::scan::cases, e::scan::register),
            Primitive::ArgReduce => (gpu::arg_reduce::cases, e::arg_reduce::register),
            Primitive::Softmax => (gpu::softmax::cases, e::softmax::register),
            Primitive::Compact => (gpu::compact::cases, e::compact::register),
            Primitive::SegmentedReduce => (gpu::segmented_reduce::cases, e::segmented::register),
            Primitive::Histogram => (gpu::histogram::cases, e::histogram::register),
            Primitive::FloatReduce => (gpu::float_reduce::cases, e::float_reduce::register),
            Primitive::ExactSum => (
                // The whole-input sums, then the segmented ones (one contract).
                |plan, out| {
                    gpu::exact_sum::cases(plan, out);
                    gpu::exact_segmented_sum::cases(plan, out);
                },
                // Beside the float sums and beside the segmented sums.
                |config, registry| {
                    e::exact_sum::register(config, registry);
                    e::exact_segmented_sum::register(config, registry);
                },
            ),
        }
    }
}

impl Primitive {
    /// Its contracts for user kernels and the builder of their raw cases
    /// (`harness check`, `harness cases`); None while it has none.
    pub fn raw_cases(self) -> Option<(&'static [Contract], RawBuilder)> {
        use crate::sweep::raw;
        match self {
            Primitive::Reduce => Some((&raw::reduce::CONTRACTS, raw::reduce::cases)),
            Primitive::Scan => Some((&raw::scan::CONTRACTS, raw::scan::cases)),
            Primitive::ArgReduce => Some((&raw::arg_reduce::CONTRACTS, raw::arg_reduce::cases)),
            Primitive::Softmax => Some((&raw::softmax::CONTRACTS, raw::softmax::cases)),
            Primitive::Compact => Some((&raw::compact::CONTRACTS, raw::compact::cases)),
            Primitive::SegmentedReduce => Some((&raw::segmented_reduce::CONTRACTS, raw::segmented_reduce::cases)),
            Primitive::Histogram => Some((&raw::histogram::CONTRACTS, raw::histogram::cases)),
            Primitive::FloatReduce => Some((&raw::float_reduce::CONTRACTS, raw::float_reduce::cases)),
            Primitive::ExactSum => Some((&raw::exact_sum::CONTRACTS, raw::exact_sum::cases)),
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

    /// Every command's `--primitive` takes exactly the registry's values.
    #[test]
    fn every_command_line_primitive_list_is_the_registry() {
        use clap::CommandFactory;
        let names: Vec<String> = Primitive::ALL.iter().map(|p| p.name().to_string()).collect();
        let cli = crate::cli::Cli::command();
        for command in ["sweep", "sanitize", "bench"] {
            let sub = cli.find_subcommand(command).expect("command exists");
            let arg = sub.get_arguments().find(|a| a.get_id() == "primitives").expect("--primitive");
            let values: Vec<String> = arg.get_possible_values().iter().map(|v| v.get_name().to_string()).collect();
            assert_eq!(values, names, "harness {command} --primitive");
        }
    }

    /// Every GPU case, benchmark entry and sanitizer job names a registry
    /// primitive, and every registry primitive has cases and entries.
    #[test]
    fn every_case_bench_entry_and_sanitizer_job_comes_from_the_registry() {
        let plan = SweepPlan {
            seed: 1,
            sizes: vec![33],
            quick: true,
            primitives: vec![],
            variants: vec![],
            one_family: false,
        };
        let cases = gpu::catalogue(&plan);
        for p in Primitive::ALL {
            assert!(cases.iter().any(|c| c.id.primitive == p.name()), "{p} has no GPU case");
            let jobs = gpu::catalogue(&SweepPlan::sanitizer(p, &crate::sanitize::SANITIZE_SIZES, 1, &[]));
            assert!(!jobs.is_empty() && jobs.iter().all(|c| c.id.primitive == p.name()), "{p} sanitizer cases");
        }
        assert!(cases.iter().all(|c| Primitive::from_name(&c.id.primitive).is_some()));
        let args =
            match <crate::cli::Cli as clap::Parser>::try_parse_from(["harness", "bench"]).expect("parses").command {
                crate::cli::Command::Bench(b) => b.args,
                _ => unreachable!("a bench"),
            };
        let config = crate::bench::config::BenchConfig::from_args(&args);
        let entries = crate::bench::entries::register_all(&config);
        let groups: Vec<&str> = entries.entries.iter().map(|e| e.id.primitive).collect();
        let order = crate::bench::entries::report_order();
        assert!(groups.iter().all(|g| order.contains(g)), "{groups:?}");
        for p in Primitive::ALL {
            let mut one = crate::bench::entries::Registry::default();
            (p.bench_entries())(&config, &mut one);
            assert!(!one.entries.is_empty(), "{p} has no benchmark entry");
        }
    }
}
