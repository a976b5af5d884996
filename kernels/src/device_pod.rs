//! Marking `#[repr(C)]` structs that kernels take by value or that the host
//! allocates zeroed.

/// Implements cudarc's `DeviceRepr` (passable to a kernel, copyable to and
/// from the device) and `ValidAsZeroBits` (allocatable with `alloc_zeros`)
/// for each listed type. Sound only for a `#[repr(C)]` struct of plain data
/// whose layout matches its CUDA counterpart and for which all-zero bits are
/// a valid value: the caller states why above the invocation (`// SAFETY:`).
macro_rules! device_pod {
    ($($t:ty),+ $(,)?) => {
        $(
            // SAFETY: stated by the invoker (repr(C) plain data, all-zero bits valid).
            unsafe impl cudarc::driver::DeviceRepr for $t {}
            // SAFETY: as above.
            unsafe impl cudarc::driver::ValidAsZeroBits for $t {}
        )+
    };
}
