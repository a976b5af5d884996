//! Top-k: the k largest (or smallest) values of each row and their indices, in one total order,
//! so the answer is unique and bitwise reproducible.
//!
//! # Contract
//!
//! * Input: a row-major `[rows, cols]` tensor of f32, bf16 or f16 (a whole array is one row).
//! * Output per row: `k` values and their int64 column indices. With `largest`, ordered by value
//!   descending and, among equal values, by index ascending; without (`bottom-k`), by value
//!   ascending and, among equal values, by index ascending. The values are the input elements at
//!   those indices, bit for bit (a `-0.0` stays `-0.0`).
//! * `-0.0` and `+0.0` are equal (the lower index first).
//! * NaN: [`TopkNan::Reject`] (the default) refuses the input with the first NaN's flat index;
//!   [`TopkNan::AboveAll`] orders every NaN above every number, `+inf` included, all NaNs equal
//!   (as `torch.topk` does): the first NaNs of a top-k, the last of a bottom-k.
//! * `k = 0` gives empty outputs; `k > cols` is an error, as is a buffer that is not
//!   `rows * cols` long.
//!
//! # The order key
//!
//! [`TopkValue::order_key`] maps a value to a `u32` that orders exactly as the contract does
//! (larger key = larger value): zeros of either sign to `0x8000_0000`, NaN (when ordered) to
//! `u32::MAX`, any other value by its sign-magnitude bits (a negative's bits inverted, a
//! positive's sign bit set). A 16-bit float's key is its 16-bit key in the high half, so the
//! kernels' radix passes over the key are one rule for every dtype. A bottom-k is a top-k of
//! the inverted key.

use crate::ModelError;
use half::{bf16, f16};

/// The order's options, defined once for the kernels and the model.
pub use primlab_types::{TopkNan, TopkSpec};

/// A value type of top-k: f32, bf16 or f16.
pub trait TopkValue: Copy + PartialEq + std::fmt::Debug {
    /// Whether the value is a NaN.
    fn is_nan(self) -> bool;
    /// The value widened to f64 (for messages).
    fn to_f64(self) -> f64;
    /// The order key (module doc); a NaN's is `u32::MAX`.
    fn order_key(self) -> u32;
    /// The value's bits, widened to u32 (outputs are compared bit for bit).
    fn bits(self) -> u32;
}

/// The key of sign-magnitude bits `bits` of a `width`-bit float whose NaN test is `nan`.
fn sign_magnitude_key(bits: u32, width: u32, nan: bool) -> u32 {
    let sign = 1u32 << (width - 1);
    let all = if width == 32 { u32::MAX } else { (1u32 << width) - 1 };
    let key = if nan {
        all
    } else if bits & !sign == 0 {
        sign
    } else if bits & sign != 0 {
        !bits & all
    } else {
        bits | sign
    };
    key << (32 - width)
}

impl TopkValue for f32 {
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn order_key(self) -> u32 {
        sign_magnitude_key(self.to_bits(), 32, self.is_nan())
    }
    fn bits(self) -> u32 {
        self.to_bits()
    }
}

/// A 16-bit float's TopkValue: its sign-magnitude bits, 16 wide.
macro_rules! half_topk_value {
    ($t:ty) => {
        impl TopkValue for $t {
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn to_f64(self) -> f64 {
                <$t>::to_f64(self)
            }
            fn order_key(self) -> u32 {
                sign_magnitude_key(self.to_bits() as u32, 16, self.is_nan())
            }
            fn bits(self) -> u32 {
                self.to_bits() as u32
            }
        }
    };
}
half_topk_value!(bf16);
half_topk_value!(f16);

/// The selected values and their column indices, `rows * k` each, row by row.
#[derive(Debug, Clone, PartialEq)]
pub struct TopkOutput<T> {
    /// The values, in the contract's order within each row.
    pub values: Vec<T>,
    /// Their column indices.
    pub indices: Vec<i64>,
}

const PRIMITIVE: &str = "topk";

/// Checks the shape, `k` and the NaN rule, then returns each row's top-k (module doc).
pub fn topk_rows<T: TopkValue>(
    input: &[T],
    rows: usize,
    cols: usize,
    spec: TopkSpec,
) -> Result<TopkOutput<T>, ModelError> {
    check(input, rows, cols, spec)?;
    let mut out = TopkOutput { values: Vec::with_capacity(rows * spec.k), indices: Vec::with_capacity(rows * spec.k) };
    if spec.k == 0 {
        return Ok(out);
    }
    for r in 0..rows {
        let row = &input[r * cols..(r + 1) * cols];
        for c in row_topk(row, spec) {
            out.values.push(row[c as usize]);
            out.indices.push(c as i64);
        }
    }
    Ok(out)
}

/// The shape, `k` and NaN checks of [`topk_rows`].
pub fn check<T: TopkValue>(input: &[T], rows: usize, cols: usize, spec: TopkSpec) -> Result<(), ModelError> {
    let bad = |detail: String| ModelError::BadShape { primitive: PRIMITIVE, detail };
    match rows.checked_mul(cols) {
        Some(len) if len == input.len() => {}
        _ => return Err(bad(format!("{} elements for {rows} x {cols}", input.len()))),
    }
    if cols > MAX_COLS {
        return Err(bad(format!("{cols} columns exceed the {MAX_COLS} a row may hold")));
    }
    if spec.k > cols {
        return Err(bad(format!("k = {} exceeds the {cols} columns of a row", spec.k)));
    }
    if spec.nan == TopkNan::Reject {
        if let Some(index) = input.iter().position(|v| v.is_nan()) {
            return Err(ModelError::NonFinite { primitive: PRIMITIVE, index, value: input[index].to_f64() });
        }
    }
    Ok(())
}

/// The composite rank of column `c` with key `key`: larger ranks first. The key in the high
/// half, the inverted index in the low half, so equal keys put the lower index first.
pub fn rank(key: u32, c: u32) -> u64 {
    ((key as u64) << 32) | (!c as u64)
}

/// The key `spec` selects by: the order key, inverted for a bottom-k.
pub fn selection_key<T: TopkValue>(v: T, spec: TopkSpec) -> u32 {
    if spec.largest {
        v.order_key()
    } else {
        !v.order_key()
    }
}

/// The columns of one row's top-k in output order. A small k (at most an eighth of the row)
/// keeps only the k largest ranks seen so far, so a whole array of 2^28 items needs memory
/// for k ranks, not for n; a larger k selects among every rank (linear time). Both then sort
/// the k survivors; ranks are distinct (each holds its column), so both give the one answer.
fn row_topk<T: TopkValue>(row: &[T], spec: TopkSpec) -> Vec<u32> {
    let k = spec.k.min(row.len());
    let mut ranks = if k <= row.len() / 8 { bounded_selection(row, spec, k) } else { full_selection(row, spec, k) };
    ranks.sort_unstable_by(|a, b| b.cmp(a));
    ranks.into_iter().map(|r| !(r as u32)).collect()
}

/// The k largest ranks of `row`, unordered, from every rank at once.
fn full_selection<T: TopkValue>(row: &[T], spec: TopkSpec, k: usize) -> Vec<u64> {
    let mut ranks: Vec<u64> = row.iter().enumerate().map(|(c, &v)| rank(selection_key(v, spec), c as u32)).collect();
    if k < ranks.len() {
        ranks.select_nth_unstable_by(k - 1, |a, b| b.cmp(a));
        ranks.truncate(k);
    }
    ranks
}

/// The k largest ranks of `row`, unordered, in one pass that holds k of them: a min-heap
/// whose root is the smallest rank kept, replaced whenever a larger one comes.
fn bounded_selection<T: TopkValue>(row: &[T], spec: TopkSpec, k: usize) -> Vec<u64> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    if k == 0 {
        return Vec::new();
    }
    let mut kept: BinaryHeap<Reverse<u64>> = BinaryHeap::with_capacity(k);
    for (c, &v) in row.iter().enumerate() {
        let r = rank(selection_key(v, spec), c as u32);
        if kept.len() < k {
            kept.push(Reverse(r));
        } else if let Some(mut smallest) = kept.peek_mut() {
            if r > smallest.0 {
                *smallest = Reverse(r);
            }
        }
    }
    kept.into_iter().map(|Reverse(r)| r).collect()
}

/// The widest row: a 32-bit column index whose complement is never 0 (the kernels' ranks
/// `(key << 32) | !column` stay above their padding of 0).
pub const MAX_COLS: usize = u32::MAX as usize - 1;

#[cfg(test)]
#[path = "topk_tests.rs"]
mod tests;
