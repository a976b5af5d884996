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
//! `harness sweep` reports as `"GPU checks skipped (no GPU: <reason>)"`.
//!
//! ## From another program
//!
//! [`Gpu::from_context`] builds a `Gpu` on the caller's cudarc context and
//! stream; every launch is then ordered on that stream. The plans
//! ([`ReducePlan`], [`ScanPlan`], ...) allocate their scratch once and
//! enqueue on caller-owned device buffers: whole `CudaSlice`s, or (reduce
//! and scan) `CudaView`s starting at a [`launch::BUFFER_ALIGN`]-byte
//! boundary. bf16 data is [`half::bf16`] on the host and on the device. The
//! cudarc this crate is built with is re-exported as [`cudarc`]. See
//! `examples/reduce_on_my_buffers.rs`.
#![deny(missing_docs)]

/// The cudarc version the public API uses (contexts, streams, buffers).
pub use cudarc;

#[macro_use]
mod device_pod;
#[macro_use]
mod view_plan;

pub mod affine;
pub mod arg_reduce;
pub mod ceilings;
pub mod compact;
pub mod compile;
pub mod device;
pub mod dispatch;
pub mod error;
pub mod exact_segmented_sum;
pub mod exact_sum;
#[cfg(test)]
mod family_build_checks;
pub mod float_reduce;
pub mod histogram;
mod int_element;
pub mod kernel_family;
pub mod launch;
pub mod lookback;
pub mod mutant;
mod mutant_patches;
pub mod plan_description;
pub mod policy;
pub mod reduce;
pub mod scan;
pub mod segmented_reduce;
pub mod softmax;
pub mod sources;
pub mod topk;
pub mod user_source;
pub mod windows;

pub use affine::AffineMap;
pub use device::{probe_driver, DeviceInfo, Gpu, GpuOptions, POISON_BYTE, SECOND_POISON_BYTE};
pub use error::{GpuError, GpuResult};
pub use half::bf16;
pub use kernel_family::KernelFamily;
pub use plan_description::PlanDescription;
pub use reduce::{ReduceElement, ReducePlan, ReduceVariant};
pub use scan::{blelloch_levels, ScanElement, ScanKind, ScanPlan, ScanVariant};
pub use sources::SOURCE_HASH;

pub use arg_reduce::{
    ArgElement, ArgPair, ArgReducePlan, ArgReduceVariant, ArgResult, ArgRowsPlan, ArgRowsVariant, Extremum,
};
pub use compact::{CompactOutput, CompactPlan, CompactVariant, Selector, SelectorKind};
pub use exact_segmented_sum::{ExactSegmentedLaunch, ExactSegmentedSchedule, ExactSegmentedSumPlan};
pub use exact_sum::{ExactSumGrid, ExactSumPlan, ExactSumVariant};
pub use float_reduce::{FloatElement, FloatReducePlan, FloatReduceVariant};
pub use histogram::{HistogramPlan, HistogramSample, HistogramSpec, HistogramVariant};
pub use segmented_reduce::{SegmentArgF32, SegmentOffsets, SegmentedOp, SegmentedPlan, SegmentedVariant};
pub use softmax::{
    softmax_error_bound_ulps, softmax_tolerance, SoftmaxDtype, SoftmaxElement, SoftmaxPlan, SoftmaxTolerance,
    SoftmaxVariant,
};
pub use topk::{SampleSpec, TopkElement, TopkNan, TopkPlan, TopkSamplePlan, TopkSpec, TopkVariant};
