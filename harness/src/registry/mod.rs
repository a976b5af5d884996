//! The primitive registry: the one list of primitives ([`primitive`]) and
//! the catalogues each one builds. Every command that
//! iterates over primitives (sweep, sanitize, mutants, bench, report, the
//! receipt gate) takes them from [`Primitive::ALL`], and the command line's
//! `--primitive` values come from the same enum, so `--help` and shell
//! completion list exactly these.

pub mod primitive;

use crate::sweep::gpu::{self, GpuCase};
use crate::sweep::raw::{Contract, RawBuilder};
use crate::sweep::SweepPlan;
pub use primitive::Primitive;

/// Appends one primitive's GPU cases to the catalogue.
pub type CaseBuilder = fn(&SweepPlan, &mut Vec<GpuCase>);

impl Primitive {
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
            // The whole-input sums, then the segmented ones (one contract).
            Primitive::ExactSum => |plan, out| {
                gpu::exact_sum::cases(plan, out);
                gpu::exact_segmented_sum::cases(plan, out);
            },
            // The selections, then the sampler over them.
            Primitive::Topk => |plan, out| {
                gpu::topk::cases(plan, out);
                gpu::topk_sample::cases(plan, out);
            },
        }
    }

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
            Primitive::Topk => Some((&raw::topk::CONTRACTS, raw::topk::cases)),
        }
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

    /// Every GPU case and sanitizer job names a registry primitive, and
    /// every registry primitive has cases.
    #[test]
    fn every_case_and_sanitizer_job_comes_from_the_registry() {
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
            let jobs = gpu::catalogue(&SweepPlan::sanitizer(p, &crate::sweep::sizes::SANITIZE_SIZES, 1, &[]));
            assert!(!jobs.is_empty() && jobs.iter().all(|c| c.id.primitive == p.name()), "{p} sanitizer cases");
        }
        assert!(cases.iter().all(|c| Primitive::from_name(&c.id.primitive).is_some()));
    }
}
