//! The patterns a user kernel's output buffers are filled with before a
//! run, so that an element a kernel never wrote cannot pass for a result.
//!
//! Rule: a poison must be a value no comparison accepts. Integer and opaque
//! buffers get a repeated byte (an exact comparison sees any unwritten
//! element). Float buffers get a signalling NaN of their own width: a byte
//! pattern would read as a tiny finite float (0xA5A5A5A5 is about -2.9e-16
//! in f32), which every tolerance absorbs, so a kernel that accumulates into
//! an output it forgot to clear would pass. Two poisons differ in every byte,
//! so a kernel that happens to write one of them, or leaves an element
//! unwritten, cannot pass a run under each.

use crate::sweep::raw::Dtype;
use cudarc::driver::{sys, CudaSlice, DevicePtrMut, DeviceRepr};
use kernels::{Gpu, GpuError, GpuResult};

/// Which of the two poisons fills outputs.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Poison {
    /// The first run's: bytes 0xA5, positive signalling NaNs.
    #[default]
    First,
    /// The second run's: bytes 0x5A, negative signalling NaNs.
    Second,
}

/// How an element's bytes are read: as an integer or opaque record, or as a
/// float of one width (which then gets a NaN poison).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElementKind {
    /// Integers, flags and records: poisoned bytewise.
    Bytes,
    /// bfloat16.
    BF16,
    /// IEEE binary16.
    F16,
    /// IEEE binary32.
    F32,
    /// IEEE binary64.
    F64,
}

impl ElementKind {
    /// How the poison treats an element of a contract's `dtype`: floats get a
    /// NaN of their width, integers and flags a byte.
    pub fn of_dtype(dtype: Dtype) -> ElementKind {
        match dtype {
            Dtype::Float32 => ElementKind::F32,
            Dtype::Float64 => ElementKind::F64,
            Dtype::Bfloat16 => ElementKind::BF16,
            Dtype::Float16 => ElementKind::F16,
            Dtype::Int32 | Dtype::Int64 | Dtype::Uint8 | Dtype::Uint32 => ElementKind::Bytes,
        }
    }
}

impl Poison {
    /// Both poisons, in run order.
    #[cfg(test)]
    pub const ALL: [Poison; 2] = [Poison::First, Poison::Second];

    /// The byte of integer and opaque buffers.
    pub const fn byte(self) -> u8 {
        match self {
            Poison::First => 0xA5,
            Poison::Second => 0x5A,
        }
    }

    /// One element of `kind`, little-endian: the byte itself for
    /// [`ElementKind::Bytes`], else a signalling NaN (all exponent bits set,
    /// the quiet bit clear, a nonzero payload), positive for the first
    /// poison and negative for the second.
    pub fn pattern(self, kind: ElementKind) -> Vec<u8> {
        let first = self == Poison::First;
        match kind {
            ElementKind::Bytes => vec![self.byte()],
            ElementKind::BF16 => (if first { 0x7fa5u16 } else { 0xffb5 }).to_le_bytes().to_vec(),
            // binary16: exponent 0x7c00, quiet bit 0x0200 clear, payload 0xa5 / 0x5a.
            ElementKind::F16 => (if first { 0x7ca5u16 } else { 0xfc5a }).to_le_bytes().to_vec(),
            ElementKind::F32 => (if first { 0x7fa5_a5a5u32 } else { 0xffb5_5a5a }).to_le_bytes().to_vec(),
            ElementKind::F64 => {
                (if first { 0x7ff4_a5a5_a5a5_a5a5u64 } else { 0xfff5_5a5a_5a5a_5a5a }).to_le_bytes().to_vec()
            }
        }
    }

    /// `bytes` bytes of elements of `kind` (a whole number of elements),
    /// every one this poison's pattern.
    #[cfg(test)]
    pub fn fill(self, kind: ElementKind, bytes: usize) -> Vec<u8> {
        let pattern = self.pattern(kind);
        pattern.repeat(bytes / pattern.len())
    }

    /// The first element of `bytes` that no longer holds this poison.
    pub fn first_written(self, kind: ElementKind, bytes: &[u8]) -> Option<usize> {
        let pattern = self.pattern(kind);
        bytes.chunks(pattern.len()).position(|element| element != pattern.as_slice())
    }
}

/// Fills `buffer` with `pattern` (1, 2, 4 or 8 bytes, repeated; its length
/// must divide the buffer's byte length), stream-ordered on `gpu`'s stream.
pub fn fill_pattern<T: DeviceRepr>(gpu: &Gpu, buffer: &mut CudaSlice<T>, pattern: &[u8]) -> GpuResult<()> {
    let bytes = buffer.len() * std::mem::size_of::<T>();
    if bytes == 0 {
        return Ok(());
    }
    let stream = gpu.stream().cu_stream();
    let (ptr, _record) = buffer.device_ptr_mut(gpu.stream());
    // SAFETY: `ptr` addresses `bytes` bytes of a live allocation, and each
    // memset writes `bytes / width` elements of `width` bytes.
    let result = unsafe {
        match *pattern {
            [b] => sys::cuMemsetD8Async(ptr, b, bytes, stream).result(),
            [a, b] => sys::cuMemsetD16Async(ptr, u16::from_le_bytes([a, b]), bytes / 2, stream).result(),
            [a, b, c, d] => sys::cuMemsetD32Async(ptr, u32::from_le_bytes([a, b, c, d]), bytes / 4, stream).result(),
            _ => {
                // No 64-bit memset exists: a 2-D memset of 32-bit words
                // writes the low word at every even and the high word at
                // every odd position (pitch 8 bytes, one row per element).
                let (low, high) = pattern.split_at(4);
                let word = |w: &[u8]| u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                let rows = bytes / 8;
                sys::cuMemsetD2D32Async(ptr, 8, word(low), 1, rows, stream)
                    .result()
                    .and_then(|_| sys::cuMemsetD2D32Async(ptr + 4, 8, word(high), 1, rows, stream).result())
            }
        }
    };
    result.map_err(|source| GpuError::Driver {
        context: format!("filling {bytes} bytes with the pattern {pattern:02x?}"),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_poisons_are_signalling_nans_of_their_width() {
        for poison in Poison::ALL {
            let f32_bits = u32::from_le_bytes(poison.pattern(ElementKind::F32).try_into().unwrap());
            let value = f32::from_bits(f32_bits);
            assert!(value.is_nan(), "{poison:?} f32");
            assert_eq!(f32_bits & 0x0040_0000, 0, "{poison:?} f32 quiet bit must be clear");
            let f64_bits = u64::from_le_bytes(poison.pattern(ElementKind::F64).try_into().unwrap());
            assert!(f64::from_bits(f64_bits).is_nan(), "{poison:?} f64");
            assert_eq!(f64_bits & (1 << 51), 0, "{poison:?} f64 quiet bit must be clear");
            let b = u16::from_le_bytes(poison.pattern(ElementKind::BF16).try_into().unwrap());
            assert!(half::bf16::from_bits(b).is_nan() && b & 0x0040 == 0, "{poison:?} bf16");
            let h = u16::from_le_bytes(poison.pattern(ElementKind::F16).try_into().unwrap());
            assert!(half::f16::from_bits(h).is_nan() && h & 0x0200 == 0, "{poison:?} f16");
        }
    }

    #[test]
    fn the_two_poisons_differ_in_every_byte() {
        for kind in [ElementKind::Bytes, ElementKind::BF16, ElementKind::F16, ElementKind::F32, ElementKind::F64] {
            let (a, b) = (Poison::First.pattern(kind), Poison::Second.pattern(kind));
            assert_eq!(a.len(), b.len());
            assert!(a.iter().zip(&b).all(|(x, y)| x != y), "{kind:?}: {a:x?} vs {b:x?}");
        }
    }

    #[test]
    fn a_byte_poison_would_pass_a_tolerance_which_is_why_floats_get_nans() {
        let byte_pattern = f32::from_le_bytes([Poison::First.byte(); 4]);
        assert!(byte_pattern.is_finite() && byte_pattern.abs() < 1e-15);
    }

    #[test]
    fn float_dtypes_get_nans_and_the_rest_bytes() {
        assert_eq!(ElementKind::of_dtype(Dtype::Float32), ElementKind::F32);
        assert_eq!(ElementKind::of_dtype(Dtype::Float64), ElementKind::F64);
        assert_eq!(ElementKind::of_dtype(Dtype::Bfloat16), ElementKind::BF16);
        assert_eq!(ElementKind::of_dtype(Dtype::Float16), ElementKind::F16);
        for d in [Dtype::Int32, Dtype::Int64, Dtype::Uint8, Dtype::Uint32] {
            assert_eq!(ElementKind::of_dtype(d), ElementKind::Bytes);
        }
    }

    #[test]
    fn the_first_written_element_is_found() {
        let mut bytes = Poison::Second.fill(ElementKind::F32, 20);
        assert_eq!(Poison::Second.first_written(ElementKind::F32, &bytes), None);
        assert_eq!(Poison::First.first_written(ElementKind::F32, &bytes), Some(0));
        bytes[13] = 0;
        assert_eq!(Poison::Second.first_written(ElementKind::F32, &bytes), Some(3));
    }
}
