//! Digests of a case's input and of the model's expected output: what a
//! receipt records next to each verdict and what the receipt gate
//! recomputes on the CPU, so that a receipt proves *which* inputs were run
//! and *which* answers they were compared with, not only that something ran.
//!
//! A digest is BLAKE3 (hex, first 32 digits) over little-endian bytes of
//! typed parts, each preceded by its tag and length, so that two different
//! part sequences never feed the hasher the same bytes. A part can be fed
//! whole (`i32s(&x)`) or in pieces ([`Fingerprint::begin`], then
//! [`Fingerprint::feed`] per piece): the bytes, hence the digest, are the
//! same, so an input too large to hold can be digested as it is generated.
//! (This lives in the model crate, which every build optimises, because
//! the receipt gate digests gigabytes in a test-profile build.)

use half::bf16;

mod sealed {
    /// Only the plain types below are digest elements (see [`super::Fingerprint::feed`]).
    pub trait Plain {}
}

/// A value a digest part holds, by its little-endian bytes: a primitive
/// integer, float or `bf16` (sealed: no other type can be one).
pub trait DigestElement: Copy + sealed::Plain {
    /// The part's tag.
    const TAG: &'static str;
    /// Bytes per value.
    const WIDTH: usize;
    /// Writes the value's little-endian bytes into `out` (`WIDTH` long).
    fn write_le(self, out: &mut [u8]);
}

macro_rules! digest_element {
    ($t:ty, $tag:literal, $bits:expr) => {
        impl sealed::Plain for $t {}
        impl DigestElement for $t {
            const TAG: &'static str = $tag;
            const WIDTH: usize = std::mem::size_of::<$t>();
            #[inline]
            fn write_le(self, out: &mut [u8]) {
                let bits = $bits(self);
                out.copy_from_slice(&bits.to_le_bytes());
            }
        }
    };
}

digest_element!(u64, "u64", |v: u64| v);
digest_element!(i64, "i64", |v: i64| v);
digest_element!(i32, "i32", |v: i32| v);
digest_element!(u8, "u8", |v: u8| v);
// Floats by their bits, so -0.0, NaN payloads and infinities differ.
digest_element!(f32, "f32", f32::to_bits);
digest_element!(f64, "f64", f64::to_bits);
digest_element!(bf16, "bf16", bf16::to_bits);

/// Builds one digest from typed parts.
pub struct Fingerprint {
    hasher: blake3::Hasher,
    buffer: Vec<u8>,
}

/// Bytes are handed to the hasher in chunks of this size (large enough for
/// its widest SIMD path).
const CHUNK: usize = 1 << 20;

impl Default for Fingerprint {
    fn default() -> Self {
        Fingerprint { hasher: blake3::Hasher::new(), buffer: Vec::with_capacity(CHUNK) }
    }
}

impl Fingerprint {
    /// An empty fingerprint.
    pub fn new() -> Fingerprint {
        Fingerprint::default()
    }

    #[inline]
    fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
        if self.buffer.len() >= CHUNK {
            self.hasher.update(&self.buffer);
            self.buffer.clear();
        }
    }

    fn header(&mut self, tag: &str, len: usize) {
        self.push(&(tag.len() as u64).to_le_bytes());
        self.push(tag.as_bytes());
        self.push(&(len as u64).to_le_bytes());
    }

    /// A text part (a shape, a policy name, an error the model must report).
    pub fn text(mut self, text: &str) -> Fingerprint {
        self.header("text", text.len());
        self.push(text.as_bytes());
        self
    }

    /// Starts a part of `count` values of `T`, to be fed in pieces with
    /// [`Fingerprint::feed`] (whose lengths must add up to `count`).
    pub fn begin<T: DigestElement>(&mut self, count: usize) {
        self.header(T::TAG, count);
    }

    /// Starts a part of values of `T` whose count is known only at its end
    /// (fed with [`Fingerprint::feed`], closed by [`Fingerprint::end_unsized`]):
    /// its length field is all ones, and the count follows the values as a
    /// part of its own, so no sized part reads the same bytes.
    pub fn begin_unsized<T: DigestElement>(&mut self) {
        self.header(T::TAG, usize::MAX);
    }

    /// Closes a part [`Fingerprint::begin_unsized`] started, after `count` values.
    pub fn end_unsized(self, count: usize) -> Fingerprint {
        self.u64s([count as u64].into_iter())
    }

    /// Feeds the next values of the part [`Fingerprint::begin`] started.
    pub fn feed<T: DigestElement>(&mut self, values: &[T]) {
        #[cfg(target_endian = "little")]
        {
            // SAFETY: a DigestElement is one of the sealed plain types above
            // (u8, i32, i64, u64, f32, f64, bf16, which is a u16): no padding,
            // every byte initialised, and on a little-endian target its memory
            // bytes are the little-endian bytes `write_le` gives; any byte is a
            // valid u8, and the slice lives as long as `values`.
            let bytes =
                unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values)) };
            self.push_bytes(bytes);
        }
        #[cfg(not(target_endian = "little"))]
        {
            let mut staged = [0u8; 4096];
            for piece in values.chunks(staged.len() / T::WIDTH) {
                let bytes = &mut staged[..piece.len() * T::WIDTH];
                for (v, out) in piece.iter().zip(bytes.chunks_exact_mut(T::WIDTH)) {
                    v.write_le(out);
                }
                self.push_bytes(bytes);
            }
        }
    }

    /// Bytes of a part's values: whole chunks go to the hasher at once.
    fn push_bytes(&mut self, mut bytes: &[u8]) {
        if !self.buffer.is_empty() {
            let room = (CHUNK - self.buffer.len()).min(bytes.len());
            self.push(&bytes[..room]);
            bytes = &bytes[room..];
        }
        if bytes.len() >= CHUNK {
            let whole = bytes.len() - bytes.len() % CHUNK;
            self.hasher.update(&bytes[..whole]);
            bytes = &bytes[whole..];
        }
        self.buffer.extend_from_slice(bytes);
    }

    /// A whole part of `T` values.
    pub fn values<T: DigestElement>(mut self, values: &[T]) -> Fingerprint {
        self.begin::<T>(values.len());
        self.feed(values);
        self
    }

    /// Unsigned integers (sizes, offsets, counts).
    pub fn u64s(mut self, values: impl ExactSizeIterator<Item = u64>) -> Fingerprint {
        self.begin::<u64>(values.len());
        let mut staged = Vec::with_capacity(512);
        for v in values {
            staged.push(v);
            if staged.len() == staged.capacity() {
                self.feed(&staged);
                staged.clear();
            }
        }
        self.feed(&staged);
        self
    }

    /// Signed 64-bit integers (sums, prefixes).
    pub fn i64s(self, values: &[i64]) -> Fingerprint {
        self.values(values)
    }

    /// 32-bit integers.
    pub fn i32s(self, values: &[i32]) -> Fingerprint {
        self.values(values)
    }

    /// Bytes (flags).
    pub fn bytes(self, values: &[u8]) -> Fingerprint {
        self.values(values)
    }

    /// f32 values by their bits (so -0.0, NaN payloads and infinities differ).
    pub fn f32s(self, values: &[f32]) -> Fingerprint {
        self.values(values)
    }

    /// f64 values by their bits.
    pub fn f64s(self, values: &[f64]) -> Fingerprint {
        self.values(values)
    }

    /// bf16 values by their bits.
    pub fn bf16s(self, values: &[bf16]) -> Fingerprint {
        self.values(values)
    }

    /// The hex digest (128 bits are plenty to tell catalogues apart).
    pub fn finish(mut self) -> String {
        self.hasher.update(&self.buffer);
        self.hasher.finalize().as_bytes().iter().take(16).map(|b| format!("{b:02x}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_parts_give_equal_digests_and_any_change_differs() {
        let a = Fingerprint::new().i32s(&[1, 2, 3]).text("x").finish();
        assert_eq!(a, Fingerprint::new().i32s(&[1, 2, 3]).text("x").finish());
        assert_ne!(a, Fingerprint::new().i32s(&[1, 2, 4]).text("x").finish());
        assert_ne!(a, Fingerprint::new().i32s(&[1, 2, 3]).text("y").finish());
        // The same bytes under another type or split are another digest.
        assert_ne!(Fingerprint::new().i32s(&[0, 0]).finish(), Fingerprint::new().i64s(&[0]).finish());
        assert_ne!(Fingerprint::new().text("ab").finish(), Fingerprint::new().text("a").text("b").finish());
        assert_ne!(Fingerprint::new().f32s(&[0.0]).finish(), Fingerprint::new().f32s(&[-0.0]).finish());
        assert_eq!(a.len(), 32);
    }

    #[test]
    fn long_inputs_cross_chunk_boundaries_consistently() {
        let x: Vec<i32> = (0..100_000).collect();
        let mut y = x.clone();
        assert_eq!(Fingerprint::new().i32s(&x).finish(), Fingerprint::new().i32s(&y).finish());
        y[99_999] = 0;
        assert_ne!(Fingerprint::new().i32s(&x).finish(), Fingerprint::new().i32s(&y).finish());
    }

    #[test]
    fn a_part_fed_in_pieces_is_the_part_fed_whole() {
        let x: Vec<i64> = (0..700_001).map(|i| i * 0x1_0001 - 5).collect();
        let whole = Fingerprint::new().text("scan").i64s(&x).u64s([7u64].into_iter()).finish();
        for piece in [1usize, 1000, 4096, 1 << 20] {
            let mut pieces = Fingerprint::new().text("scan");
            pieces.begin::<i64>(x.len());
            x.chunks(piece).for_each(|c| pieces.feed(c));
            assert_eq!(pieces.u64s([7u64].into_iter()).finish(), whole, "pieces of {piece}");
        }
        let u: Vec<u64> = (0..3000).collect();
        assert_eq!(Fingerprint::new().u64s(u.iter().copied()).finish(), Fingerprint::new().values(&u).finish());
    }

    /// The byte layout is fixed: receipts keep digests across builds.
    #[test]
    fn the_layout_is_tag_length_count_then_little_endian_values() {
        let mut expected = blake3::Hasher::new();
        expected.update(&3u64.to_le_bytes());
        expected.update(b"i32");
        expected.update(&2u64.to_le_bytes());
        expected.update(&[1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff]);
        let want: String = expected.finalize().as_bytes().iter().take(16).map(|b| format!("{b:02x}")).collect();
        assert_eq!(Fingerprint::new().i32s(&[1, -2]).finish(), want);
    }
}
