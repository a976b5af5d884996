//! Launch geometry shared by the family modules.

use crate::device::Gpu;
use crate::error::{DriverContext, GpuResult};
use crate::family::Family;
use cudarc::driver::{CudaFunction, LaunchConfig};

/// The block size every block-cooperative kernel is compiled for
/// (`kBlockThreads` in `cuda/common/config.cuh`; a test keeps them equal).
pub const BLOCK_THREADS: u32 = 256;

/// A 1-D launch of `grid` blocks of `block` threads with `shared` bytes of
/// dynamic shared memory.
pub fn config(grid: u32, block: u32, shared: u32) -> LaunchConfig {
    LaunchConfig { grid_dim: (grid.max(1), 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: shared }
}

/// Blocks of `function` resident per SM at `block` threads (at least 1).
pub fn resident_blocks_per_sm(function: &CudaFunction, block: u32, shared: usize) -> GpuResult<u32> {
    let blocks = function
        .occupancy_max_active_blocks_per_multiprocessor(block, shared, None)
        .context(|| "occupancy query".into())?;
    Ok(blocks.max(1))
}

/// A grid that fills the device once: SMs x resident blocks per SM.
pub fn persistent_grid(gpu: &Gpu, family: Family, kernel: &str, block: u32, shared: usize) -> GpuResult<u32> {
    let function = gpu.function(family, kernel)?;
    let per_sm = resident_blocks_per_sm(&function, block, shared)?;
    Ok(per_sm * gpu.info().sm_count.max(1) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_threads_matches_the_cuda_constant() {
        let config = crate::sources::source("common/config.cuh").expect("embedded");
        assert!(
            config.contains(&format!("constexpr int kBlockThreads = {BLOCK_THREADS};")),
            "kernels/src/launch.rs BLOCK_THREADS and cuda/common/config.cuh kBlockThreads differ"
        );
    }
}
