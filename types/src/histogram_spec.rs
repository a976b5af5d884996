//! Even-width histogram bins over `[lower, upper)`, and the bin of a sample:
//! the formula every histogram kernel computes and the model checks.
//!
//! * `i32`: in range iff `lower <= x < upper`; `bin = ((x - lower) * bins) /
//!   (upper - lower)` in exact 64-bit integers (the floor of a non-negative
//!   quotient, always in `0..bins`).
//! * `f32`: in range iff `lower <= x && x < upper` (NaN never counts);
//!   `scale = (bins as f32) / (upper - lower)` rounded once in f32;
//!   `bin = min(trunc((x - lower) * scale), bins - 1)` with the subtraction
//!   and the product each rounded to nearest in f32 (no FMA). Near a bin edge
//!   this can differ by one from the mathematical floor.

/// The most bins a histogram may have.
pub const MAX_BINS: u32 = 4096;

/// `bins` even bins over `[lower, upper)` for samples of type `T` (`i32` or
/// `f32`). Valid when `1 <= bins <= MAX_BINS` and `lower < upper` (for `f32`
/// also finite bounds and a finite `upper - lower`); the consumers (kernel
/// plans, model) validate and report their own errors.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct HistogramSpec<T> {
    /// Number of bins, `1..=4096`.
    pub bins: u32,
    /// The first value counted (inclusive lower edge).
    pub lower: T,
    /// The first value past the last bin (exclusive upper edge).
    pub upper: T,
}

impl HistogramSpec<i32> {
    /// The bin of `x` by the exact integer formula, or `None` when `x` is
    /// outside `[lower, upper)`. Assumes a valid spec.
    pub fn bin_of(&self, x: i32) -> Option<usize> {
        if x < self.lower || x >= self.upper {
            return None;
        }
        let offset = i64::from(x) - i64::from(self.lower);
        let width = i64::from(self.upper) - i64::from(self.lower);
        usize::try_from(offset * i64::from(self.bins) / width).ok()
    }
}

impl HistogramSpec<f32> {
    /// `(bins as f32) / (upper - lower)` in f32: the scale the kernels
    /// multiply by.
    pub fn scale(&self) -> f32 {
        (self.bins as f32) / (self.upper - self.lower)
    }

    /// The bin of `x` by the f32 formula, or `None` when `!(lower <= x && x <
    /// upper)`. Assumes a valid spec.
    pub fn bin_of(&self, x: f32) -> Option<usize> {
        if !(self.lower <= x && x < self.upper) {
            return None;
        }
        let t = (x - self.lower) * self.scale();
        // `as` truncates toward zero (and saturates); t >= 0 here.
        Some((t as usize).min(self.bins as usize - 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn i32_bins_are_the_exact_floor() {
        let spec = HistogramSpec { bins: 19, lower: -9, upper: 11 };
        assert_eq!(spec.bin_of(-10), None);
        assert_eq!(spec.bin_of(-9), Some(0));
        assert_eq!(spec.bin_of(10), Some(18));
        assert_eq!(spec.bin_of(11), None);
        let wide = HistogramSpec { bins: 4096, lower: i32::MIN, upper: i32::MAX };
        assert_eq!(wide.bin_of(i32::MAX - 1), Some(4095));
    }
}
