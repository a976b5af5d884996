//! Launch geometry shared by the family modules.

use crate::device::Gpu;
use crate::error::{DriverContext, GpuResult};
use crate::kernel_family::KernelFamily;
use cudarc::driver::{CudaFunction, CudaStream, DevicePtr, LaunchConfig};

/// The block size every block-cooperative kernel is compiled for
/// ([`policy::BLOCK`](crate::policy::BLOCK), `kBlockThreads` on the device).
pub const BLOCK_THREADS: u32 = crate::policy::BLOCK.threads;

/// The alignment, in bytes, of the first element of every buffer a plan
/// accepts: the kernels use 16-byte vector loads and stores. Whole
/// `CudaSlice`s always have it (device allocations are 256-byte aligned); a
/// `CudaView` has it when its first element does.
pub const BUFFER_ALIGN: usize = 16;

/// `Ok` when both `input` and `output` start at a multiple of
/// [`BUFFER_ALIGN`] bytes, else the reason in words.
pub fn check_vector_aligned<I, O>(
    input: &impl DevicePtr<I>,
    output: &impl DevicePtr<O>,
    stream: &CudaStream,
) -> Result<(), String> {
    let aligned = |ptr: u64| ptr as usize % BUFFER_ALIGN == 0;
    let (input_ptr, _input_record) = input.device_ptr(stream);
    let (output_ptr, _output_record) = output.device_ptr(stream);
    match (aligned(input_ptr), aligned(output_ptr)) {
        (true, true) => Ok(()),
        (false, _) => Err(format!("the input does not start at a {BUFFER_ALIGN}-byte boundary")),
        (true, false) => Err(format!("the output does not start at a {BUFFER_ALIGN}-byte boundary")),
    }
}

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
pub fn persistent_grid(gpu: &Gpu, family: KernelFamily, kernel: &str, block: u32, shared: usize) -> GpuResult<u32> {
    let function = gpu.function(family, kernel)?;
    let per_sm = resident_blocks_per_sm(&function, block, shared)?;
    Ok(per_sm * gpu.info().sm_count.max(1) as u32)
}
