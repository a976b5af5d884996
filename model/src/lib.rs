//! # primlab `model`: exact CPU semantics of the GPU parallel primitives
//!
//! Three layers:
//! * **Direct definitions** ([`reduce`], [`scan`], [`arg_reduce`], [`softmax`], [`compact`],
//!   [`segmented_reduce`], [`histogram`], [`float_reduce`], [`exact`] (`exact_sum`), [`topk`],
//!   [`topk_sample`]): what each primitive must return, with its contract (tie rules,
//!   nonfinite policies, masks, int64 overflow). Each file bears its primitive's name, as its
//!   kernel, launch code, cases and bench entries do.
//! * **Hardware-scope models** ([`hardware`]): the warp shuffle tree with lane participation,
//!   the 256-thread block reduction, multi-pass reduction, Blelloch and Hillis–Steele scans
//!   and the recursive device scan, combine for combine in the order the CUDA kernels use, so
//!   overflow is detected where the GPU would hit it and float trees are reproduced bit for
//!   bit.
//! * **Tooling**: seeded [`generators`], JSON [`fixtures`], the CPU [`conformance`] sweep, and
//!   the [`digest`]s receipts keep of inputs and expected outputs.
//!
//! Everything is generic over one [`operator::Operator`] trait: the schedule never knows
//! which operator it runs. No function panics on user input; failures are [`ModelError`]s
//! naming the primitive and, where useful, the index, lane, row or value.

#![deny(missing_docs)]

pub mod arg_reduce;
pub mod compact;
pub mod conformance;
pub mod digest;
mod error;
pub mod exact;
pub mod fixtures;
pub mod float_reduce;
pub mod generators;
pub mod hardware;
pub mod histogram;
pub mod operator;
pub mod pieces;
pub mod reduce;
pub mod scalar;
pub mod scan;
pub mod segmented_reduce;
pub mod softmax;
pub mod topk;
pub mod topk_sample;

pub use error::ModelError;
