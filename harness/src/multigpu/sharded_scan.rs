//! Sharded int32 -> int64 exclusive scan: each GPU scans its contiguous
//! shard with the single-GPU `DecoupledLookback` kernel (`ScanPlan`), NCCL
//! all-gathers the shard totals (int64), and each GPU adds its exclusive
//! offset (the sum of the totals of the ranks before it) to its shard.
//!
//! Per rank, on its stream: `[local]` the exclusive scan plan into `out`,
//! then `mg_shard_total` (one thread: `out[m-1] + x[m-1]`) into `total` (an
//! empty shard: a memset of `total` to 0); `[combine]` `ncclAllGather(total
//! -> gathered, 1 x int64 per rank)`; `[offset]` on ranks r >= 1 with a
//! non-empty shard, the offset pass `mg_add_offset` (`out[i] +=
//! gathered[0] + ... + gathered[r-1]`; rank 0's offset is 0 and it skips it).
//! The offset pass reads and writes every int64 output once more (16 bytes
//! per element, beside the scan's 12): it is the price of composing the
//! unchanged single-GPU kernel, whose look-back has no initial-value input.

use super::cluster::{Cluster, RankEnv};
use super::shard::{partition, Shard, ValueRange};
use anyhow::{Context, Result};
use cudarc::driver::CudaSlice;
use kernels::{ScanKind, ScanPlan, ScanVariant};
use std::sync::Arc;

/// The single-GPU schedule every shard runs.
pub const VARIANT: ScanVariant = ScanVariant::DecoupledLookback;

/// One rank's sharded scan, with every buffer allocated up front (poisoned),
/// so that `enqueue_*` only launch.
pub struct ScanRank<'g> {
    rank: usize,
    len: usize,
    plan: Option<ScanPlan<'g, i32>>,
    /// This rank's shard total (1 element).
    pub total: CudaSlice<i64>,
    /// Every rank's shard total after the all-gather (world elements).
    pub gathered: CudaSlice<i64>,
}

impl<'g> ScanRank<'g> {
    /// Plans the exclusive scan of a `len`-element shard on `env`'s GPU.
    pub fn new(env: &'g RankEnv, len: usize) -> Result<ScanRank<'g>> {
        let plan =
            if len == 0 { None } else { Some(ScanPlan::<i32>::new(&env.gpu, VARIANT, ScanKind::Exclusive, len)?) };
        Ok(ScanRank {
            rank: env.rank,
            len,
            plan,
            total: env.gpu.alloc_poisoned(1)?,
            gathered: env.gpu.alloc_poisoned(env.world)?,
        })
    }

    /// Device bytes the scan plan allocates for a `len`-element shard
    /// (the look-back scratch of int64 tiles), plus the small buffers here.
    pub fn scratch_bytes(len: usize, world: usize) -> usize {
        let tiles = len.div_ceil(kernels::scan::LOOKBACK_TILE_ITEMS);
        8 * kernels::lookback::scratch_words(tiles, 8) + 8 * (1 + world) + 256
    }

    /// Enqueues the local scan of `input` into `out` and the shard total
    /// (None / empty `out` for an empty shard).
    pub fn enqueue_local(
        &mut self,
        env: &RankEnv,
        input: Option<&CudaSlice<i32>>,
        out: Option<&mut CudaSlice<i64>>,
    ) -> Result<()> {
        match (&mut self.plan, input, out) {
            (Some(plan), Some(input), Some(out)) => {
                plan.enqueue(input, out)?;
                env.helpers.shard_total(&env.gpu, out, input, &mut self.total)?;
            }
            (None, _, _) => env.gpu.stream().memset_zeros(&mut self.total).context("zeroing an empty shard's total")?,
            _ => anyhow::bail!("a {}-element shard needs its input and output", self.len),
        }
        Ok(())
    }

    /// Enqueues the combine: the NCCL all-gather of the shard totals.
    pub fn enqueue_combine(&mut self, env: &RankEnv) -> Result<()> {
        env.comm.all_gather(&self.total, &mut self.gathered)
    }

    /// Whether this rank runs the offset pass (rank >= 1, non-empty shard).
    pub fn needs_offset(&self) -> bool {
        self.rank > 0 && self.len > 0
    }

    /// Enqueues the offset pass on `out` (nothing on rank 0 or an empty shard).
    pub fn enqueue_offset(&mut self, env: &RankEnv, out: Option<&mut CudaSlice<i64>>) -> Result<()> {
        match out {
            Some(out) if self.needs_offset() => env.helpers.add_offset(&env.gpu, out, &self.gathered, self.rank),
            _ => Ok(()),
        }
    }

    /// After a wait: a kernel-reported fault of the local scan (look-back spin).
    pub fn check_fault(&self) -> Result<()> {
        if let Some(plan) = &self.plan {
            plan.check_fault()?;
        }
        Ok(())
    }
}

/// What every rank computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankScan {
    /// The rank's shard.
    pub shard: Shard,
    /// Its part of the exclusive scan of the whole array.
    pub output: Vec<i64>,
    /// The shard totals it received from the all-gather (rank order).
    pub gathered: Vec<i64>,
}

/// The sharded exclusive scan of host `input` over `cluster`: each rank's
/// part of the output (concatenated in rank order it is the whole scan) and
/// the totals it gathered. Shard errors come back before any GPU work.
pub fn sharded_scan(cluster: &Cluster, input: Arc<Vec<i32>>) -> Result<Vec<RankScan>> {
    let shards = Arc::new(partition(input.len() as u64, cluster.world(), ValueRange::of(&input))?);
    cluster.run(move |env| {
        let shard = shards[env.rank];
        let setup = (|| -> Result<_> {
            let buffers = if shard.is_empty() {
                None
            } else {
                Some((env.gpu.upload(&input[shard.range()])?, env.gpu.alloc_poisoned::<i64>(shard.len)?))
            };
            Ok((buffers, ScanRank::new(env, shard.len)?))
        })();
        let (mut buffers, mut rank) = env.agree_on(setup)?;
        let (input, mut out) = match &mut buffers {
            Some((input, out)) => (Some(&*input), Some(out)),
            None => (None, None),
        };
        rank.enqueue_local(env, input, out.as_deref_mut())?;
        rank.enqueue_combine(env)?;
        rank.enqueue_offset(env, out)?;
        env.wait("sharded scan")?;
        rank.check_fault()?;
        let output = match &buffers {
            Some((_, out)) => env.gpu.download(out)?,
            None => Vec::new(),
        };
        Ok(RankScan { shard, output, gathered: env.gpu.download(&rank.gathered)? })
    })
}
