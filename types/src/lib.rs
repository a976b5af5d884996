//! # primlab-types: plain data shared by the kernels and the model
//!
//! One definition of each type that both the CUDA launch code (`kernels`)
//! and the exact CPU model (`model`) use, so that neither crate depends on
//! the other. Optional features: `cuda` (cudarc `DeviceRepr` impls, for
//! kernel arguments and device buffers) and `serde` (`Serialize` impls, for
//! fixtures).
#![deny(missing_docs)]

pub mod affine;
pub mod histogram_spec;
pub mod topk_spec;

pub use affine::AffineMap;
pub use histogram_spec::{HistogramSpec, MAX_BINS};
pub use topk_spec::{SampleSpec, TopkNan, TopkSpec};
