//! The data families of typed contracts, for each element type: the values a
//! case's input is drawn from, made in the input type (so the model reads
//! exactly what the kernel reads).
//!
//! | family | values | for |
//! | --- | --- | --- |
//! | `small_values` | uniform in [-100, 100] ([0, 200] unsigned; many ties) | integers |
//! | `full_range` | every bit pattern equally likely (sums wrap) | integers |
//! | `extreme_runs` | runs of MIN, -1, 0, 1, MAX (unsigned: 0, 1, MAX - 1, MAX) | integers |
//! | `uniform` | uniform in [-1, 1) | floats |
//! | `mixed_magnitudes` | ±[1, 2) · 2^e, e in [-24, 24] (float16: [-24, 14]): sums cancel | floats |
//! | `float_edges` | runs of ±0.0, ±smallest subnormal, ±largest subnormal, ±smallest normal, ±1 | floats |
//! | `many_ties` | eight values, -0.0 and +0.0 among them | floats |
//! | `signed_zero_ties` | only -0.0 and +0.0, elements 0 and 1 of opposite signs | float arg reductions |
//! | `extremes` | ±largest finite and ±inf among uniform values | float min, max, compaction, histogram |
//! | `ascending`, `descending` | sorted (the running extremum changes at every element) | all |
//! | `nan_late`, `nan_first_element`, `infinities` | NaN and ±inf placed (the NaN rules' own) | float arg reductions with a NaN rule |
//! | `nan_late`, `nan_first_element`, `nan_mixed` | the same NaN placements, and NaN of both signs and with payloads, ±inf, ±0.0 and subnormals in short runs among uniform values | float min and max with a NaN rule |
//! | `nan_mixed` | as above | float compaction and histogram (NaN is not > 0, and counted nowhere) |
//!
//! A NaN keeps its sign and the top bits of its payload in every float type
//! ([`float_array`]), so a flagged compaction's NaN is moved bit for bit
//! with a payload of the input type's own; float min and max without a NaN
//! rule, and float sums, hold none.
//!
//! A family's input is made in chunks of [`CHUNK`] elements on every core,
//! chunk `c` from the generator seeded with the case seed and `c`, so the
//! input depends on (family, type, n, seed) only.

use super::parts::{is_float, NanRule, Op, Parts, Shape};
use crate::sweep::raw::{Array, Dtype};
use model::generators::Rng;
use rayon::prelude::*;

/// Elements per generator chunk.
pub const CHUNK: usize = 1 << 16;

/// One family: its name and its element at (rng, i, n, type, the element
/// before it in its chunk), as an f64 (floats) or an i64 (integers), before
/// rounding to the input type.
#[derive(Clone, Copy)]
pub enum Family {
    /// An integer family.
    Int(&'static str, fn(&mut Rng, usize, usize, Dtype, i64) -> i64),
    /// A float family.
    Float(&'static str, fn(&mut Rng, usize, usize, Dtype, f64) -> f64),
}

impl Family {
    /// Its name in case ids.
    pub fn name(self) -> &'static str {
        match self {
            Family::Int(name, _) | Family::Float(name, _) => name,
        }
    }
}

/// The smallest and largest value of an integer type (as i64: every type's values fit).
fn bounds(dtype: Dtype) -> (i64, i64) {
    match dtype {
        Dtype::Int32 => (i32::MIN.into(), i32::MAX.into()),
        Dtype::Uint32 => (0, u32::MAX.into()),
        _ => (i64::MIN, i64::MAX),
    }
}

fn small_values(rng: &mut Rng, _: usize, _: usize, dtype: Dtype, _prev: i64) -> i64 {
    let (lo, _) = bounds(dtype);
    rng.below(201) as i64 + (-100).max(lo)
}

fn full_range(rng: &mut Rng, _: usize, _: usize, dtype: Dtype, _prev: i64) -> i64 {
    let bits = rng.next_u64();
    match dtype {
        Dtype::Int32 => bits as u32 as i32 as i64,
        Dtype::Uint32 => bits as u32 as i64,
        _ => bits as i64,
    }
}

fn extreme_runs(rng: &mut Rng, _: usize, _: usize, dtype: Dtype, prev: i64) -> i64 {
    let (lo, hi) = bounds(dtype);
    // Runs: 63 draws in 64 repeat the element before.
    if rng.below(64) != 0 {
        return prev;
    }
    // Unsigned types have no -1: the value below MAX stands in.
    let below_zero = if lo == 0 { hi - 1 } else { -1 };
    [lo, below_zero, 0, 1, hi][(rng.below(5)) as usize]
}

fn ascending_int(_: &mut Rng, i: usize, n: usize, dtype: Dtype, _: i64) -> i64 {
    let (lo, hi) = bounds(dtype);
    let span = (hi as i128 - lo as i128) / 2;
    (lo as i128 / 2 + (i as i128 * span) / n.max(1) as i128) as i64
}

/// The ascending values mirrored: negated (signed types) or taken from MAX down (unsigned).
fn descending_int(rng: &mut Rng, i: usize, n: usize, dtype: Dtype, prev: i64) -> i64 {
    let up = ascending_int(rng, i, n, dtype, prev);
    match bounds(dtype) {
        (0, hi) => hi - up,
        _ => -up,
    }
}

fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * 2f64.powi(-53)
}

fn uniform(rng: &mut Rng, _: usize, _: usize, _: Dtype, _prev: f64) -> f64 {
    2.0 * unit(rng) - 1.0
}

fn mixed_magnitudes(rng: &mut Rng, _: usize, _: usize, dtype: Dtype, _prev: f64) -> f64 {
    let sign = if rng.below(2) == 0 { 1.0 } else { -1.0 };
    // float16 tops out below 2^16: its exponents stop at 14 (each value finite).
    let top: u64 = if dtype == Dtype::Float16 { 14 } else { 24 };
    sign * (1.0 + unit(rng)) * 2f64.powi(rng.below(top + 25) as i32 - 24)
}

/// The smallest subnormal, largest subnormal and smallest normal of a float type.
fn tiny(dtype: Dtype) -> [f64; 3] {
    match dtype {
        Dtype::Float64 => [f64::from_bits(1), f64::from_bits((1 << 52) - 1), f64::MIN_POSITIVE],
        Dtype::Bfloat16 => [2f64.powi(-133), 2f64.powi(-126) - 2f64.powi(-133), 2f64.powi(-126)],
        Dtype::Float16 => [2f64.powi(-24), 2f64.powi(-14) - 2f64.powi(-24), 2f64.powi(-14)],
        _ => [2f64.powi(-149), 2f64.powi(-126) - 2f64.powi(-149), 2f64.powi(-126)],
    }
}

/// The largest finite value of a float type.
fn largest(dtype: Dtype) -> f64 {
    match dtype {
        Dtype::Float64 => f64::MAX,
        Dtype::Bfloat16 => f32::from_bits(0x7f7f_0000) as f64,
        Dtype::Float16 => 65504.0,
        _ => f32::MAX as f64,
    }
}

fn float_edges(rng: &mut Rng, _: usize, _: usize, dtype: Dtype, prev: f64) -> f64 {
    // Runs: 15 draws in 16 repeat the element before.
    if rng.below(16) != 0 {
        return prev;
    }
    let [min_sub, max_sub, min_normal] = tiny(dtype);
    let values = [0.0, -0.0, min_sub, -min_sub, max_sub, -max_sub, min_normal, -min_normal, 1.0, -1.0];
    values[rng.index(values.len())]
}

fn many_ties(rng: &mut Rng, _: usize, _: usize, _: Dtype, _prev: f64) -> f64 {
    [-2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 2.0, 3.0][rng.index(8)]
}

/// Only -0.0 and +0.0, elements 0 and 1 of opposite signs: the extremum is a
/// zero, and the lowest index of either sign must win.
fn signed_zero_ties(rng: &mut Rng, i: usize, _: usize, _: Dtype, _prev: f64) -> f64 {
    match i {
        0 => -0.0,
        1 => 0.0,
        _ if rng.below(2) == 0 => -0.0,
        _ => 0.0,
    }
}

fn extremes(rng: &mut Rng, i: usize, n: usize, dtype: Dtype, prev: f64) -> f64 {
    match rng.below(16) {
        0 => largest(dtype),
        1 => -largest(dtype),
        2 => f64::INFINITY,
        3 => f64::NEG_INFINITY,
        _ => uniform(rng, i, n, dtype, prev),
    }
}

fn ascending_float(_: &mut Rng, i: usize, n: usize, _: Dtype, _: f64) -> f64 {
    -1.0 + 2.0 * i as f64 / n.max(1) as f64
}

fn descending_float(rng: &mut Rng, i: usize, n: usize, dtype: Dtype, prev: f64) -> f64 {
    -ascending_float(rng, i, n, dtype, prev)
}

/// NaN at the last element and about once in 4096 from the middle on.
fn nan_late(rng: &mut Rng, i: usize, n: usize, dtype: Dtype, prev: f64) -> f64 {
    if i + 1 == n || (i >= n / 2 && rng.below(4096) == 0) {
        f64::NAN
    } else {
        uniform(rng, i, n, dtype, prev)
    }
}

/// NaN at element 0, +inf at 1, -inf at the end.
fn nan_first_element(rng: &mut Rng, i: usize, n: usize, dtype: Dtype, prev: f64) -> f64 {
    match i {
        0 => f64::NAN,
        1 if n > 2 => f64::INFINITY,
        _ if i + 1 == n && n > 2 => f64::NEG_INFINITY,
        _ => uniform(rng, i, n, dtype, prev),
    }
}

/// The NaNs of [`nan_mixed`], as f64 bits: a quiet NaN of each sign, and
/// two with payload bits (f64 fraction bits 50, 49 and 45) that the
/// narrowing of [`float_array`] keeps in float32, float16 and bfloat16
/// (whose fractions hold f64's top 23, 10 and 7 fraction bits).
pub const NANS: [u64; 4] = [0x7ff8_0000_0000_0000, 0xfff8_0000_0000_0000, 0x7ffc_2000_0000_0000, 0xfffa_0000_0000_0000];

/// Short runs (3 draws in 4 repeat the element before, so a run of NaN
/// fills short segments and prefixes): a NaN of [`NANS`] one new draw in 8,
/// each of +inf, -inf, -0.0, +0.0 and a smallest subnormal of either sign
/// one in 16, else uniform values.
fn nan_mixed(rng: &mut Rng, i: usize, n: usize, dtype: Dtype, prev: f64) -> f64 {
    if rng.below(4) != 0 {
        return prev;
    }
    match rng.below(16) {
        0 | 1 => f64::from_bits(NANS[rng.index(NANS.len())]),
        2 => f64::INFINITY,
        3 => f64::NEG_INFINITY,
        4 => -0.0,
        5 => 0.0,
        6 if rng.below(2) == 0 => tiny(dtype)[0],
        6 => -tiny(dtype)[0],
        _ => uniform(rng, i, n, dtype, prev),
    }
}

/// ±inf about once in 1024 each, no NaN.
fn infinities(rng: &mut Rng, i: usize, n: usize, dtype: Dtype, prev: f64) -> f64 {
    match rng.below(2048) {
        0 => f64::INFINITY,
        1 => f64::NEG_INFINITY,
        _ => uniform(rng, i, n, dtype, prev),
    }
}

const INT: [Family; 5] = [
    Family::Int("small_values", small_values),
    Family::Int("full_range", full_range),
    Family::Int("extreme_runs", extreme_runs),
    Family::Int("ascending", ascending_int),
    Family::Int("descending", descending_int),
];

const FLOAT_SUM: [Family; 5] = [
    Family::Float("uniform", uniform),
    Family::Float("mixed_magnitudes", mixed_magnitudes),
    Family::Float("float_edges", float_edges),
    Family::Float("ascending", ascending_float),
    Family::Float("descending", descending_float),
];

const FLOAT_EXTREMUM: [Family; 6] = [
    Family::Float("uniform", uniform),
    Family::Float("many_ties", many_ties),
    Family::Float("float_edges", float_edges),
    Family::Float("extremes", extremes),
    Family::Float("ascending", ascending_float),
    Family::Float("descending", descending_float),
];

const NAN_FAMILIES: [Family; 3] = [
    Family::Float("nan_late", nan_late),
    Family::Float("nan_first_element", nan_first_element),
    Family::Float("infinities", infinities),
];

/// The NaN families of float min and max under a NaN rule: NaN last,
/// first, and scattered in runs (a fold, prefix or segment of NaN only among them).
const EXTREMUM_NAN_FAMILIES: [Family; 3] = [
    Family::Float("nan_late", nan_late),
    Family::Float("nan_first_element", nan_first_element),
    Family::Float("nan_mixed", nan_mixed),
];

/// Every family of `parts`' contract, in catalogue order.
pub fn all(parts: &Parts) -> Vec<Family> {
    let float = is_float(parts.dtype_in);
    let mixed = Family::Float("nan_mixed", nan_mixed);
    match (float, parts.shape, parts.op) {
        (false, _, _) => INT.to_vec(),
        (true, Shape::Arg { .. }, _) => {
            // Arg reductions without a NaN rule must stay finite: no `extremes`.
            let finite = FLOAT_EXTREMUM.iter().filter(|f| f.name() != "extremes").copied();
            let zeros = Family::Float("signed_zero_ties", signed_zero_ties);
            let nan = if parts.nan == NanRule::Finite { &[][..] } else { &NAN_FAMILIES[..] };
            finite.chain([zeros]).chain(nan.iter().copied()).collect()
        }
        // Compaction moves values and a histogram counts them: every float
        // pattern, ±inf, signed zeros and NaN (not > 0, counted nowhere) included.
        (true, Shape::Compact { .. } | Shape::Histogram { .. }, _) => {
            FLOAT_EXTREMUM.iter().copied().chain([mixed]).collect()
        }
        (true, _, Op::Sum) => FLOAT_SUM.to_vec(),
        // Min and max hold NaN only under a NaN rule that says what it gives.
        (true, _, _) if parts.nan == NanRule::Finite => FLOAT_EXTREMUM.to_vec(),
        (true, _, _) => FLOAT_EXTREMUM.iter().chain(&EXTREMUM_NAN_FAMILIES).copied().collect(),
    }
}

/// The input of `family` at `n` elements of `dtype` from `seed`.
pub fn make(family: Family, dtype: Dtype, n: usize, seed: u64) -> Array {
    let chunks = n.div_ceil(CHUNK);
    let chunk_rng = |c: usize| Rng::new(seed ^ (c as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    match family {
        Family::Int(_, f) => {
            let values: Vec<i64> = (0..chunks)
                .into_par_iter()
                .flat_map_iter(|c| {
                    let (mut rng, mut prev) = (chunk_rng(c), Default::default());
                    (c * CHUNK..((c + 1) * CHUNK).min(n))
                        .map(move |i| {
                            prev = f(&mut rng, i, n, dtype, prev);
                            prev
                        })
                        .collect::<Vec<_>>()
                })
                .collect();
            match dtype {
                Dtype::Int32 => Array::Int32(values.into_iter().map(|v| v as i32).collect()),
                Dtype::Uint32 => Array::Uint32(values.into_iter().map(|v| v as u32).collect()),
                _ => Array::Int64(values),
            }
        }
        Family::Float(_, f) => {
            let values: Vec<f64> = (0..chunks)
                .into_par_iter()
                .flat_map_iter(|c| {
                    let (mut rng, mut prev) = (chunk_rng(c), Default::default());
                    (c * CHUNK..((c + 1) * CHUNK).min(n))
                        .map(move |i| {
                            prev = f(&mut rng, i, n, dtype, prev);
                            prev
                        })
                        .collect::<Vec<_>>()
                })
                .collect();
            float_array(dtype, values)
        }
    }
}

/// Compaction flags of `n` items from `seed`: about half 0 (dropped), the rest
/// 1, 7 or 255 (kept: any nonzero byte keeps).
pub fn flags(n: usize, seed: u64) -> Array {
    let flags: Vec<u8> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .flat_map_iter(|c| {
            let mut rng = Rng::new(seed ^ 0xf1a6_5eed ^ (c as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            (c * CHUNK..((c + 1) * CHUNK).min(n)).map(move |_| [0, 0, 0, 1, 7, 255][rng.index(6)]).collect::<Vec<u8>>()
        })
        .collect();
    Array::Uint8(flags)
}

/// `n` zeros of `dtype`.
pub fn zeros(dtype: Dtype, n: usize) -> Array {
    match dtype {
        Dtype::Int32 => Array::Int32(vec![0; n]),
        Dtype::Int64 => Array::Int64(vec![0; n]),
        Dtype::Uint8 => Array::Uint8(vec![0; n]),
        Dtype::Uint32 => Array::Uint32(vec![0; n]),
        float => float_array(float, vec![0.0; n]),
    }
}

/// `values` rounded to the float type `dtype` (nearest even); a NaN stays a
/// quiet NaN of its sign with the top bits of its payload ([`nan_bits`]).
pub fn float_array(dtype: Dtype, values: Vec<f64>) -> Array {
    let narrow = |v: f64, bits: fn(f64) -> u64| if v.is_nan() { nan_bits(v, dtype) } else { bits(v) };
    match dtype {
        Dtype::Float64 => Array::Float64(values),
        Dtype::Bfloat16 => Array::Bfloat16(
            values.into_iter().map(|v| narrow(v, |v| u64::from(half::bf16::from_f64(v).to_bits())) as u16).collect(),
        ),
        Dtype::Float16 => Array::Float16(
            values.into_iter().map(|v| narrow(v, |v| u64::from(half::f16::from_f64(v).to_bits())) as u16).collect(),
        ),
        _ => Array::Float32(
            values.into_iter().map(|v| f32::from_bits(narrow(v, |v| u64::from((v as f32).to_bits())) as u32)).collect(),
        ),
    }
}

/// The bits of the NaN `v` in the narrower float type `dtype`: its sign, all
/// exponent bits, the quiet bit, and f64's next fraction bits below the
/// quiet bit as far as the type's fraction reaches (IEEE 754's narrowing of a
/// quiet NaN keeps the top of its payload).
pub fn nan_bits(v: f64, dtype: Dtype) -> u64 {
    let bits = v.to_bits();
    // (width of the type, fraction bits)
    let (width, fraction) = match dtype {
        Dtype::Bfloat16 => (16, 7),
        Dtype::Float16 => (16, 10),
        Dtype::Float64 => return bits,
        _ => (32, 23),
    };
    let sign = (bits >> 63) << (width - 1);
    let exponent = ((1u64 << (width - 1 - fraction)) - 1) << fraction;
    let payload = (bits >> (52 - fraction)) & ((1 << fraction) - 1);
    sign | exponent | (1 << (fraction - 1)) | payload
}

/// The elements of a float array as f64 (exact).
pub fn float_values(array: &Array) -> Option<Vec<f64>> {
    Some(match array {
        Array::Float64(v) => v.clone(),
        Array::Float32(v) => v.par_iter().map(|&x| x as f64).collect(),
        Array::Bfloat16(v) => v.par_iter().map(|&b| half::bf16::from_bits(b).to_f64()).collect(),
        Array::Float16(v) => v.par_iter().map(|&b| half::f16::from_bits(b).to_f64()).collect(),
        _ => return None,
    })
}

/// The elements of an integer array as i64.
pub fn int_values(array: &Array) -> Option<Vec<i64>> {
    Some(match array {
        Array::Int32(v) => v.par_iter().map(|&x| x as i64).collect(),
        Array::Int64(v) => v.clone(),
        Array::Uint32(v) => v.par_iter().map(|&x| x as i64).collect(),
        _ => return None,
    })
}
