//! What the integer kernels (`cuda/reduce.cu` and `cuda/scan.cu`) share: the
//! input element types they are compiled for, `i32` and [`AffineMap`], and
//! the longest input their one-thread baselines accept. The other schedules
//! have 64-bit sizes and their own grid limits,
//! [`crate::reduce::MAX_LEN`] and [`crate::scan::MAX_LEN`].
//!
//! The element traits of both ([`crate::ReduceElement`],
//! [`crate::ScanElement`]) have [`Sealed`] as a supertrait; it lives in this
//! private module, so no type outside the crate can claim kernels that do not
//! exist.

use crate::affine::AffineMap;

/// The longest input the one-thread serial baseline accepts (so that a sweep
/// at 2^28 does not spend minutes in one thread).
pub const SERIAL_MAX_LEN: usize = 1 << 22;

/// Implemented exactly for the types the integer kernels exist for.
pub trait Sealed {}

impl Sealed for i32 {}
impl Sealed for AffineMap {}

#[cfg(test)]
#[path = "int_element_tests.rs"]
mod tests;
