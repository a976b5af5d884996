//! The patterns output buffers are filled with before a run, so that an
//! element a kernel never wrote cannot pass for a result.
//!
//! Rule: a poison must be a value no comparison accepts. Integer and opaque
//! buffers get a repeated byte (an exact comparison sees any unwritten
//! element). Float buffers get a signalling NaN of their own width: a byte
//! pattern would read as a tiny finite float (0xA5A5A5A5 is about -2.9e-16
//! in f32), which every tolerance absorbs, so a kernel that accumulates into
//! an output it forgot to clear would pass. Two poisons differ in every byte,
//! so a kernel that happens to write one of them, or leaves an element
//! unwritten, cannot pass a run under each.

use std::any::TypeId;

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
    /// IEEE binary16.
    F16,
    /// bfloat16.
    BF16,
    /// IEEE binary32.
    F32,
    /// IEEE binary64.
    F64,
}

impl ElementKind {
    /// The kind of the Rust element type `T` (floats by type; anything else bytewise).
    pub fn of<T: 'static>() -> ElementKind {
        let t = TypeId::of::<T>();
        if t == TypeId::of::<f32>() {
            ElementKind::F32
        } else if t == TypeId::of::<f64>() {
            ElementKind::F64
        } else if t == TypeId::of::<half::f16>() {
            ElementKind::F16
        } else if t == TypeId::of::<half::bf16>() {
            ElementKind::BF16
        } else {
            ElementKind::Bytes
        }
    }
}

impl Poison {
    /// Both poisons, in run order.
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
            ElementKind::F16 => (if first { 0x7ca5u16 } else { 0xfcb5 }).to_le_bytes().to_vec(),
            ElementKind::BF16 => (if first { 0x7fa5u16 } else { 0xffb5 }).to_le_bytes().to_vec(),
            ElementKind::F32 => (if first { 0x7fa5_a5a5u32 } else { 0xffb5_5a5a }).to_le_bytes().to_vec(),
            ElementKind::F64 => {
                (if first { 0x7ff4_a5a5_a5a5_a5a5u64 } else { 0xfff5_5a5a_5a5a_5a5a }).to_le_bytes().to_vec()
            }
        }
    }

    /// `bytes` bytes of elements of `kind` (a whole number of elements),
    /// every one this poison's pattern.
    pub fn fill(self, kind: ElementKind, bytes: usize) -> Vec<u8> {
        let pattern = self.pattern(kind);
        pattern.repeat(bytes / pattern.len())
    }

    /// Whether every element of `bytes` (elements of `kind`) still holds this poison.
    pub fn intact(self, kind: ElementKind, bytes: &[u8]) -> bool {
        self.first_written(kind, bytes).is_none()
    }

    /// The first element of `bytes` that no longer holds this poison.
    pub fn first_written(self, kind: ElementKind, bytes: &[u8]) -> Option<usize> {
        let pattern = self.pattern(kind);
        bytes.chunks(pattern.len()).position(|element| element != pattern.as_slice())
    }

    /// The other poison.
    pub const fn other(self) -> Poison {
        match self {
            Poison::First => Poison::Second,
            Poison::Second => Poison::First,
        }
    }
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
            let h = u16::from_le_bytes(poison.pattern(ElementKind::F16).try_into().unwrap());
            assert!(half::f16::from_bits(h).is_nan() && h & 0x0200 == 0, "{poison:?} f16");
            let b = u16::from_le_bytes(poison.pattern(ElementKind::BF16).try_into().unwrap());
            assert!(half::bf16::from_bits(b).is_nan() && b & 0x0040 == 0, "{poison:?} bf16");
        }
    }

    #[test]
    fn the_two_poisons_differ_in_every_byte() {
        for kind in [ElementKind::Bytes, ElementKind::F16, ElementKind::BF16, ElementKind::F32, ElementKind::F64] {
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
    fn element_kinds_follow_the_rust_type() {
        assert_eq!(ElementKind::of::<f32>(), ElementKind::F32);
        assert_eq!(ElementKind::of::<f64>(), ElementKind::F64);
        assert_eq!(ElementKind::of::<half::f16>(), ElementKind::F16);
        assert_eq!(ElementKind::of::<half::bf16>(), ElementKind::BF16);
        assert_eq!(ElementKind::of::<i64>(), ElementKind::Bytes);
        assert_eq!(ElementKind::of::<[f32; 2]>(), ElementKind::Bytes);
    }

    #[test]
    fn the_first_written_element_is_found() {
        let mut bytes = Poison::Second.fill(ElementKind::F32, 20);
        assert!(Poison::Second.intact(ElementKind::F32, &bytes));
        assert!(!Poison::First.intact(ElementKind::F32, &bytes));
        bytes[13] = 0;
        assert_eq!(Poison::Second.first_written(ElementKind::F32, &bytes), Some(3));
    }
}
