//! # kernels: primlab's CUDA kernels, launched from Rust
//!
//! CUDA sources live in `kernels/cuda/` (one file per primitive family plus
//! `common/` warp and block primitives that are generic over the combine
//! operator). They are embedded at build time and compiled at run time by
//! NVRTC for the compute capability of the GPU found (`-std=c++17 -lineinfo`),
//! once per process and family.
//!
//! Open a [`Gpu`] and call a primitive on it; every call returns a
//! [`GpuResult`]. With no driver or no device, [`Gpu::open`] returns
//! [`GpuError::Unavailable`] with the reason (it never panics), which
//! `harness sweep` reports as "GPU checks skipped (no GPU: <reason>)".
#![deny(missing_docs)]

pub mod ceilings;
pub mod compile;
pub mod device;
pub mod error;
pub mod family;
pub mod launch;
pub mod sources;

pub use device::{probe_driver, DeviceInfo, Gpu, GpuOptions, POISON_BYTE};
pub use error::{GpuError, GpuResult};
pub use family::Family;
pub use sources::SOURCE_HASH;

// Row-wise families and float reductions.
pub mod arg_reduce;
pub mod float_reduce;
pub mod softmax;
pub use arg_reduce::{ArgElement, ArgPair, ArgReducePlan, ArgReduceVariant, ArgRowsPlan, ArgRowsVariant, Extremum};
pub use float_reduce::{FloatElement, FloatReducePlan, FloatReduceVariant};
pub use softmax::{softmax_error_bound_ulps, softmax_tolerance, SoftmaxDtype, SoftmaxElement, SoftmaxPlan};
pub use softmax::{SoftmaxTolerance, SoftmaxVariant};
