//! Top-k rows: ties straddling the k-th value, signed zeros, equal rows, sorted and reversed
//! rows, and the special values (NaN, infinities, subnormals).

use super::rng::Rng;
use crate::ModelError;

/// The value styles of top-k rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TopkFamily {
    /// Moderate values in [-8, 8): few exact ties.
    Spread,
    /// Seven values (both zeros among them): every k-th value has a long run of equals.
    Ties,
    /// Mostly +0.0 and -0.0, a few ±1: the zeros must count as one value.
    SignedZeros,
    /// One value everywhere: the lowest k indices, in order.
    AllEqual,
    /// Increasing along the row; in a 16-bit type long runs round to one value.
    Ascending,
    /// Decreasing along the row.
    Descending,
    /// NaN, ±inf, subnormals, ±max and zeros mixed with moderate values (for the rule that
    /// orders NaN above every number).
    Specials,
    /// Moderate values with about 7 columns in 8 masked to `-inf` (a sampler's masked
    /// vocabulary: the k-th value is often `-inf`); column `row % cols` of each row stays
    /// finite.
    Masked,
}

impl TopkFamily {
    /// Every family.
    pub const ALL: [TopkFamily; 8] = [
        TopkFamily::Spread,
        TopkFamily::Ties,
        TopkFamily::SignedZeros,
        TopkFamily::AllEqual,
        TopkFamily::Ascending,
        TopkFamily::Descending,
        TopkFamily::Specials,
        TopkFamily::Masked,
    ];

    /// Snake-case name (case ids).
    pub fn name(self) -> &'static str {
        match self {
            TopkFamily::Spread => "topk_spread",
            TopkFamily::Ties => "topk_ties",
            TopkFamily::SignedZeros => "topk_signed_zeros",
            TopkFamily::AllEqual => "topk_all_equal",
            TopkFamily::Ascending => "topk_ascending",
            TopkFamily::Descending => "topk_descending",
            TopkFamily::Specials => "topk_specials",
            TopkFamily::Masked => "topk_masked",
        }
    }

    /// Whether its rows hold NaN.
    pub fn has_nan(self) -> bool {
        self == TopkFamily::Specials
    }
}

/// A row-major `rows × cols` f32 buffer of `family` from `seed` (the 16-bit cases round it
/// to their type). Error: `BadShape` when `rows · cols` overflows.
pub fn topk_rows(family: TopkFamily, rows: usize, cols: usize, seed: u64) -> Result<Vec<f32>, ModelError> {
    let len = rows
        .checked_mul(cols)
        .ok_or_else(|| ModelError::BadShape { primitive: "topk_rows", detail: format!("{rows} x {cols} overflows") })?;
    let mut rng = Rng::new(seed);
    let step = 16.0 / cols.max(1) as f64;
    Ok((0..len)
        .map(|i| {
            let c = i % cols.max(1);
            let r = i / cols.max(1);
            match family {
                TopkFamily::Spread => (8.0 * rng.signed_unit_f64()) as f32,
                TopkFamily::Ties => [-2.0f32, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0][rng.index(7)],
                TopkFamily::SignedZeros => match rng.index(10) {
                    0 => 1.0,
                    1 => -1.0,
                    k if k < 6 => 0.0,
                    _ => -0.0,
                },
                TopkFamily::AllEqual => 1.25,
                TopkFamily::Ascending => (-8.0 + step * c as f64) as f32,
                TopkFamily::Descending => (8.0 - step * c as f64) as f32,
                TopkFamily::Specials => match rng.index(12) {
                    0 => f32::NAN,
                    1 => f32::INFINITY,
                    2 => f32::NEG_INFINITY,
                    3 => 1e-40,
                    4 => -1e-40,
                    5 => f32::MAX,
                    6 => -f32::MAX,
                    7 => -0.0,
                    8 => 0.0,
                    _ => (4.0 * rng.signed_unit_f64()) as f32,
                },
                TopkFamily::Masked => {
                    let value = (8.0 * rng.signed_unit_f64()) as f32;
                    if c != r % cols && rng.index(8) != 0 {
                        f32::NEG_INFINITY
                    } else {
                        value
                    }
                }
            }
        })
        .collect())
}
