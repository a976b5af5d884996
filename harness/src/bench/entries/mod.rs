//! Benchmark entries: one module per primitive registers its entries (one
//! per variant and size or shape); the runner in `bench::runner` runs them.
//!
//! An entry builds its plan (all scratch allocated), runs it once on a
//! poisoned output and checks the result against a host computation, and
//! only then times it with [`EntryContext::measure`]. A wrong result is an
//! [`Outcome`] with a mismatch (recorded `ok: false`, not timed); any
//! error (GPU, memory) is returned and recorded the same way.

pub mod arg_reduce;
pub mod ceilings;
pub mod check;
pub mod compact;
pub mod exact_segmented_sum;
pub mod exact_sum;
pub mod float_reduce;
pub mod histogram;
pub mod host_value;
mod narrow;
pub mod reduce;
pub mod scan;
pub mod segmented_reduce;
pub mod softmax;
pub mod topk;
pub mod topk_sample;

use super::config::{BenchConfig, Protocol};
use super::pool::InputPool;
use super::record::{BenchSize, SkippedEntry};
use super::timing::{measure, EventTimer, Timing};
use crate::registry::Primitive;
use anyhow::Result;
use kernels::{Gpu, GpuResult};

/// What an entry measures.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryId {
    /// `primlab` or `ceiling`.
    pub implementation: &'static str,
    /// Report group, e.g. `scan`.
    pub primitive: &'static str,
    /// Op name shared with the baselines, e.g. `exclusive_scan_i32_i64`.
    pub op: String,
    /// The schedule.
    pub variant: String,
    /// Size or shape.
    pub size: BenchSize,
    /// Element type.
    pub dtype: &'static str,
}

impl EntryId {
    /// A primlab entry.
    pub fn primlab(
        primitive: &'static str,
        op: impl Into<String>,
        variant: &str,
        size: BenchSize,
        dtype: &'static str,
    ) -> EntryId {
        EntryId {
            implementation: super::record::IMPL_PRIMLAB,
            primitive,
            op: op.into(),
            variant: variant.to_string(),
            size,
            dtype,
        }
    }

    /// `primitive/variant op size`, for errors and the progress bar.
    pub fn label(&self) -> String {
        format!("{}/{} {} {}", self.primitive, self.variant, self.op, self.size.label())
    }

    /// The skip record of this entry.
    pub fn skipped(&self, reason: impl Into<String>) -> SkippedEntry {
        SkippedEntry {
            primitive: self.primitive.to_string(),
            op: self.op.clone(),
            variant: self.variant.clone(),
            size: self.size.label(),
            reason: reason.into(),
        }
    }
}

/// The result of one entry that ran to the end: what it said about itself,
/// then its check and verdict.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// What the entry said about itself before its verdict.
    pub described: Described,
    /// What the check compared.
    pub check: String,
    /// The timing, or the mismatch that stopped it.
    pub verdict: Result<Timing, String>,
}

/// What an entry says about itself before its verdict.
#[derive(Debug, Clone)]
pub struct Described {
    /// Useful bytes of one call.
    pub logical_bytes: u64,
    /// The inputs' cache policy.
    pub cache_policy: String,
    /// What one timed call holds.
    pub timed_region: String,
    /// DRAM bytes the schedule moves per call when nothing stays in L2 (estimate).
    pub bytes_moved_estimate: Option<u64>,
    /// Launches plus memsets per call.
    pub launches: Option<u32>,
    /// Further facts (grids, counts).
    pub params: serde_json::Value,
}

impl Described {
    /// The record of a plan: its timed region, stream operations and DRAM
    /// estimate come from the plan's own description (what its enqueue
    /// puts on the stream), and `params` gains `"kernels"`, the launches as
    /// `{kernel, grid, block, shared_bytes}`, when it is an object.
    pub fn of_plan(
        plan: &kernels::PlanDescription,
        logical_bytes: u64,
        cache_policy: String,
        mut params: serde_json::Value,
    ) -> Described {
        let launches: Vec<serde_json::Value> = plan
            .launches()
            .map(|l| {
                serde_json::json!({ "kernel": l.kernel, "grid": l.grid, "block": l.block, "shared_bytes": l.shared_bytes })
            })
            .collect();
        if let Some(object) = params.as_object_mut() {
            object.insert("kernels".into(), serde_json::Value::Array(launches));
        }
        Described {
            logical_bytes,
            cache_policy,
            timed_region: plan.to_string(),
            bytes_moved_estimate: Some(plan.bytes_moved),
            launches: Some(plan.stream_ops()),
            params,
        }
    }

    /// The outcome of a checked and timed entry.
    pub fn timed(self, check: impl Into<String>, timing: Timing) -> Outcome {
        self.outcome(check.into(), Ok(timing))
    }

    /// The outcome of an entry whose result was wrong (not timed).
    pub fn wrong(self, check: impl Into<String>, mismatch: impl Into<String>) -> Outcome {
        self.outcome(check.into(), Err(mismatch.into()))
    }

    fn outcome(self, check: String, verdict: Result<Timing, String>) -> Outcome {
        Outcome { described: self, check, verdict }
    }
}

/// What an entry runs with.
pub struct EntryContext<'g, 't> {
    /// The device.
    pub gpu: &'g Gpu,
    /// The timing events.
    pub timer: &'t EventTimer,
    /// The timing protocol.
    pub protocol: Protocol,
    /// The inputs of the current size.
    pub pool: InputPool<'g>,
}

impl EntryContext<'_, '_> {
    /// Warm-ups, then the timed calls of `enqueue` (see [`measure`]).
    pub fn measure(&self, elements: usize, enqueue: impl FnMut() -> GpuResult<()>) -> Result<Timing> {
        measure(self.gpu, self.timer, &self.protocol, elements, enqueue)
    }
}

/// The body of an entry.
pub type EntryBody = Box<dyn for<'g, 't> FnOnce(&mut EntryContext<'g, 't>) -> Result<Outcome>>;

/// One runnable entry.
pub struct Entry {
    /// What it measures.
    pub id: EntryId,
    /// Device bytes it allocates beyond the shared inputs (for the memory guard).
    pub device_bytes: u64,
    /// The body.
    pub body: EntryBody,
}

/// The variant name of the records of a primitive's default entry point
/// (its dispatcher, `XVariant::best_for`): the schedule a caller gets, on
/// which the targets are judged. Its params name the schedule it ran
/// (`"picked"`).
pub const DEFAULT_VARIANT: &str = "default";

/// Whether an entry times one named variant or the primitive's default entry point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A named variant, recorded under its own name.
    Variant,
    /// The default entry point's pick, recorded as [`DEFAULT_VARIANT`].
    Default,
}

/// The entries of one op at one size: every variant of `all`, then
/// `picked` (the dispatcher's choice there) once more as the default entry.
pub fn variants_and_default<V: Copy>(all: &[V], picked: V) -> Vec<(V, Role)> {
    all.iter().map(|&v| (v, Role::Variant)).chain([(picked, Role::Default)]).collect()
}

/// Everything the primitive modules registered.
#[derive(Default)]
pub struct Registry {
    /// Entries to run, in registration order.
    pub entries: Vec<Entry>,
    /// Entries not run, with the reason.
    pub skipped: Vec<SkippedEntry>,
}

impl Registry {
    /// Registers an entry.
    pub fn add(
        &mut self,
        id: EntryId,
        device_bytes: u64,
        body: impl for<'g, 't> FnOnce(&mut EntryContext<'g, 't>) -> Result<Outcome> + 'static,
    ) {
        self.entries.push(Entry { id, device_bytes, body: Box::new(body) });
    }

    /// Registers `id`, named after the variant its body runs, in `role`: a
    /// default entry is renamed [`DEFAULT_VARIANT`] and its record's params
    /// gain `"picked"`, the variant it ran.
    pub fn add_as(
        &mut self,
        role: Role,
        mut id: EntryId,
        device_bytes: u64,
        body: impl for<'g, 't> FnOnce(&mut EntryContext<'g, 't>) -> Result<Outcome> + 'static,
    ) {
        match role {
            Role::Variant => self.add(id, device_bytes, body),
            Role::Default => {
                let picked = std::mem::replace(&mut id.variant, DEFAULT_VARIANT.to_string());
                self.add(id, device_bytes, move |ctx| {
                    let mut outcome = body(ctx)?;
                    if let Some(params) = outcome.described.params.as_object_mut() {
                        params.insert("picked".into(), serde_json::Value::String(picked));
                    }
                    Ok(outcome)
                });
            }
        }
    }

    /// Records an entry that will not run.
    pub fn skip(&mut self, id: &EntryId, reason: impl Into<String>) {
        self.skipped.push(id.skipped(reason));
    }
}

/// The group of the bandwidth ceilings in records and reports (not a
/// primitive: every ratio and plot needs them, so they always run first).
pub const CEILINGS: &str = "ceilings";

/// The report order of record groups: the ceilings, then the registry's primitives.
pub fn report_order() -> Vec<&'static str> {
    std::iter::once(CEILINGS).chain(crate::registry::Primitive::ALL.map(|p| p.name())).collect()
}

/// Registers one primitive's benchmark entries (one per variant and size or shape).
pub type BenchRegistrar = fn(&BenchConfig, &mut Registry);

/// The registrar of `primitive`'s benchmark entries.
pub fn registrar(primitive: Primitive) -> BenchRegistrar {
    match primitive {
        Primitive::Reduce => reduce::register,
        Primitive::Scan => scan::register,
        Primitive::ArgReduce => arg_reduce::register,
        Primitive::Softmax => softmax::register,
        Primitive::Compact => compact::register,
        Primitive::SegmentedReduce => segmented_reduce::register,
        Primitive::Histogram => histogram::register,
        Primitive::FloatReduce => float_reduce::register,
        // Beside the float sums and beside the segmented sums.
        Primitive::ExactSum => |config, registry| {
            exact_sum::register(config, registry);
            exact_segmented_sum::register(config, registry);
        },
        // The selections, then the sampler over them.
        Primitive::Topk => |config, registry| {
            topk::register(config, registry);
            topk_sample::register(config, registry);
        },
    }
}

/// Every registry primitive's entries, and the ceilings.
pub fn register_all(config: &BenchConfig) -> Registry {
    let mut registry = Registry::default();
    // The ceilings run whenever any 1-D primitive runs (ratios and plots use them).
    ceilings::register(config, &mut registry);
    for primitive in crate::registry::Primitive::ALL {
        if config.wants(primitive.name()) {
            (registrar(primitive))(config, &mut registry);
        } else if primitive == crate::registry::Primitive::FloatReduce && config.crossover {
            float_reduce::register_crossover(config, &mut registry);
        }
    }
    registry
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::targets::TARGETS;
    use std::collections::BTreeMap;

    fn full_run() -> BenchConfig {
        BenchConfig::from_args(&crate::bench::BenchOptions::default())
    }

    /// Every registry primitive has entries, and every entry names a group of the report.
    #[test]
    fn every_registry_primitive_has_entries() {
        let config = full_run();
        let order = report_order();
        assert!(register_all(&config).entries.iter().all(|e| order.contains(&e.id.primitive)));
        for p in Primitive::ALL {
            let mut one = Registry::default();
            (registrar(p))(&config, &mut one);
            assert!(!one.entries.is_empty(), "{p} has no benchmark entry");
        }
    }

    #[test]
    fn the_default_entry_follows_every_variant_once() {
        let entries = variants_and_default(&[1, 2, 3], 2);
        assert_eq!(entries, [(1, Role::Variant), (2, Role::Variant), (3, Role::Variant), (2, Role::Default)]);
    }

    #[test]
    fn every_op_size_and_dtype_has_one_default_entry_and_every_target_has_one() {
        let registry = register_all(&full_run());
        let mut defaults: BTreeMap<(String, String, &str), usize> = BTreeMap::new();
        for e in registry.entries.iter().filter(|e| e.id.implementation == crate::bench::record::IMPL_PRIMLAB) {
            let count = defaults.entry((e.id.op.clone(), e.id.size.label(), e.id.dtype)).or_default();
            *count += usize::from(e.id.variant == DEFAULT_VARIANT);
        }
        let wrong: Vec<_> = defaults.iter().filter(|(_, &count)| count != 1).collect();
        assert!(wrong.is_empty(), "ops without exactly one default entry: {wrong:?}");
        for spec in &TARGETS {
            assert!(
                registry
                    .entries
                    .iter()
                    .any(|e| e.id.op == spec.op && e.id.size == spec.size && e.id.variant == DEFAULT_VARIANT),
                "target {} has no default entry",
                spec.id
            );
        }
    }
}
