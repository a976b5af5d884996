//! Typed host arrays of the raw case catalogue: what a case's inputs and
//! expected outputs are made of, with their little-endian byte images (the
//! layout of device buffers and of `.npy` data).

use serde::{Deserialize, Serialize};

/// An element type of a contract's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    /// 32-bit signed integer.
    Int32,
    /// 64-bit signed integer.
    Int64,
    /// IEEE binary32.
    Float32,
    /// IEEE binary64.
    Float64,
    /// bfloat16 (stored as its 16 raw bits).
    Bfloat16,
    /// 8-bit unsigned integer (flags).
    Uint8,
    /// 32-bit unsigned integer.
    Uint32,
    /// IEEE binary16 (stored as its 16 raw bits).
    Float16,
}

impl Dtype {
    /// Every type, for parsing names.
    pub const ALL: [Dtype; 8] = [
        Dtype::Int32,
        Dtype::Int64,
        Dtype::Float32,
        Dtype::Float64,
        Dtype::Bfloat16,
        Dtype::Uint8,
        Dtype::Uint32,
        Dtype::Float16,
    ];

    /// The name in manifests and in `index.json`: `int32`, `int64`, `float32`, `float64`, `bfloat16`,
    /// `uint8`, `uint32`, `float16`.
    pub fn name(self) -> &'static str {
        match self {
            Dtype::Int32 => "int32",
            Dtype::Int64 => "int64",
            Dtype::Float32 => "float32",
            Dtype::Float64 => "float64",
            Dtype::Bfloat16 => "bfloat16",
            Dtype::Uint8 => "uint8",
            Dtype::Uint32 => "uint32",
            Dtype::Float16 => "float16",
        }
    }

    /// The type named `name`.
    pub fn from_name(name: &str) -> Option<Dtype> {
        Dtype::ALL.into_iter().find(|d| d.name() == name)
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Dtype::Int32 | Dtype::Uint32 | Dtype::Float32 => 4,
            Dtype::Int64 | Dtype::Float64 => 8,
            Dtype::Bfloat16 | Dtype::Float16 => 2,
            Dtype::Uint8 => 1,
        }
    }
}

/// A host array of one [`Dtype`].
#[derive(Debug, Clone, PartialEq)]
pub enum Array {
    /// int32 elements.
    Int32(Vec<i32>),
    /// int64 elements.
    Int64(Vec<i64>),
    /// float32 elements.
    Float32(Vec<f32>),
    /// float64 elements.
    Float64(Vec<f64>),
    /// bfloat16 elements as raw bits.
    Bfloat16(Vec<u16>),
    /// uint8 elements.
    Uint8(Vec<u8>),
    /// uint32 elements.
    Uint32(Vec<u32>),
    /// float16 elements as raw bits.
    Float16(Vec<u16>),
}

impl Array {
    /// Its element type.
    pub fn dtype(&self) -> Dtype {
        match self {
            Array::Int32(_) => Dtype::Int32,
            Array::Int64(_) => Dtype::Int64,
            Array::Float32(_) => Dtype::Float32,
            Array::Float64(_) => Dtype::Float64,
            Array::Bfloat16(_) => Dtype::Bfloat16,
            Array::Uint8(_) => Dtype::Uint8,
            Array::Uint32(_) => Dtype::Uint32,
            Array::Float16(_) => Dtype::Float16,
        }
    }

    /// Number of elements.
    pub fn count(&self) -> usize {
        match self {
            Array::Int32(v) => v.len(),
            Array::Int64(v) => v.len(),
            Array::Float32(v) => v.len(),
            Array::Float64(v) => v.len(),
            Array::Bfloat16(v) => v.len(),
            Array::Uint8(v) => v.len(),
            Array::Uint32(v) => v.len(),
            Array::Float16(v) => v.len(),
        }
    }

    /// The little-endian bytes of every element, in order.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        match self {
            Array::Int32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Array::Int64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Array::Float32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Array::Float64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Array::Bfloat16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Array::Uint8(v) => v.clone(),
            Array::Uint32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Array::Float16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        }
    }

    /// The array of `dtype` whose little-endian image is `bytes`; an error
    /// when the length is not a whole number of elements.
    pub fn from_le_bytes(dtype: Dtype, bytes: &[u8]) -> Result<Array, String> {
        let size = dtype.size();
        if bytes.len() % size != 0 {
            return Err(format!("{} bytes is not a whole number of {} elements", bytes.len(), dtype.name()));
        }
        let chunks = bytes.chunks_exact(size);
        Ok(match dtype {
            Dtype::Int32 => Array::Int32(chunks.map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()),
            Dtype::Float32 => Array::Float32(chunks.map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()),
            Dtype::Int64 => Array::Int64(chunks.map(|c| i64::from_le_bytes(eight(c))).collect()),
            Dtype::Float64 => Array::Float64(chunks.map(|c| f64::from_le_bytes(eight(c))).collect()),
            Dtype::Bfloat16 => Array::Bfloat16(chunks.map(|c| u16::from_le_bytes([c[0], c[1]])).collect()),
            Dtype::Uint8 => Array::Uint8(bytes.to_vec()),
            Dtype::Uint32 => Array::Uint32(chunks.map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()),
            Dtype::Float16 => Array::Float16(chunks.map(|c| u16::from_le_bytes([c[0], c[1]])).collect()),
        })
    }
}

fn eight(c: &[u8]) -> [u8; 8] {
    [c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_images_round_trip_for_every_type() {
        let arrays = [
            Array::Int32(vec![-1, 7, i32::MIN]),
            Array::Int64(vec![i64::MAX, -3]),
            Array::Float32(vec![1.5, -0.0]),
            Array::Float64(vec![f64::MIN_POSITIVE]),
            Array::Bfloat16(vec![0x3f80, 0xffff]),
            Array::Uint8(vec![0, 7, 255]),
            Array::Uint32(vec![0, 7, u32::MAX]),
            Array::Float16(vec![0x3c00, 0x8000, 0x7c00]),
        ];
        for a in arrays {
            assert_eq!(Array::from_le_bytes(a.dtype(), &a.to_le_bytes()), Ok(a.clone()));
            assert_eq!(Dtype::from_name(a.dtype().name()), Some(a.dtype()));
        }
        assert_eq!(Array::Int32(vec![1]).to_le_bytes(), vec![1, 0, 0, 0]);
        assert!(Array::from_le_bytes(Dtype::Int64, &[0; 12]).is_err());
    }
}
