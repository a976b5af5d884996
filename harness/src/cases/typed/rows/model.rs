//! The exact models of the row contracts, each value rounded once to f64,
//! and each element's input scale (what its tolerance allows beyond the
//! output's own rounding, [`super::parts::Bound`]).
//!
//! Layer norm: the row sum is exact ([`ExactSum`], fixed point); the mean,
//! each deviation `x - mean`, the biased variance, `1/sqrt(var + eps)` and
//! each output are carried in double-double ([`Dd`], 106 bits): a deviation
//! is then exact to 2^-104 of |mean|, so a row of 1e4 + small integers keeps
//! about 90 correct bits in its variance. RMS norm: the sum of squares is
//! exact (a float32 square is an f64: 48 significand bits), then the same.
//! Cross-entropy: `log sum exp(x - max)` with each exponential in f64 (within
//! an ulp) and their sum in double-double, then `max - x[target]` added in
//! double-double; a reduction sums the rows' double-double losses. A loss's
//! error before its rounding to f64 is below 2^-50 (|loss| + 1), and every
//! norm value's below 2^-90 of its scale: ten orders of magnitude below any
//! tolerance a check uses (the tests hold the normaliser to the softmax
//! model's 192-bit one).

use super::dd::Dd;
use super::parts::{Reduction, RowKind, RowParts};
use crate::cases::typed::exact::ExactSum;

/// One expected element: the exact value (rounded once to f64), its input
/// scale, and whether it must be exactly zero (an ignored row's loss).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Elem {
    /// The exact value rounded to f64 (±inf and NaN where a rule defines them).
    pub exact: f64,
    /// The input scale its tolerance allows (`rtol_acc * scale`).
    pub scale: f64,
    /// An ignored row's loss: exactly 0 (either sign).
    pub zero: bool,
}

impl Elem {
    fn of(exact: f64, scale: f64) -> Elem {
        Elem { exact, scale, zero: false }
    }
}

/// A norm's outputs for one row: the normalised values and the statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct NormRow {
    /// Each output element.
    pub out: Vec<Elem>,
    /// The mean (layer norm; RMS norm: NaN, it has none).
    pub mean: Elem,
    /// `1/sqrt(var + eps)` (RMS norm: `1/sqrt(mean square + eps)`).
    pub rstd: Elem,
}

/// The largest |x| of a row (finite values; 0 for none).
pub fn max_abs(x: &[f64]) -> f64 {
    x.iter().filter(|v| v.is_finite()).fold(0.0, |m, v| m.max(v.abs()))
}

/// The exact sum of `values` as a double-double (hi the sum rounded once).
fn exact_sum(values: impl Iterator<Item = f64>) -> Dd {
    let mut s = ExactSum::new();
    values.for_each(|v| s.add(v));
    let hi = s.to_f64();
    Dd { hi, lo: s.minus_to_f64(hi) }
}

/// The norm of one row `x` (exact f64 values of the input) with its affine
/// buffers (`gamma`, and `beta` for layer norm) and `eps` as the kernel reads it.
pub fn norm_row(kind: RowKind, x: &[f64], affine: (Option<&[f64]>, Option<&[f64]>), eps: f32) -> NormRow {
    let n = Dd::from(x.len().max(1) as f64);
    let (gamma, beta) = affine;
    let weight = |c: usize| gamma.map_or(1.0, |g| g[c]);
    let bias = |c: usize| beta.map_or(0.0, |b| b[c]);
    let largest = max_abs(x);
    let eps = Dd::from(f64::from(eps));
    if kind == RowKind::RmsNorm {
        let mean_square = exact_sum(x.iter().map(|v| v * v)).div(n);
        let rstd = Dd::from(1.0).div(mean_square.add(eps).sqrt());
        let out = (0..x.len())
            .map(|c| {
                let y = Dd::from(x[c]).mul(rstd).mul(Dd::from(weight(c))).to_f64();
                Elem::of(y, y.abs())
            })
            .collect();
        let rstd = rstd.to_f64();
        return NormRow { out, mean: Elem::of(f64::NAN, 0.0), rstd: Elem::of(rstd, rstd) };
    }
    let mean = exact_sum(x.iter().copied()).div(n);
    let deviations: Vec<Dd> = x.iter().map(|&v| Dd::from(v).sub(mean)).collect();
    let var = deviations.iter().fold(Dd::ZERO, |s, d| s.add(d.mul(*d))).div(n);
    let rstd = Dd::from(1.0).div(var.add(eps).sqrt());
    let r = rstd.to_f64();
    let out = (0..x.len())
        .map(|c| {
            let y = deviations[c].mul(rstd).mul(Dd::from(weight(c))).add(Dd::from(bias(c)));
            Elem::of(y.to_f64(), weight(c).abs() * largest * r)
        })
        .collect();
    NormRow { out, mean: Elem::of(mean.to_f64(), largest), rstd: Elem::of(r, largest * r * r) }
}

/// One row's cross-entropy: None for an ignored row, else its loss and the row's largest finite |x|.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowLoss {
    /// `-log softmax(x)[target]` (+inf for a target logit of -inf); None: ignored.
    pub loss: Option<Dd>,
    /// The row's largest finite |x|.
    pub max_abs: f64,
}

/// The loss of one row of logits `x` whose target is `target` (`ignore` marks an ignored row).
pub fn loss_row(x: &[f64], target: i64, ignore: i64) -> Result<RowLoss, String> {
    let max_abs = max_abs(x);
    if target == ignore {
        return Ok(RowLoss { loss: None, max_abs });
    }
    let t = usize::try_from(target)
        .ok()
        .filter(|&t| t < x.len())
        .ok_or_else(|| format!("target {target} is outside [0, {}) and not ignore_index {ignore}", x.len()))?;
    if x[t] == f64::NEG_INFINITY {
        // softmax(x)[t] = 0 exactly: -log 0 = +inf.
        return Ok(RowLoss { loss: Some(Dd::from(f64::INFINITY)), max_abs });
    }
    let loss = log_normaliser(x)?.sub(Dd::from(x[t]));
    Ok(RowLoss { loss: Some(loss), max_abs })
}

/// `log sum_c exp(x_c)` of a row whose largest logit is finite: `m + log
/// sum exp(x_c - m)`, each `x_c - m` exact in double-double, each exp within
/// an ulp of f64 and corrected by the difference's low part, their sum in
/// double-double (at least 1: the largest term is exactly 1), its log in f64
/// corrected by the sum's low part. NaN or +inf is refused; -inf adds 0.
fn log_normaliser(x: &[f64]) -> Result<Dd, String> {
    if let Some(bad) = x.iter().find(|v| v.is_nan() || **v == f64::INFINITY) {
        return Err(format!("a logit of {bad}: the contract has no loss for it"));
    }
    let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return Err("a row of -inf logits only: the contract has no loss for it".into());
    }
    let sum = x.iter().filter(|v| v.is_finite()).fold(Dd::ZERO, |s, &v| {
        let d = Dd::from(v).sub(Dd::from(m));
        let e = d.hi.exp();
        s.add(Dd::from(e).add(Dd::from(e * d.lo)))
    });
    Ok(Dd::from(m).add(Dd::from(sum.hi.ln())).add(Dd::from(sum.lo / sum.hi)))
}

/// The expected loss elements of `rows` under `reduction`: one per row
/// (`none`; an ignored row's exactly 0), or one value (`mean`, `sum`) over
/// the rows not ignored.
pub fn reduce(rows: &[RowLoss], reduction: Reduction) -> Vec<Elem> {
    if reduction == Reduction::None {
        return rows
            .iter()
            .map(|r| match r.loss {
                None => Elem { exact: 0.0, scale: 0.0, zero: true },
                Some(l) => Elem::of(l.to_f64(), r.max_abs),
            })
            .collect();
    }
    let counted: Vec<(Dd, f64)> = rows.iter().filter_map(|r| r.loss.map(|l| (l, r.max_abs))).collect();
    let sum = counted.iter().fold(Dd::ZERO, |s, (l, _)| s.add(*l));
    let scale: f64 = counted.iter().map(|(l, m)| m + l.to_f64().abs()).sum();
    // An infinite loss makes the sum infinite (no row's loss is -inf or NaN).
    let infinite = counted.iter().any(|(l, _)| l.hi.is_infinite());
    let sum = if infinite { Dd::from(f64::INFINITY) } else { sum };
    let k = counted.len() as f64;
    match reduction {
        Reduction::Mean if counted.is_empty() => vec![Elem::of(f64::NAN, 0.0)],
        Reduction::Mean if infinite => vec![Elem::of(f64::INFINITY, scale / k)],
        Reduction::Mean => vec![Elem::of(sum.div(Dd::from(k)).to_f64(), scale / k)],
        _ => vec![Elem::of(sum.to_f64(), scale)],
    }
}

/// The expected elements of every output of a case of `parts`: `x` the
/// input (rows x cols), `affine` the gamma and beta inputs, `targets` and
/// `ignore` a cross-entropy's.
pub struct RowsInput<'a> {
    /// The input, row-major.
    pub x: &'a [f64],
    /// Rows and columns.
    pub shape: (usize, usize),
    /// A norm's gamma and beta (as the contract has them).
    pub affine: (Option<&'a [f64]>, Option<&'a [f64]>),
    /// A norm's eps, as the kernel reads it.
    pub eps: f32,
    /// A cross-entropy's targets and ignore_index.
    pub targets: (&'a [i64], i64),
}

/// Every output's expected elements, in the contract's order.
pub fn outputs(parts: &RowParts, input: &RowsInput) -> Result<Vec<Vec<Elem>>, String> {
    let (rows, cols) = input.shape;
    if input.x.len() != rows * cols {
        return Err(format!("{} values for {rows} x {cols}", input.x.len()));
    }
    let row = |r: usize| &input.x[r * cols..(r + 1) * cols];
    if parts.kind == RowKind::CrossEntropy {
        let (targets, ignore) = input.targets;
        if targets.len() != rows {
            return Err(format!("{} targets for {rows} rows", targets.len()));
        }
        let losses = (0..rows).map(|r| loss_row(row(r), targets[r], ignore)).collect::<Result<Vec<_>, _>>()?;
        return Ok(vec![reduce(&losses, parts.reduction)]);
    }
    let normed: Vec<NormRow> = (0..rows).map(|r| norm_row(parts.kind, row(r), input.affine, input.eps)).collect();
    let mut out = vec![normed.iter().flat_map(|n| n.out.iter().copied()).collect()];
    if parts.stats && parts.kind == RowKind::LayerNorm {
        out.push(normed.iter().map(|n| n.mean).collect());
    }
    if parts.stats {
        out.push(normed.iter().map(|n| n.rstd).collect());
    }
    Ok(out)
}
