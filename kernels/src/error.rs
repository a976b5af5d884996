//! Errors of the kernels crate. Every variant that concerns a launch names the
//! primitive, the variant and the size, so a failure reproduces from one line.

use thiserror::Error;

/// Anything that can go wrong between a host slice and a GPU result.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum GpuError {
    /// No usable GPU: the driver library is missing, no device is present, or
    /// the context could not be created. `harness sweep` reports this as
    /// `"GPU checks skipped (no GPU: <reason>)"`.
    #[error("no GPU: {reason}")]
    Unavailable {
        /// Why no GPU can be used, in words.
        reason: String,
    },

    /// NVRTC (`libnvrtc.so.13`) could not be loaded, so no kernel can be compiled.
    #[error("no NVRTC: {reason}")]
    NvrtcUnavailable {
        /// Why NVRTC cannot be used, in words.
        reason: String,
    },

    /// NVRTC rejected a kernel source (or, in strict mode, warned about it).
    #[error("NVRTC failed to compile {module} for {arch}:\n{log}")]
    Compile {
        /// The CUDA family file, e.g. `scan.cu`.
        module: String,
        /// The target architecture, e.g. `sm_90`.
        arch: String,
        /// NVRTC's log.
        log: String,
    },

    /// A CUDA driver call failed.
    #[error("CUDA driver error in {context}: {source}")]
    Driver {
        /// What was being done (primitive, variant, size where known).
        context: String,
        /// The driver's error.
        #[source]
        source: cudarc::driver::DriverError,
    },

    /// The input cannot be processed by this primitive/variant (empty, too
    /// long for the accumulator or the index type, bad offsets, ...).
    #[error("{primitive}/{variant} n={n}: {reason}")]
    InvalidInput {
        /// Primitive name, e.g. `scan`.
        primitive: &'static str,
        /// Variant name, e.g. `decoupled_lookback`.
        variant: &'static str,
        /// Number of input elements.
        n: usize,
        /// What is wrong, in words.
        reason: String,
    },

    /// The input holds a value the primitive's contract rejects (NaN or ±inf
    /// for arg reductions and softmax). `index` is the first offending element.
    #[error("{primitive}/{variant} n={n}: nonfinite input at index {index}")]
    NonFinite {
        /// Primitive name.
        primitive: &'static str,
        /// Variant name.
        variant: &'static str,
        /// Number of input elements.
        n: usize,
        /// First offending flat index.
        index: usize,
    },

    /// Softmax rows with no unmasked logit. No output row is written with NaN.
    #[error("softmax/{variant} rows={rows} cols={cols}: all-masked rows {masked_rows:?}")]
    AllMasked {
        /// Variant name.
        variant: &'static str,
        /// Number of rows.
        rows: usize,
        /// Number of columns.
        cols: usize,
        /// Every all-masked row, ascending.
        masked_rows: Vec<usize>,
    },

    /// The buffers a call needs do not fit the device's free memory: the
    /// real limit on n of a primitive whose indices are 64-bit (its
    /// `max_len()` is a grid limit far past any device memory).
    #[error(
        "{primitive}/{variant} n={n}: needs {} of device memory ({what}), {} of the device's {} are free",
        gigabytes(*.needed), gigabytes(*.free), gigabytes(*.total)
    )]
    DeviceMemory {
        /// Primitive name.
        primitive: &'static str,
        /// Variant name.
        variant: &'static str,
        /// Number of input elements.
        n: usize,
        /// Bytes the call would allocate.
        needed: u64,
        /// What they are, in words (e.g. "input 34.4 GB, output and scratch 8 bytes").
        what: String,
        /// Bytes free on the device when asked.
        free: u64,
        /// The device's memory in bytes.
        total: u64,
    },

    /// A kernel reported a broken internal protocol, e.g. a look-back spin that
    /// ran out instead of hanging.
    #[error("{primitive}/{variant} n={n}: {reason}")]
    KernelFault {
        /// Primitive name.
        primitive: &'static str,
        /// Variant name.
        variant: &'static str,
        /// Number of input elements.
        n: usize,
        /// What the kernel reported.
        reason: String,
    },
}

/// `bytes` in decimal gigabytes with one decimal (`34.4 GB`), or in bytes
/// below 0.1 GB.
pub fn gigabytes(bytes: u64) -> String {
    if bytes < 100_000_000 {
        format!("{bytes} bytes")
    } else {
        format!("{:.1} GB", bytes as f64 / 1e9)
    }
}

/// Result alias of the kernels crate.
pub type GpuResult<T> = Result<T, GpuError>;

impl GpuError {
    /// `Ok` when a plan made for `n` elements is given an input of `len`, else `InvalidInput`
    /// naming both counts.
    pub fn check_planned_len(primitive: &'static str, variant: &'static str, n: usize, len: usize) -> GpuResult<()> {
        if len == n {
            return Ok(());
        }
        Err(GpuError::InvalidInput {
            primitive,
            variant,
            n,
            reason: format!("planned for {n} elements, input holds {len}"),
        })
    }

    /// `Ok` when `n` is within `max_len`, the longest input `variant` of
    /// `primitive` accepts (inclusive), else `InvalidInput` naming the limit.
    pub fn check_max_len(primitive: &'static str, variant: &'static str, max_len: usize, n: usize) -> GpuResult<()> {
        if n <= max_len {
            return Ok(());
        }
        Err(GpuError::InvalidInput {
            primitive,
            variant,
            n,
            reason: format!("the {variant} variant accepts at most {max_len} elements"),
        })
    }

    /// `Ok` when a plan of `variant` can be made for `n` elements: `1 <= n <=
    /// max_len` ([`GpuError::check_max_len`] first). For `n = 0`,
    /// `InvalidInput` naming what the host method makes of an empty input
    /// without a launch instead (`empty_input`, e.g. "reduces to the identity").
    pub fn check_plan_len(
        primitive: &'static str,
        variant: &'static str,
        max_len: usize,
        n: usize,
        empty_input: &str,
    ) -> GpuResult<()> {
        GpuError::check_max_len(primitive, variant, max_len, n)?;
        if n > 0 {
            return Ok(());
        }
        Err(GpuError::InvalidInput {
            primitive,
            variant,
            n,
            reason: format!("a plan needs at least one element (an empty input {empty_input} without a launch)"),
        })
    }
}

/// Attaches a context line to a driver error.
pub(crate) trait DriverContext<T> {
    fn context(self, what: impl FnOnce() -> String) -> GpuResult<T>;
}

impl<T> DriverContext<T> for Result<T, cudarc::driver::DriverError> {
    fn context(self, what: impl FnOnce() -> String) -> GpuResult<T> {
        self.map_err(|source| GpuError::Driver { context: what(), source })
    }
}
