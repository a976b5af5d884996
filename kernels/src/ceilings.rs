//! Bandwidth ceilings measured beside every benchmark: a read-only kernel
//! and a device-to-device copy. Both only enqueue work (no sync).

use crate::device::Gpu;
use crate::error::{DriverContext, GpuError, GpuResult};
use crate::kernel_family::KernelFamily;
use crate::launch::{config, persistent_grid, BLOCK_THREADS};
use cudarc::driver::{CudaSlice, PushKernelArg};

impl Gpu {
    /// Enqueues the read-only ceiling over `input`: every element is read once
    /// with 16-byte loads and their sum is *added* to `sink[0]` (the caller
    /// zeroes it to check the result). Logical bytes: 4n.
    pub fn enqueue_read_ceiling_i32(&self, input: &CudaSlice<i32>, sink: &mut CudaSlice<i64>) -> GpuResult<()> {
        let n = input.len();
        if sink.is_empty() {
            return Err(GpuError::InvalidInput {
                primitive: "read_ceiling",
                variant: "i32",
                n,
                reason: "sink must hold one int64".into(),
            });
        }
        let vectors = (n / 4) as u64;
        let tail_count = (n % 4) as u32;
        let kernel = "read_ceiling_i32";
        let function = self.function(KernelFamily::Ceilings, kernel)?;
        let grid = persistent_grid(self, KernelFamily::Ceilings, kernel, BLOCK_THREADS, 0)?;
        let tail = input.slice((n - tail_count as usize)..);
        let stream = self.stream();
        let mut launch = stream.launch_builder(&function);
        launch.arg(input).arg(&vectors).arg(&tail).arg(&tail_count).arg(sink);
        // SAFETY: argument types match the kernel signature; `input` holds
        // `vectors * 4 + tail_count` elements and cudaMalloc aligns to 256 B.
        unsafe { launch.launch(config(grid, BLOCK_THREADS, 0)) }
            .context(|| format!("read_ceiling/i32 n={n}: launch"))?;
        Ok(())
    }

    /// Enqueues a device-to-device copy of `src` into `dst` (equal lengths).
    /// Logical bytes: 2 x the buffer size (read + write).
    pub fn enqueue_copy_ceiling<T: cudarc::driver::DeviceRepr>(
        &self,
        src: &CudaSlice<T>,
        dst: &mut CudaSlice<T>,
    ) -> GpuResult<()> {
        if src.len() != dst.len() {
            return Err(GpuError::InvalidInput {
                primitive: "copy_ceiling",
                variant: "d2d",
                n: src.len(),
                reason: format!("destination holds {} elements", dst.len()),
            });
        }
        self.stream().memcpy_dtod(src, dst).context(|| format!("copy_ceiling n={}", src.len()))
    }
}
