//! The [`Gpu`]: one CUDA context, one stream, and the compiled modules,
//! compiled by NVRTC for the GPU found, once per process and family.

use crate::compile::{arch_name, cached_cubin, ensure_nvrtc, nvrtc_version};
use crate::error::{DriverContext, GpuError, GpuResult};
use crate::kernel_family::KernelFamily;
use cudarc::driver::{
    result as driver, sys, CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtrMut, DeviceRepr,
};
use cudarc::nvrtc::Ptx;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Every byte of a poisoned output buffer. Any element still holding this
/// pattern after a run was never written.
pub const POISON_BYTE: u8 = 0xA5;

/// The byte of a case's second run ([`Gpu::with_poison_byte`]): it differs
/// from [`POISON_BYTE`] in every bit, so an element a kernel leaves unwritten,
/// or a value a kernel happens to write equal to one poison, cannot pass a
/// run under each; and an unwritten f32 reads as about -2.9e-16 under the
/// first (which a tolerance can absorb) but as about 1.5e16 under the second.
pub const SECOND_POISON_BYTE: u8 = 0x5A;

/// How to open a [`Gpu`].
#[derive(Debug, Clone, Copy, Default)]
pub struct GpuOptions {
    /// CUDA device ordinal ([`Gpu::open`]; [`Gpu::from_context`] takes the
    /// context's device).
    pub ordinal: usize,
    /// 0 for the real kernels; otherwise the id of a planted bug from the
    /// mutant gallery (`harness mutants`), compiled into every family.
    pub mutant: u32,
}

/// Facts about the device and the software stack, recorded in every receipt.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceInfo {
    /// Device ordinal.
    pub ordinal: usize,
    /// Marketing name, e.g. "NVIDIA H200".
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// NVRTC target, e.g. `sm_90`.
    pub arch: String,
    /// Number of streaming multiprocessors.
    pub sm_count: i32,
    /// L2 cache size in bytes.
    pub l2_bytes: i32,
    /// Device memory in bytes.
    pub total_memory: usize,
    /// Driver API version as an integer, e.g. 13000 for CUDA 13.0.
    pub driver_version: i32,
    /// NVRTC version (major, minor).
    pub nvrtc_version: (i32, i32),
    /// Maximum SM clock in MHz, as the driver reports it.
    pub sm_clock_mhz: i32,
    /// Maximum memory clock in MHz, as the driver reports it.
    pub memory_clock_mhz: i32,
}

/// A CUDA device with its context, one stream, and a cache of compiled
/// families. Every primitive is a method on this object (see the family
/// modules), returning `Result`.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    info: DeviceInfo,
    mutant: u32,
    modules: Arc<ModuleCache>,
    /// The byte [`Gpu::poison`] fills buffers with.
    poison_byte: u8,
}

/// One slot per family, each filled once: a family is compiled by the first
/// caller that needs it while callers of other families go on (the slot's
/// own lock is held during its compilation, the map's only to find it).
type ModuleSlot = Arc<Mutex<Option<Arc<CudaModule>>>>;

/// The compiled modules of one context, shared by every [`Gpu`] on it.
type ModuleCache = Mutex<HashMap<KernelFamily, ModuleSlot>>;

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu").field("info", &self.info).field("mutant", &self.mutant).finish()
    }
}

/// Why no GPU can be used, or `Ok` if the driver library loads and reports
/// at least one device. Never panics (cudarc would, on a missing library).
pub fn probe_driver() -> GpuResult<usize> {
    // SAFETY: only tries to dlopen libcuda by its candidate names.
    if !unsafe { sys::is_culib_present() } {
        return Err(GpuError::Unavailable {
            reason: "libcuda.so not found (no NVIDIA driver on this machine)".to_string(),
        });
    }
    driver::init().map_err(|e| GpuError::Unavailable { reason: format!("cuInit failed: {e}") })?;
    let count = driver::device::get_count()
        .map_err(|e| GpuError::Unavailable { reason: format!("cuDeviceGetCount failed: {e}") })?;
    if count <= 0 {
        return Err(GpuError::Unavailable { reason: "the driver reports no CUDA device".to_string() });
    }
    Ok(count as usize)
}

impl Gpu {
    /// Opens device `options.ordinal`. Fails with [`GpuError::Unavailable`]
    /// when there is no driver or device, and [`GpuError::NvrtcUnavailable`]
    /// when kernels cannot be compiled.
    pub fn open(options: GpuOptions) -> GpuResult<Gpu> {
        let count = probe_driver()?;
        if options.ordinal >= count {
            return Err(GpuError::Unavailable {
                reason: format!("device {} requested, {count} present", options.ordinal),
            });
        }
        ensure_nvrtc()?;
        let ctx = CudaContext::new(options.ordinal)
            .map_err(|e| GpuError::Unavailable { reason: format!("context creation failed: {e}") })?;
        // One stream per Gpu: ordering is by stream order, so cudarc's
        // per-buffer event tracking would only add launch overhead.
        // SAFETY: no buffer is shared across streams.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.default_stream();
        Gpu::from_context(ctx, stream, options)
    }

    /// A `Gpu` on the caller's context and stream: every launch and copy of
    /// this `Gpu` (and of the plans built on it) is ordered on `stream`, so
    /// the caller orders its own work against ours by that stream alone.
    /// `options.ordinal` is ignored (the device is the context's);
    /// `options.mutant` is as for [`Gpu::open`]. The context's settings
    /// (event tracking included) are left as the caller set them.
    ///
    /// Errors: [`GpuError::InvalidInput`] when `stream` belongs to another
    /// context; [`GpuError::NvrtcUnavailable`] when kernels cannot be
    /// compiled; [`GpuError::Driver`] when a device attribute cannot be read.
    pub fn from_context(ctx: Arc<CudaContext>, stream: Arc<CudaStream>, options: GpuOptions) -> GpuResult<Gpu> {
        if !Arc::ptr_eq(stream.context(), &ctx) {
            return Err(GpuError::InvalidInput {
                primitive: "gpu",
                variant: "from_context",
                n: 0,
                reason: "the stream belongs to another CUDA context".into(),
            });
        }
        ensure_nvrtc()?;
        let attribute = |a| ctx.attribute(a).context(|| format!("reading device attribute {a:?}"));
        use sys::CUdevice_attribute as A;
        let compute_capability = ctx.compute_capability().context(|| "reading compute capability".into())?;
        let mut driver_version = 0;
        // SAFETY: a valid out-pointer.
        unsafe { sys::cuDriverGetVersion(&mut driver_version) }.result().context(|| "cuDriverGetVersion".into())?;
        let info = DeviceInfo {
            ordinal: ctx.ordinal(),
            name: ctx.name().context(|| "reading device name".into())?,
            compute_capability,
            arch: arch_name(compute_capability.0, compute_capability.1),
            sm_count: attribute(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            l2_bytes: attribute(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?,
            total_memory: ctx.total_mem().context(|| "reading total memory".into())?,
            driver_version,
            nvrtc_version: nvrtc_version()?,
            sm_clock_mhz: attribute(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)? / 1000,
            memory_clock_mhz: attribute(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)? / 1000,
        };
        Ok(Gpu {
            ctx,
            stream,
            info,
            mutant: options.mutant,
            modules: Arc::new(Mutex::new(HashMap::new())),
            poison_byte: POISON_BYTE,
        })
    }

    /// Device and toolchain facts.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The planted-bug id this Gpu compiles with (0 = the real kernels).
    pub fn mutant(&self) -> u32 {
        self.mutant
    }

    /// The CUDA context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream every launch of this Gpu is ordered on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The module of `family`, compiled and loaded on first use.
    pub fn module(&self, family: KernelFamily) -> GpuResult<Arc<CudaModule>> {
        let slot = {
            let mut modules = self.modules.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            modules.entry(family).or_default().clone()
        };
        let mut slot = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(module) = slot.as_ref() {
            return Ok(module.clone());
        }
        let cubin = cached_cubin(family, &self.info.arch, self.mutant)?;
        let module =
            self.ctx.load_module(Ptx::from_binary(cubin)).context(|| format!("loading module {}", family.file()))?;
        *slot = Some(module.clone());
        Ok(module)
    }

    /// Another `Gpu` on this one's context, with a stream of its own and
    /// this one's compiled modules: work on the two streams may overlap, so
    /// each must use its own buffers (every primitive of this crate
    /// allocates its own). For running independent cases from several
    /// threads at once.
    pub fn on_new_stream(&self) -> GpuResult<Gpu> {
        let stream = self.ctx.new_stream().context(|| "creating a stream".into())?;
        Ok(Gpu {
            ctx: self.ctx.clone(),
            stream,
            info: self.info.clone(),
            mutant: self.mutant,
            modules: self.modules.clone(),
            poison_byte: self.poison_byte,
        })
    }

    /// This handle (the same context, stream and compiled modules) with
    /// buffers poisoned with `byte` ([`Gpu::poison`], [`Gpu::alloc_poisoned`],
    /// and every output a plan poisons): the sweep runs a case a second time
    /// under [`SECOND_POISON_BYTE`].
    pub fn with_poison_byte(&self, byte: u8) -> Gpu {
        Gpu {
            ctx: self.ctx.clone(),
            stream: self.stream.clone(),
            info: self.info.clone(),
            mutant: self.mutant,
            modules: self.modules.clone(),
            poison_byte: byte,
        }
    }

    /// The byte buffers are poisoned with: [`POISON_BYTE`] unless
    /// [`Gpu::with_poison_byte`] chose another.
    pub fn poison_byte(&self) -> u8 {
        self.poison_byte
    }

    /// Compiles and loads every family now (so that later timings and
    /// sanitizer runs do not include compilation).
    pub fn load_all(&self) -> GpuResult<()> {
        for family in KernelFamily::ALL {
            self.module(family)?;
        }
        Ok(())
    }

    /// The `extern "C"` kernel `name` of `family`. The context is made the
    /// calling thread's current one first: a driver call made on the function
    /// outside cudarc's own (the occupancy query of `launch`) acts on the
    /// current context, which a thread other than the one that opened this
    /// `Gpu` does not otherwise have.
    pub fn function(&self, family: KernelFamily, name: &str) -> GpuResult<CudaFunction> {
        self.ctx.bind_to_thread().context(|| "making the CUDA context current on this thread".into())?;
        self.module(family)?.load_function(name).context(|| format!("loading kernel {name} from {}", family.file()))
    }

    /// Copies a host slice to a new device buffer.
    pub fn upload<T: DeviceRepr>(&self, host: &[T]) -> GpuResult<CudaSlice<T>> {
        self.stream.clone_htod(host).context(|| format!("uploading {} elements", host.len()))
    }

    /// Copies a device buffer back to the host (synchronises the stream).
    pub fn download<T: DeviceRepr>(&self, device: &CudaSlice<T>) -> GpuResult<Vec<T>> {
        self.stream.clone_dtoh(device).context(|| format!("downloading {} elements", device.len()))
    }

    /// A new device buffer of `len` elements, every byte the poison byte
    /// ([`Gpu::poison_byte`]).
    pub fn alloc_poisoned<T: DeviceRepr>(&self, len: usize) -> GpuResult<CudaSlice<T>> {
        // SAFETY: the memory is fully written by the memset below before use.
        let mut buffer = unsafe { self.stream.alloc::<T>(len) }.context(|| format!("allocating {len} elements"))?;
        self.poison(&mut buffer)?;
        Ok(buffer)
    }

    /// A new device buffer of `len` elements, uninitialised. Only for
    /// scratch that a kernel fully writes before reading (so that
    /// compute-sanitizer's initcheck can prove it).
    pub fn alloc_uninit<T: DeviceRepr>(&self, len: usize) -> GpuResult<CudaSlice<T>> {
        // SAFETY: callers only hand this to kernels that write before reading.
        unsafe { self.stream.alloc::<T>(len) }.context(|| format!("allocating {len} elements"))
    }

    /// A new zeroed device buffer.
    pub fn alloc_zeroed<T: DeviceRepr + cudarc::driver::ValidAsZeroBits>(&self, len: usize) -> GpuResult<CudaSlice<T>> {
        self.stream.alloc_zeros::<T>(len).context(|| format!("allocating {len} zeroed elements"))
    }

    /// Fills every byte of `buffer` with the poison byte ([`Gpu::poison_byte`],
    /// stream-ordered).
    pub fn poison<T: DeviceRepr>(&self, buffer: &mut CudaSlice<T>) -> GpuResult<()> {
        self.memset_bytes(buffer, self.poison_byte)
    }

    /// Fills every byte of `buffer` with `byte` (stream-ordered).
    pub fn memset_bytes<T: DeviceRepr>(&self, buffer: &mut CudaSlice<T>, byte: u8) -> GpuResult<()> {
        let bytes = buffer.len() * std::mem::size_of::<T>();
        if bytes == 0 {
            return Ok(());
        }
        let (ptr, _record) = buffer.device_ptr_mut(&self.stream);
        // SAFETY: `ptr` addresses `bytes` bytes of a live allocation.
        unsafe { driver::memset_d8_async(ptr, byte, bytes, self.stream.cu_stream()) }
            .context(|| format!("memset of {bytes} bytes"))
    }

    /// `Ok` when `needed` bytes (described by `what`) fit the device's free
    /// memory now, counting what the memory pool holds unused as free
    /// (after a trim of the pool, only on a shortfall), else
    /// [`GpuError::DeviceMemory`] naming both: the limit of a primitive whose
    /// sizes are 64-bit.
    pub fn check_device_memory(
        &self,
        primitive: &'static str,
        variant: &'static str,
        n: usize,
        needed: u64,
        what: impl FnOnce() -> String,
    ) -> GpuResult<()> {
        let (free, _) = self.ctx.mem_get_info().context(|| "reading free device memory".into())?;
        if needed <= free as u64 {
            return Ok(());
        }
        let (free, total) = self.free_after_trim()?;
        if needed <= free as u64 {
            return Ok(());
        }
        Err(GpuError::DeviceMemory {
            primitive,
            variant,
            n,
            needed,
            what: what(),
            free: free as u64,
            total: total as u64,
        })
    }

    /// The device's (free, total) bytes once the stream-ordered allocator has
    /// given back what it holds unused. A buffer dropped on a stream is freed
    /// in stream order into the device's memory pool, which keeps it reserved
    /// (not free to `cuMemGetInfo`) until a synchronisation or a trim releases
    /// it. A trim cannot release a buffer freed on a stream until the host has
    /// observed that free's completion (a synchronisation of that stream or of
    /// the context), and a buffer another worker dropped is freed on that
    /// worker's stream; so, before a shortfall is believed, the whole context
    /// is synchronised, then the pool is trimmed to nothing. Buffers still
    /// live stay counted as used. The wait is on the shortfall path only.
    fn free_after_trim(&self) -> GpuResult<(usize, usize)> {
        self.ctx.synchronize().context(|| "waiting for every stream before reading free device memory".into())?;
        if self.ctx.has_async_alloc() {
            // SAFETY: the device is this context's; the pool is the device's
            // current one, which `cuMemAllocAsync` takes from.
            let pool = unsafe { driver::device::get_mem_pool(self.ctx.cu_device()) }
                .context(|| "reading the device's memory pool".into())?;
            // SAFETY: `pool` is valid (above); a trim releases only unused memory.
            unsafe { driver::mem_pool::trim_to(pool, 0) }.context(|| "trimming the device's memory pool".into())?;
        }
        self.ctx.mem_get_info().context(|| "reading free device memory".into())
    }

    /// Waits for all work on the stream.
    pub fn synchronize(&self) -> GpuResult<()> {
        self.stream.synchronize().context(|| "stream synchronize".into())
    }
}
