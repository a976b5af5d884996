//! The data families of the row contracts, each aimed at a bug that row
//! kernels are known for. Values are drawn as f64 and rounded once to the
//! input type, so the model reads what the kernel reads.
//!
//! Norms (layer norm, RMS norm):
//!
//! | family | rows | the bug it shows |
//! | --- | --- | --- |
//! | `uniform` | uniform in [-1, 1) | any wrong answer; a bfloat16 accumulator drifts on long rows |
//! | `offset` | c + k h, k small integers in [-9, 9]: 1e4 + k (float32), 1024 + k (float16), 256 + 2k (bfloat16) | `E[x^2] - E[x]^2` cancels every digit (and goes negative: rsqrt gives NaN) |
//! | `constant` | each row one value of [`CONSTANTS`]: its sum is exact in float32 in any order, so the mean is the value and the variance exactly 0 | no eps: 0 * rsqrt(0) is NaN |
//! | `mixed_magnitudes` | ±[1, 2) 2^e, e in [-24, 24] (float16: [-14, 14]) | one element dominates the row |
//! | `large` | ±[1, 2) 2^e, e in [20, 40] (float16: [10, 14]) | squares past 2^80: a float16 accumulator overflows |
//! | `subnormal` | ±[1, 2) 2^e, e in [-133, -127] (float16: [-24, -15]) | subnormal inputs and a variance that float32 flushes to 0 |
//!
//! Cross-entropy (targets uniform in [0, cols) unless said):
//!
//! | family | logits | the bug it shows |
//! | --- | --- | --- |
//! | `uniform_logits` | uniform in [-4, 4) | any wrong answer |
//! | `extreme_logits` | rows near +1e4, near -1e4, and mixing both (±1e4 + [-8, 8)) | no max shift: exp overflows (inf/inf) or underflows (log 0) |
//! | `ignored_rows` | uniform; about a quarter of the targets ignore_index (never row 0, always the last row) | a mean that counts ignored rows |
//! | `all_ignored` | uniform; every target ignore_index | mean of nothing: NaN (sum 0, none all 0) |
//! | `masked_logits` | uniform with about one logit in 8 -inf, never the target | -inf - max handled as a number |
//! | `target_neg_inf` | uniform; every fourth row's target logit -inf (rows of two or more columns) | the rule: +inf loss |
//! | `peaked` | one logit 30 to 60 above the rest, the target on odd rows | a loss near 0 computed as `logsumexp - x[t]` |
//! | `tiny_logits` | ±[1, 2) 2^e, e in [-133, -127] (float16: [-24, -15]) | subnormal logits (the loss is log cols) |
//! | `huge_logits` | ±[1, 2) 2^e, e in [60, 100] (float16: [8, 13]) | x - max past the float range |
//!
//! No family puts NaN or +inf in an input, or -inf in a norm's input: the
//! contracts define no answer for them.

use crate::sweep::raw::Dtype;
use model::generators::Rng;

/// The value of a constant row: sums of up to 2^17 copies are exact in
/// float32 (at most 2^7 * 2^17 = 2^24), and so is their quotient by cols.
pub const CONSTANTS: [f64; 7] = [0.0, 1.0, -3.0, 0.75, -0.5, 0.0009765625, 100.0];

/// The ignore_index of every cross-entropy case (`F.cross_entropy`'s default).
pub const IGNORE_INDEX: i64 = -100;

/// Row r of `cols` values of a family (rng, r, cols, input type), before rounding.
pub type Values = fn(&mut Rng, usize, usize, Dtype) -> Vec<f64>;

/// Targets for `rows` rows of `cols` logits.
type Targets = fn(&mut Rng, usize, usize) -> Vec<i64>;

/// A family of a norm's inputs: its name and one row's values.
#[derive(Clone, Copy)]
pub struct NormFamily {
    /// The name in case ids.
    pub name: &'static str,
    /// Row r's values.
    pub values: Values,
}

/// A family of a cross-entropy's inputs: its name, each row's logits and the targets.
#[derive(Clone, Copy)]
pub struct LossFamily {
    /// The name in case ids.
    pub name: &'static str,
    /// Row r's logits (before the targets adjust them).
    pub values: Values,
    /// The targets.
    pub targets: Targets,
    /// Adjusts the logits once the targets are known (masks, a -inf target).
    pub adjust: fn(&mut [f64], usize, &[i64]),
}

fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * 2f64.powi(-53)
}

fn sign(rng: &mut Rng) -> f64 {
    if rng.below(2) == 0 {
        1.0
    } else {
        -1.0
    }
}

/// ±[1, 2) 2^e with e uniform in `exponents`.
fn magnitudes(rng: &mut Rng, cols: usize, exponents: (i32, i32)) -> Vec<f64> {
    let span = (exponents.1 - exponents.0 + 1) as u64;
    (0..cols).map(|_| sign(rng) * (1.0 + unit(rng)) * 2f64.powi(exponents.0 + rng.below(span) as i32)).collect()
}

fn uniform(rng: &mut Rng, _: usize, cols: usize, _: Dtype) -> Vec<f64> {
    (0..cols).map(|_| 2.0 * unit(rng) - 1.0).collect()
}

/// The offset and step of the `offset` family: the largest offset whose
/// neighbours c + k h (|k| <= 9) the input type still holds exactly.
pub fn offset_of(dtype: Dtype) -> (f64, f64) {
    match dtype {
        Dtype::Bfloat16 => (256.0, 2.0),
        Dtype::Float16 => (1024.0, 1.0),
        _ => (1e4, 1.0),
    }
}

fn offset(rng: &mut Rng, _: usize, cols: usize, dtype: Dtype) -> Vec<f64> {
    let (c, h) = offset_of(dtype);
    (0..cols).map(|_| c + h * (rng.below(19) as f64 - 9.0)).collect()
}

fn constant(rng: &mut Rng, _: usize, cols: usize, _: Dtype) -> Vec<f64> {
    vec![CONSTANTS[rng.index(CONSTANTS.len())]; cols]
}

fn float16(dtype: Dtype) -> bool {
    dtype == Dtype::Float16
}

fn mixed_magnitudes(rng: &mut Rng, _: usize, cols: usize, dtype: Dtype) -> Vec<f64> {
    magnitudes(rng, cols, if float16(dtype) { (-14, 14) } else { (-24, 24) })
}

fn large(rng: &mut Rng, _: usize, cols: usize, dtype: Dtype) -> Vec<f64> {
    magnitudes(rng, cols, if float16(dtype) { (10, 14) } else { (20, 40) })
}

fn subnormal(rng: &mut Rng, _: usize, cols: usize, dtype: Dtype) -> Vec<f64> {
    magnitudes(rng, cols, if float16(dtype) { (-24, -15) } else { (-133, -127) })
}

/// The norms' families, in catalogue order (the first is the sanitizer runs' one).
pub const NORM: [NormFamily; 6] = [
    NormFamily { name: "uniform", values: uniform },
    NormFamily { name: "offset", values: offset },
    NormFamily { name: "constant", values: constant },
    NormFamily { name: "mixed_magnitudes", values: mixed_magnitudes },
    NormFamily { name: "large", values: large },
    NormFamily { name: "subnormal", values: subnormal },
];

/// Gamma (±[0.25, 2)) and beta (uniform in [-1, 1)) of `cols` elements.
pub fn affine(rng: &mut Rng, cols: usize) -> (Vec<f64>, Vec<f64>) {
    let gamma = (0..cols).map(|_| sign(rng) * (0.25 + 1.75 * unit(rng))).collect();
    let beta = (0..cols).map(|_| 2.0 * unit(rng) - 1.0).collect();
    (gamma, beta)
}

fn logits(rng: &mut Rng, _: usize, cols: usize, _: Dtype) -> Vec<f64> {
    (0..cols).map(|_| 8.0 * unit(rng) - 4.0).collect()
}

fn extreme(rng: &mut Rng, r: usize, cols: usize, _: Dtype) -> Vec<f64> {
    let near = |rng: &mut Rng, c: f64| c + 16.0 * unit(rng) - 8.0;
    match r % 3 {
        0 => (0..cols).map(|_| near(rng, 1e4)).collect(),
        1 => (0..cols).map(|_| near(rng, -1e4)).collect(),
        _ => (0..cols)
            .map(|_| {
                let side = sign(rng);
                near(rng, 1e4 * side)
            })
            .collect(),
    }
}

fn peaked(rng: &mut Rng, r: usize, cols: usize, dtype: Dtype) -> Vec<f64> {
    let mut x = logits(rng, r, cols, dtype);
    let peak = rng.index(cols);
    x[peak] = 30.0 + 30.0 * unit(rng);
    x
}

fn tiny_logits(rng: &mut Rng, r: usize, cols: usize, dtype: Dtype) -> Vec<f64> {
    subnormal(rng, r, cols, dtype)
}

fn huge_logits(rng: &mut Rng, _: usize, cols: usize, dtype: Dtype) -> Vec<f64> {
    magnitudes(rng, cols, if float16(dtype) { (8, 13) } else { (60, 100) })
}

fn any_targets(rng: &mut Rng, rows: usize, cols: usize) -> Vec<i64> {
    (0..rows).map(|_| rng.index(cols) as i64).collect()
}

/// About a quarter ignored, never row 0 (something is counted), always the last row (when there are two).
fn some_ignored(rng: &mut Rng, rows: usize, cols: usize) -> Vec<i64> {
    let mut t = any_targets(rng, rows, cols);
    for (r, target) in t.iter_mut().enumerate().skip(1) {
        if r + 1 == rows || rng.below(4) == 0 {
            *target = IGNORE_INDEX;
        }
    }
    t
}

fn all_ignored(_: &mut Rng, rows: usize, _: usize) -> Vec<i64> {
    vec![IGNORE_INDEX; rows]
}

fn unchanged(_: &mut [f64], _: usize, _: &[i64]) {}

/// About one logit in 8 masked (-inf), never a row's target.
fn mask_some(x: &mut [f64], cols: usize, targets: &[i64]) {
    for (r, row) in x.chunks_mut(cols).enumerate() {
        for (c, v) in row.iter_mut().enumerate() {
            // Deterministic in (r, c): the data's seed already varies the rows.
            if (r * 7 + c * 13) % 8 == 3 && targets[r] != c as i64 {
                *v = f64::NEG_INFINITY;
            }
        }
    }
}

/// Every fourth row's target logit -inf, where the row has another logit.
fn target_neg_inf(x: &mut [f64], cols: usize, targets: &[i64]) {
    for (r, row) in x.chunks_mut(cols).enumerate() {
        if r % 4 == 1 && cols > 1 {
            if let Ok(t) = usize::try_from(targets[r]) {
                row[t] = f64::NEG_INFINITY;
            }
        }
    }
}

/// The peak (a row's largest logit) moved to the target on odd rows.
fn target_at_peak(x: &mut [f64], cols: usize, targets: &[i64]) {
    for (r, row) in x.chunks_mut(cols).enumerate().filter(|(r, _)| r % 2 == 1) {
        let peak = (0..row.len()).fold(0, |best, c| if row[c] > row[best] { c } else { best });
        if let Ok(t) = usize::try_from(targets[r]) {
            row.swap(peak, t);
        }
    }
}

/// The cross-entropy's families, in catalogue order.
pub const LOSS: [LossFamily; 9] = [
    LossFamily { name: "uniform_logits", values: logits, targets: any_targets, adjust: unchanged },
    LossFamily { name: "extreme_logits", values: extreme, targets: any_targets, adjust: unchanged },
    LossFamily { name: "ignored_rows", values: logits, targets: some_ignored, adjust: unchanged },
    LossFamily { name: "all_ignored", values: logits, targets: all_ignored, adjust: unchanged },
    LossFamily { name: "masked_logits", values: logits, targets: any_targets, adjust: mask_some },
    LossFamily { name: "target_neg_inf", values: logits, targets: any_targets, adjust: target_neg_inf },
    LossFamily { name: "peaked", values: peaked, targets: any_targets, adjust: target_at_peak },
    LossFamily { name: "tiny_logits", values: tiny_logits, targets: any_targets, adjust: unchanged },
    LossFamily { name: "huge_logits", values: huge_logits, targets: any_targets, adjust: unchanged },
];
