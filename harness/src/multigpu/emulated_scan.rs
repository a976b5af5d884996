//! The sharded scan's device steps for V *virtual* ranks on one GPU, with
//! the all-gather replaced by a host copy: local look-back scans of V
//! shards, `mg_shard_total` of each, then the offset pass `mg_add_offset`
//! with ranks 1..V-1 and non-zero offsets.
//!
//! Why: NCCL refuses two ranks on one device, so on a one-GPU machine the
//! real sharded scan runs with a single rank, whose offset is always 0.
//! This case puts every rank >= 1 code path but the collective itself (the
//! offset pass with real offsets, odd lengths, empty shards) through the
//! GPU and the model on any machine, one GPU included. It runs on GPU 0 of
//! the cluster; the other GPUs sit it out.

use super::cluster::Cluster;
use super::shard::{partition, ValueRange};
use super::sharded_scan::VARIANT;
use anyhow::{anyhow, Result};
use kernels::{ScanKind, ScanPlan};
use std::sync::Arc;

/// The virtual ranks of the emulated cases.
pub const VIRTUAL_RANKS: usize = 4;

/// What GPU 0 computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmulatedScan {
    /// The stitched exclusive scan (virtual ranks in order).
    pub output: Vec<i64>,
    /// Each virtual shard's total from `mg_shard_total` (0 for an empty one).
    pub totals: Vec<i64>,
}

/// The exclusive scan of `input` as `virtual_ranks` ranks would compute it,
/// all on GPU 0 of `cluster`.
pub fn emulated_scan(cluster: &Cluster, input: Arc<Vec<i32>>, virtual_ranks: usize) -> Result<EmulatedScan> {
    let shards = Arc::new(partition(input.len() as u64, virtual_ranks, ValueRange::of(&input))?);
    let outcomes = cluster.run(move |env| {
        if env.rank != 0 {
            return Ok(None);
        }
        let gpu = &env.gpu;
        let mut parts = Vec::new();
        let mut totals = vec![0i64; shards.len()];
        for shard in shards.iter().filter(|s| !s.is_empty()) {
            let device_input = gpu.upload(&input[shard.range()])?;
            let mut out = gpu.alloc_poisoned::<i64>(shard.len)?;
            let mut total = gpu.alloc_poisoned::<i64>(1)?;
            let mut plan = ScanPlan::<i32>::new(gpu, VARIANT, ScanKind::Exclusive, shard.len)?;
            plan.enqueue(&device_input, &mut out)?;
            env.helpers.shard_total(gpu, &out, &device_input, &mut total)?;
            gpu.synchronize()?;
            plan.check_fault()?;
            totals[shard.rank] = gpu.download(&total)?[0];
            parts.push((shard.rank, out));
        }
        // The all-gather, by host copy: every virtual rank sees all totals.
        let gathered = gpu.upload(&totals)?;
        for (rank, out) in parts.iter_mut().filter(|(rank, _)| *rank > 0) {
            env.helpers.add_offset(gpu, out, &gathered, *rank)?;
        }
        gpu.synchronize()?;
        let mut output = Vec::with_capacity(input.len());
        for (_, out) in &parts {
            output.extend(gpu.download(out)?);
        }
        Ok(Some(EmulatedScan { output, totals }))
    })?;
    outcomes.into_iter().next().flatten().ok_or_else(|| anyhow!("GPU 0 returned no emulated scan"))
}
