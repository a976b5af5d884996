//! The input element types the integer kernels (`cuda/reduce.cu` and
//! `cuda/scan.cu`) are compiled for: `i32` and [`AffineMap`]. The element
//! traits of both ([`crate::ReduceElement`], [`crate::ScanElement`]) have
//! [`Sealed`] as a supertrait; it lives in this private module, so no type
//! outside the crate can claim kernels that do not exist.

use crate::affine::AffineMap;

/// Implemented exactly for the types the integer kernels exist for.
pub trait Sealed {}

impl Sealed for i32 {}
impl Sealed for AffineMap {}
