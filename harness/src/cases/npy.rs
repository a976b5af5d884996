//! NPY files, format version 1.0 (written) and 1.0 / 2.0 (read): the magic
//! `\x93NUMPY`, the version, a little-endian header length, a Python-literal
//! header dict `{'descr': .., 'fortran_order': False, 'shape': (..), }`
//! padded with spaces and ending in a newline so that the data starts at a
//! multiple of 64 bytes, then the raw little-endian elements in C order.
//! bfloat16 has no NumPy type: it is stored as `<u2` (its raw bits).

use crate::sweep::raw::{Array, Dtype};
use std::path::Path;

const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// The NumPy type string of `dtype`.
pub fn descr(dtype: Dtype) -> &'static str {
    match dtype {
        Dtype::Int32 => "<i4",
        Dtype::Int64 => "<i8",
        Dtype::Float32 => "<f4",
        Dtype::Float64 => "<f8",
        Dtype::Bfloat16 => "<u2",
        Dtype::Uint8 => "|u1",
        Dtype::Uint32 => "<u4",
        Dtype::Float16 => "<f2",
    }
}

/// The bytes of a one-dimensional NPY v1.0 file holding `array`.
pub fn encode(array: &Array) -> Vec<u8> {
    let mut header =
        format!("{{'descr': '{}', 'fortran_order': False, 'shape': ({},), }}", descr(array.dtype()), array.count());
    // magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + array.count() * array.dtype().size());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&array.to_le_bytes());
    out
}

/// Writes `array` to `path`.
pub fn write(path: &Path, array: &Array) -> Result<(), String> {
    std::fs::write(path, encode(array)).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// The array in NPY bytes, read as `dtype` (`<u2` data is read as raw
/// bfloat16 bits when `dtype` is bfloat16). Any shape is accepted (the
/// elements are taken in C order); the type must be `dtype`'s.
pub fn decode(bytes: &[u8], dtype: Dtype) -> Result<Array, String> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err("not an NPY file (no \\x93NUMPY magic)".into());
    }
    let (header_len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12),
        v => return Err(format!("NPY format version {v} is not supported (1.0, 2.0 and 3.0 are)")),
    };
    let header = bytes.get(start..start + header_len).ok_or("the NPY header is cut short")?;
    let header = std::str::from_utf8(header).map_err(|_| "the NPY header is not text")?;
    let found = field(header, "descr").ok_or("the NPY header has no 'descr'")?;
    let found = found.trim_matches(|c| c == '\'' || c == '"');
    let wanted = descr(dtype);
    // '|' and '=' byte orders are little-endian for one-byte types or on every machine we target.
    if found != wanted && found.replacen('=', "<", 1) != wanted {
        return Err(format!("dtype {found} where {wanted} ({}) is required", dtype.name()));
    }
    if field(header, "fortran_order").is_some_and(|v| v.starts_with("True")) {
        return Err("fortran_order True is not supported (write a C-ordered array)".into());
    }
    let shape = field(header, "shape").ok_or("the NPY header has no 'shape'")?;
    let mut count = 1usize;
    for dim in shape.trim_matches(|c| c == '(' || c == ')').split(',').map(str::trim).filter(|d| !d.is_empty()) {
        let d: usize = dim.parse().map_err(|_| format!("shape dimension '{dim}' is not a number"))?;
        count = count.checked_mul(d).ok_or("the shape overflows")?;
    }
    let data = &bytes[start + header_len..];
    let need = count.checked_mul(dtype.size()).ok_or("the shape overflows")?;
    if data.len() != need {
        return Err(format!("shape {shape} needs {need} data bytes, the file holds {}", data.len()));
    }
    Array::from_le_bytes(dtype, data)
}

/// The most header bytes read beside the data (NumPy pads headers to 64
/// bytes; a version 2.0 header may be longer, never this long in practice).
pub const HEADER_LIMIT: u64 = 1 << 16;

/// Reads `path` as an array of `dtype` (a regular file of any size: for
/// files we wrote; see [`read_at_most`] for files others wrote).
#[cfg(test)]
pub fn read(path: &Path, dtype: Dtype) -> Result<Array, String> {
    read_at_most(path, dtype, usize::MAX)
}

/// Reads `path` as an array of `dtype` holding at most `count` elements:
/// a larger file, a device, a FIFO or a folder is refused before it is read.
pub fn read_at_most(path: &Path, dtype: Dtype, count: usize) -> Result<Array, String> {
    let limit = (count as u64).saturating_mul(dtype.size() as u64).saturating_add(HEADER_LIMIT);
    let bytes = crate::bounded::read(path, limit)?;
    decode(&bytes, dtype).map_err(|e| format!("{}: {e}", path.display()))
}

/// The text of `key`'s value in a header dict: up to the next top-level comma.
fn field<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let at = header.find(&format!("'{key}'")).or_else(|| header.find(&format!("\"{key}\"")))?;
    let rest = header[at + key.len() + 2..].trim_start().strip_prefix(':')?.trim_start();
    let mut depth = 0;
    for (i, c) in rest.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' | '}' if depth == 0 => return Some(rest[..i].trim()),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_is_numpys_and_the_data_is_aligned_to_64_bytes() {
        let bytes = encode(&Array::Int32(vec![1, -2, 3]));
        assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0);
        let header = std::str::from_utf8(&bytes[10..10 + header_len]).expect("text");
        assert!(header.starts_with("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }"), "{header}");
        assert!(header.ends_with('\n'));
        assert_eq!(&bytes[10 + header_len..], &[1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff, 3, 0, 0, 0]);
    }

    #[test]
    fn files_round_trip_and_other_shapes_are_read_in_c_order() {
        let a = Array::Int64(vec![5, i64::MIN]);
        assert_eq!(decode(&encode(&a), Dtype::Int64), Ok(a));
        // A 0-d scalar as NumPy writes it: shape ().
        let mut scalar = encode(&Array::Int64(vec![42]));
        let text = String::from_utf8_lossy(&scalar[10..74]).replace("(1,)", "()  ");
        scalar.splice(10..74, text.bytes());
        assert_eq!(decode(&scalar, Dtype::Int64), Ok(Array::Int64(vec![42])));
        let b = Array::Bfloat16(vec![0x3f80]);
        assert_eq!(decode(&encode(&b), Dtype::Bfloat16), Ok(b));
    }

    #[test]
    fn a_wrong_type_or_length_is_named() {
        let e = decode(&encode(&Array::Int32(vec![1])), Dtype::Int64).unwrap_err();
        assert_eq!(e, "dtype <i4 where <i8 (int64) is required");
        let mut cut = encode(&Array::Int32(vec![1, 2]));
        cut.pop();
        assert!(decode(&cut, Dtype::Int32).unwrap_err().contains("needs 8 data bytes, the file holds 7"));
        assert!(decode(b"PK\x03\x04", Dtype::Int32).is_err());
    }
}
