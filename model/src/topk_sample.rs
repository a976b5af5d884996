//! Top-k sampling, the consumer of top-k: per row, the `k` largest logits (top-k's order and
//! tie rule), a softmax over them with a temperature, and one draw from a caller-supplied
//! uniform number, so the sample is reproducible.
//!
//! # Contract
//!
//! * Input: a row-major `[rows, cols]` tensor of f32, bf16 or f16 logits, one uniform `u` in
//!   `[0, 1)` per row (f32), and a [`SampleSpec`]: `1 <= k <= cols` and a finite temperature
//!   `T > 0`.
//! * The survivors are the row's top-k ([`crate::topk`]: value descending, index ascending
//!   among equals). Survivor `i` (value `v_i`, `v_0` the row's largest) weighs
//!   `w_i = exp((v_i - v_0) / T)` and has probability `p_i = w_i / S`, `S` the sum of the
//!   weights. A `-inf` logit weighs 0 and is never drawn.
//! * The draw is the first survivor `j`, in the survivors' order, with `u < C_j / S`, `C_j`
//!   the sum of the weights of survivors `0..=j`: the inverse CDF. Outputs per row: the drawn
//!   column (int64) and its probability `p_j` (f32).
//! * Refused, in this order: a NaN or `+inf` logit ([`ModelError::NonFinite`]: the first flat
//!   index, counting for each row its first NaN, or, in a row with no NaN and `+inf` as its
//!   largest value, the first `+inf`); a row whose largest value is `-inf` (nothing to draw);
//!   a uniform outside `[0, 1)` ([`ModelError::BadSample`], the first such row each).
//!
//! # What a sampler is held to
//!
//! The model computes each weight and sum in f64 from the values widened exactly.
//! [`RowDistribution::judge`] accepts the drawn survivor `j` when `p_j > 0` and `u` lies in
//! its CDF interval widened on each side by the slack of the sampler's [`Precision`], and its
//! probability (when it writes one) when it is within that precision's bound of the exact
//! `p_j`. [`Precision::Double`] (our kernels, which weigh and sum in double): a slack of
//! [`CDF_SLACK`] and one f32 rounding. [`Precision::Float32`] (a user's sampler that weighs and
//! sums in float32, as PyTorch's recipe does): a slack of `(2k + 8) 2^-24` and a relative
//! bound of `(2 |x_j| + 2k + 8) 2^-24`, `x_j = (v_j - v_0) / T`: each scaled logit rounded
//! twice (`|x| 2^-23`, which moves `exp(x)` by at most `e^x |x| 2^-23 <= 0.74 * 2^-24` of the
//! sum, whose largest term is 1), each exponential within 2 ulp, and a running sum of k terms.

use crate::topk::{self, TopkNan, TopkSpec, TopkValue};
use crate::ModelError;

/// The sampler's parameters, defined once for the kernels and the model.
pub use primlab_types::SampleSpec;

/// How far outside its CDF interval a uniform may lie and still draw the survivor: far above
/// the f64 rounding of any order of summing 4096 weights (about 2^-41 of the sum), far below
/// the gap between two f32 uniforms near 1 (2^-24).
pub const CDF_SLACK: f64 = 1.0 / (1u64 << 32) as f64;

/// How a sampler weighs and sums, and so the slack its draws are judged with (module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Precision {
    /// Weights and sums in double: [`CDF_SLACK`], one f32 rounding of the probability.
    Double,
    /// Weights and sums in float32: `(2k + 8) 2^-24`, and `(2 |x_j| + 2k + 8) 2^-24` relative.
    Float32,
}

impl Precision {
    /// How far outside its CDF interval `u` may lie with `k` survivors.
    pub fn cdf_slack(self, k: usize) -> f64 {
        match self {
            Precision::Double => CDF_SLACK,
            Precision::Float32 => (2 * k + 8) as f64 * F32_UNIT,
        }
    }

    /// The bound of a probability `p` of scaled logit `x` among `k` survivors.
    pub fn probability_bound(self, p: f64, x: f64, k: usize) -> f64 {
        let tiny = f64::from(f32::from_bits(1));
        match self {
            Precision::Double => p * f32::EPSILON as f64 + tiny,
            Precision::Float32 => p * (2.0 * x.abs() + (2 * k + 8) as f64) * F32_UNIT + tiny,
        }
    }

    /// The precision in words.
    pub fn words(self) -> &'static str {
        match self {
            Precision::Double => "u within 2^-32 of the drawn column's CDF interval, probability to one f32 rounding",
            Precision::Float32 => {
                "u within (2k + 8) 2^-24 of the drawn column's CDF interval, probability within (2|x| + 2k + 8) \
                 2^-24 relative (x = (v - max) / T)"
            }
        }
    }
}

/// The float32 unit roundoff.
const F32_UNIT: f64 = 1.0 / (1u64 << 24) as f64;

/// One row's survivors and their exact distribution.
#[derive(Debug, Clone, PartialEq)]
pub struct RowDistribution {
    /// The survivors' columns, in top-k order.
    pub columns: Vec<i64>,
    /// Their scaled logits `(v_i - v_0) / T` (`-inf` for a masked one).
    pub scaled: Vec<f64>,
    /// Their weights `exp(scaled)`.
    pub weights: Vec<f64>,
    /// `cumulative[i]`: the sum of the weights of survivors `0..=i`.
    pub cumulative: Vec<f64>,
}

impl RowDistribution {
    /// The sum of the weights (at least 1: the largest survivor weighs exactly 1).
    pub fn total(&self) -> f64 {
        self.cumulative.last().copied().unwrap_or(0.0)
    }

    /// The probability of survivor `i`.
    pub fn probability(&self, i: usize) -> f64 {
        self.weights[i] / self.total()
    }

    /// The survivor the contract's draw picks for `u` (the first `j` with `u * S < C_j`; the
    /// last survivor when rounding leaves none).
    pub fn draw(&self, u: f32) -> usize {
        let target = u as f64 * self.total();
        self.cumulative.iter().position(|&c| target < c).unwrap_or(self.columns.len() - 1)
    }

    /// Whether a sampler's `column` and `probability` (when it writes one) for uniform `u` meet
    /// the contract at `precision` (module doc); the error says what is wrong in words.
    pub fn judge(&self, u: f32, column: i64, probability: Option<f32>, precision: Precision) -> Result<(), String> {
        let expected = self.draw(u);
        let want = format!("column {} (p = {:.9})", self.columns[expected], self.probability(expected));
        let Some(i) = self.columns.iter().position(|&c| c == column) else {
            return Err(format!(
                "drew column {column}, not among the row's {} survivors; want {want}",
                self.columns.len()
            ));
        };
        let p = self.probability(i);
        if p == 0.0 {
            return Err(format!("drew column {column}, whose probability is 0 (a -inf logit); want {want}"));
        }
        let (total, k) = (self.total(), self.columns.len());
        let below = if i == 0 { 0.0 } else { self.cumulative[i - 1] / total };
        let above = self.cumulative[i] / total;
        let (slack, u64) = (precision.cdf_slack(k), u as f64);
        if u64 < below - slack || u64 >= above + slack {
            return Err(format!(
                "drew column {column} (survivor {i}, CDF interval [{below:.12}, {above:.12}), slack {slack:.2e}) for u = \
                 {u:e}; want {want}"
            ));
        }
        let Some(probability) = probability else { return Ok(()) };
        let bound = precision.probability_bound(p, self.scaled[i], k);
        // A NaN probability fails too: its error is then not within the bound.
        let within = (probability as f64 - p).abs() <= bound;
        if !within {
            return Err(format!("probability {probability:e} of column {column}; want {p:e} (within {bound:.3e})"));
        }
        Ok(())
    }
}

const PRIMITIVE: &str = "topk_sample";

/// Each row's distribution (module doc), after the contract's refusals, in its order.
pub fn distributions<T: TopkValue>(
    input: &[T],
    (rows, cols): (usize, usize),
    spec: SampleSpec,
    uniforms: &[f32],
) -> Result<Vec<RowDistribution>, ModelError> {
    let bad = |detail: String| ModelError::BadSample { detail };
    if spec.k == 0 {
        return Err(bad("k = 0: there is nothing to draw from".into()));
    }
    if !(spec.temperature.is_finite() && spec.temperature > 0.0) {
        return Err(bad(format!("temperature {} is not finite and above 0", spec.temperature)));
    }
    if uniforms.len() != rows {
        return Err(ModelError::BadShape {
            primitive: PRIMITIVE,
            detail: format!("{} uniforms for {rows} rows", uniforms.len()),
        });
    }
    let select = TopkSpec { k: spec.k, largest: true, nan: TopkNan::AboveAll };
    topk::check(input, rows, cols, select)?;
    refuse_nonfinite(input, cols)?;
    let top = topk::topk_rows(input, rows, cols, select)?;
    if let Some(r) = (0..rows).find(|&r| top.values[r * spec.k].to_f64() == f64::NEG_INFINITY) {
        return Err(bad(format!("row {r} has no finite logit (its largest is -inf): nothing to draw")));
    }
    if let Some(r) = uniforms.iter().position(|u| !(0.0..1.0).contains(u)) {
        return Err(bad(format!("the uniform of row {r} is {:e}, not in [0, 1)", uniforms[r])));
    }
    let temperature = spec.temperature as f64;
    Ok((0..rows)
        .map(|r| {
            let values = &top.values[r * spec.k..(r + 1) * spec.k];
            let largest = values[0].to_f64();
            let scaled: Vec<f64> = values.iter().map(|v| (v.to_f64() - largest) / temperature).collect();
            let weights: Vec<f64> = scaled.iter().map(|x| x.exp()).collect();
            let cumulative = weights
                .iter()
                .scan(0.0, |sum, w| {
                    *sum += w;
                    Some(*sum)
                })
                .collect();
            RowDistribution { columns: top.indices[r * spec.k..(r + 1) * spec.k].to_vec(), scaled, weights, cumulative }
        })
        .collect())
}

/// The first refused flat index (module doc): per row its first NaN, or, with no NaN, its
/// first `+inf` when that is its largest value; the first such row's.
fn refuse_nonfinite<T: TopkValue>(input: &[T], cols: usize) -> Result<(), ModelError> {
    for (r, row) in input.chunks(cols.max(1)).enumerate() {
        let nan = row.iter().position(|v| v.is_nan());
        let index = nan.or_else(|| row.iter().position(|v| v.to_f64() == f64::INFINITY));
        if let Some(c) = index {
            let index = r * cols + c;
            return Err(ModelError::NonFinite { primitive: PRIMITIVE, index, value: input[index].to_f64() });
        }
    }
    Ok(())
}

/// The model's draws: per row, the drawn column and its exact probability.
pub fn sample_rows<T: TopkValue>(
    input: &[T],
    shape: (usize, usize),
    spec: SampleSpec,
    uniforms: &[f32],
) -> Result<Vec<(i64, f64)>, ModelError> {
    let rows = distributions(input, shape, spec, uniforms)?;
    Ok(rows
        .iter()
        .zip(uniforms)
        .map(|(d, &u)| {
            let j = d.draw(u);
            (d.columns[j], d.probability(j))
        })
        .collect())
}

#[cfg(test)]
#[path = "topk_sample_tests.rs"]
mod tests;
