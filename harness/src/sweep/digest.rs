//! Digests of a case's input and of the model's expected output: what a
//! receipt records next to each verdict and what the receipt gate
//! recomputes on the CPU, so that a receipt proves *which* inputs were run
//! and *which* answers they were compared with, not only that something ran.
//!
//! A digest is BLAKE3 (hex, first 32 digits) over little-endian bytes of
//! typed parts, each preceded by its tag and length, so that two different
//! part sequences never feed the hasher the same bytes.

use serde::{Deserialize, Serialize};

/// The digests of one case: its input, and the reference it is judged against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseDigest {
    /// Digest of every input the kernel is given (data, offsets, flags, shape).
    pub input_digest: String,
    /// Digest of the model's expected output (exact values, or the exact
    /// value and the declared bound for float results).
    pub expected_digest: String,
}

/// Builds one digest from typed parts.
pub struct Fingerprint {
    hasher: blake3::Hasher,
    buffer: Vec<u8>,
}

/// Bytes are handed to the hasher in chunks of this size.
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

    /// A part of `count` fixed-width values, each as its little-endian bytes.
    fn le_values<const N: usize>(
        mut self,
        tag: &str,
        count: usize,
        values: impl Iterator<Item = [u8; N]>,
    ) -> Fingerprint {
        self.header(tag, count);
        for v in values {
            self.push(&v);
        }
        self
    }

    /// Unsigned integers (sizes, offsets, counts).
    pub fn u64s(self, values: impl ExactSizeIterator<Item = u64>) -> Fingerprint {
        self.le_values("u64", values.len(), values.map(u64::to_le_bytes))
    }

    /// Signed 64-bit integers (sums, prefixes).
    pub fn i64s(self, values: &[i64]) -> Fingerprint {
        self.le_values("i64", values.len(), values.iter().map(|v| v.to_le_bytes()))
    }

    /// 32-bit integers.
    pub fn i32s(self, values: &[i32]) -> Fingerprint {
        self.le_values("i32", values.len(), values.iter().map(|v| v.to_le_bytes()))
    }

    /// Bytes (flags).
    pub fn bytes(mut self, values: &[u8]) -> Fingerprint {
        self.header("u8", values.len());
        for chunk in values.chunks(CHUNK) {
            self.push(chunk);
        }
        self
    }

    /// f32 values by their bits (so -0.0, NaN payloads and infinities differ).
    pub fn f32s(self, values: &[f32]) -> Fingerprint {
        self.le_values("f32", values.len(), values.iter().map(|v| v.to_bits().to_le_bytes()))
    }

    /// f64 values by their bits.
    pub fn f64s(self, values: &[f64]) -> Fingerprint {
        self.le_values("f64", values.len(), values.iter().map(|v| v.to_bits().to_le_bytes()))
    }

    /// bf16 values by their bits.
    pub fn bf16s(self, values: &[half::bf16]) -> Fingerprint {
        self.le_values("bf16", values.len(), values.iter().map(|v| v.to_bits().to_le_bytes()))
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
}
