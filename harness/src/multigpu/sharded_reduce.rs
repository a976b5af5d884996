//! Sharded int32 -> int64 reduce: each GPU reduces its contiguous shard
//! with the single-GPU `SinglePass` kernel (`ReducePlan`), then one NCCL
//! all-reduce (sum, int64) of the shard totals gives every GPU the total.
//!
//! Per rank, on its stream: `[local]` the reduce plan into `partial` (an
//! empty shard: a memset of `partial` to 0 instead), `[combine]`
//! `ncclAllReduce(partial -> total, 1 x int64, sum)`. No offset pass.

use super::cluster::{Cluster, RankEnv};
use super::shard::{partition, Shard, ValueRange};
use anyhow::{Context, Result};
use cudarc::driver::CudaSlice;
use kernels::{ReducePlan, ReduceVariant};
use std::sync::Arc;

/// The single-GPU schedule every shard runs.
pub const VARIANT: ReduceVariant = ReduceVariant::SinglePass;

/// One rank's sharded reduce, with every buffer allocated up front (the
/// outputs poisoned), so that `enqueue_*` only launch.
pub struct ReduceRank<'g> {
    plan: Option<ReducePlan<'g, i32>>,
    /// This rank's shard total (1 element).
    pub partial: CudaSlice<i64>,
    /// The all-reduced total (1 element).
    pub total: CudaSlice<i64>,
}

impl<'g> ReduceRank<'g> {
    /// Plans the reduce of a `len`-element shard on `env`'s GPU.
    pub fn new(env: &'g RankEnv, len: usize) -> Result<ReduceRank<'g>> {
        let plan = if len == 0 { None } else { Some(ReducePlan::<i32>::new(&env.gpu, VARIANT, len)?) };
        Ok(ReduceRank { plan, partial: env.gpu.alloc_poisoned(1)?, total: env.gpu.alloc_poisoned(1)? })
    }

    /// Device bytes this rank allocates beyond its input, at most, on a GPU
    /// of `sm_count` SMs: the persistent grid's int64 partials (at most 8
    /// resident blocks per SM), the done counter and the two outputs.
    pub fn scratch_bytes(sm_count: usize) -> usize {
        sm_count.max(1) * 8 * 8 + 4 + 16 + 256
    }

    /// Enqueues the local reduce of `input` (None for an empty shard).
    pub fn enqueue_local(&mut self, env: &RankEnv, input: Option<&CudaSlice<i32>>) -> Result<()> {
        match (&mut self.plan, input) {
            (Some(plan), Some(input)) => plan.enqueue(input, &mut self.partial)?,
            (None, _) => env.gpu.stream().memset_zeros(&mut self.partial).context("zeroing an empty shard's total")?,
            (Some(_), None) => anyhow::bail!("a {}-element shard needs its input", self.len()),
        }
        Ok(())
    }

    /// Enqueues the combine: the NCCL all-reduce of the shard totals.
    pub fn enqueue_combine(&mut self, env: &RankEnv) -> Result<()> {
        env.comm.all_reduce_sum(&self.partial, &mut self.total)
    }

    /// After a wait: a kernel-reported fault of the local reduce.
    pub fn check_fault(&self) -> Result<()> {
        if let Some(plan) = &self.plan {
            plan.check_fault()?;
        }
        Ok(())
    }

    fn len(&self) -> usize {
        self.plan.as_ref().map_or(0, |p| p.len())
    }
}

/// What every rank computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankReduce {
    /// The rank's shard.
    pub shard: Shard,
    /// Its shard total (before the all-reduce).
    pub partial: i64,
    /// The total it received from the all-reduce.
    pub total: i64,
}

/// The sharded reduce of host `input` over `cluster`: uploads each shard to
/// its GPU, runs the pipeline, and returns every rank's shard total and
/// all-reduced total (rank order). Shard errors (too long, int64 bound)
/// come back before any GPU work.
pub fn sharded_reduce(cluster: &Cluster, input: Arc<Vec<i32>>) -> Result<Vec<RankReduce>> {
    let shards = Arc::new(partition(input.len() as u64, cluster.world(), ValueRange::of(&input))?);
    cluster.run(move |env| {
        let shard = shards[env.rank];
        let setup = (|| -> Result<_> {
            let device_input = if shard.is_empty() { None } else { Some(env.gpu.upload(&input[shard.range()])?) };
            Ok((device_input, ReduceRank::new(env, shard.len)?))
        })();
        let (device_input, mut rank) = env.agree_on(setup)?;
        rank.enqueue_local(env, device_input.as_ref())?;
        rank.enqueue_combine(env)?;
        env.wait("sharded reduce")?;
        rank.check_fault()?;
        let partial = env.gpu.download(&rank.partial)?[0];
        let total = env.gpu.download(&rank.total)?[0];
        Ok(RankReduce { shard, partial, total })
    })
}
