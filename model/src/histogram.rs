//! Even-width histograms over `[lower, upper)`, for `i32` and `f32` samples, with bin formulas
//! the CUDA kernels reproduce bit for bit.
//!
//! # Bin formulas (the GPU must compute exactly these)
//!
//! * **`i32`**: in range iff `lower <= x < upper`; `bin = ((x − lower) · bins) / (upper − lower)`
//!   in 64-bit integers (`(long long)x - lower`, times `bins`, integer division): the exact
//!   `floor((x − lower)·bins / (upper − lower))`, always in `0..bins`.
//! * **`f32`**: in range iff `lower <= x && x < upper` (f32 compares; NaN is out of range);
//!   `scale = (float)bins / (upper − lower)` computed once in f32 (round to nearest) and
//!   passed to the kernel ([`f32_scale`]); `t = __fmul_rn(__fsub_rn(x, lower), scale)`
//!   (two f32 roundings, **no** fused or reassociated arithmetic); `bin = min((int)t,
//!   bins − 1)` (truncation; `t >= 0`; the clamp catches `t` rounding up to `bins`). This can
//!   differ by one from the mathematical `floor((x − lower)·bins/(upper − lower))` near bin
//!   edges ([`mathematical_bin_f32`] gives the latter); both the model and the GPU use the f32
//!   formula.

use rug::Rational;

use crate::ModelError;

/// The specification (`bins` even bins over `[lower, upper)`) and its bin formulas, defined
/// once in `primlab-types` and shared with the kernels crate.
pub use primlab_types::{HistogramSpec, MAX_BINS};

/// A sample type with an even-bin formula (implemented for `i32` and `f32`).
pub trait HistogramSample: Copy {
    /// Checks the specification: `bins` in `1..=4096`, `lower < upper`, and for `f32` finite
    /// bounds, finite `upper − lower` and a finite nonzero `scale`. Error: `BadHistogram`.
    fn validate(spec: &HistogramSpec<Self>) -> Result<(), ModelError>;
    /// The bin of `x` by the documented formula, or `None` when out of range. Assumes a valid
    /// spec.
    fn bin(spec: &HistogramSpec<Self>, x: Self) -> Option<usize>;
}

fn check_bins(bins: u32) -> Result<(), ModelError> {
    if !(1..=MAX_BINS).contains(&bins) {
        return Err(ModelError::BadHistogram { detail: format!("bins = {bins} outside 1..={MAX_BINS}") });
    }
    Ok(())
}

impl HistogramSample for i32 {
    fn validate(spec: &HistogramSpec<i32>) -> Result<(), ModelError> {
        check_bins(spec.bins)?;
        if spec.lower >= spec.upper {
            return Err(ModelError::BadHistogram {
                detail: format!("lower {} is not below upper {}", spec.lower, spec.upper),
            });
        }
        Ok(())
    }

    fn bin(spec: &HistogramSpec<i32>, x: i32) -> Option<usize> {
        spec.bin_of(x)
    }
}

/// The f32 `scale = bins / (upper − lower)` the kernel multiplies by (both roundings in f32).
pub fn f32_scale(spec: &HistogramSpec<f32>) -> f32 {
    spec.scale()
}

impl HistogramSample for f32 {
    fn validate(spec: &HistogramSpec<f32>) -> Result<(), ModelError> {
        check_bins(spec.bins)?;
        if !spec.lower.is_finite() || !spec.upper.is_finite() {
            return Err(ModelError::BadHistogram {
                detail: format!("bounds {} .. {} are not finite", spec.lower, spec.upper),
            });
        }
        if spec.lower >= spec.upper {
            return Err(ModelError::BadHistogram {
                detail: format!("lower {} is not below upper {}", spec.lower, spec.upper),
            });
        }
        let range = spec.upper - spec.lower;
        let scale = f32_scale(spec);
        if !range.is_finite() || !scale.is_finite() || scale == 0.0 {
            return Err(ModelError::BadHistogram {
                detail: format!("f32 range {range} or scale {scale} is not finite and nonzero"),
            });
        }
        Ok(())
    }

    fn bin(spec: &HistogramSpec<f32>, x: f32) -> Option<usize> {
        spec.bin_of(x)
    }
}

/// The mathematical bin `floor((x − lower)·bins / (upper − lower))` in exact rational
/// arithmetic, `None` out of range: for studying where the f32 formula moves a sample across
/// an edge (never by more than one bin).
pub fn mathematical_bin_f32(spec: &HistogramSpec<f32>, x: f32) -> Option<usize> {
    let in_range = spec.lower <= x && x < spec.upper;
    if !in_range {
        return None;
    }
    let q = |v: f32| Rational::from_f32(v).unwrap_or_default();
    let value = (q(x) - q(spec.lower)) * spec.bins / (q(spec.upper) - q(spec.lower));
    let floor = value.floor();
    floor.numer().to_usize()
}

/// Counts per bin (length `bins`); out-of-range samples (and NaN) are not counted.
/// Errors: the spec's `BadHistogram`.
pub fn histogram_even<T: HistogramSample>(samples: &[T], spec: &HistogramSpec<T>) -> Result<Vec<u64>, ModelError> {
    T::validate(spec)?;
    let mut counts = vec![0u64; spec.bins as usize];
    for &x in samples {
        if let Some(b) = T::bin(spec, x) {
            counts[b] += 1;
        }
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn seed_values_in_integer_bins() {
        let x = [3, -1, 4, 1, 5, -9, 2, 6];
        let spec = HistogramSpec { bins: 4, lower: -1, upper: 7 };
        // Bins of width 2: [-1,1) [1,3) [3,5) [5,7); -9 is out of range.
        assert_eq!(histogram_even(&x, &spec), Ok(vec![1, 2, 2, 2]));
    }

    #[test]
    fn specs_checked() {
        let bad = |bins, lower, upper| histogram_even(&[0i32], &HistogramSpec { bins, lower, upper }).is_err();
        assert!(bad(0, 0, 1));
        assert!(bad(4097, 0, 1));
        assert!(bad(1, 1, 1));
        assert!(!bad(4096, i32::MIN, i32::MAX));
        let f = |bins, lower: f32, upper: f32| histogram_even(&[0f32], &HistogramSpec { bins, lower, upper }).is_err();
        assert!(f(1, f32::NAN, 1.0));
        assert!(f(1, -3e38, 3e38));
        assert!(f(16, 0.0, f32::from_bits(1)));
        assert!(!f(16, 0.0, 1.0));
    }

    #[test]
    fn full_i32_range_is_exact() {
        let spec = HistogramSpec { bins: 4096, lower: i32::MIN, upper: i32::MAX };
        let counts = histogram_even(&[i32::MIN, -1, 0, i32::MAX - 1, i32::MAX], &spec).unwrap();
        assert_eq!(counts[0], 1);
        assert_eq!(counts[2047], 1);
        assert_eq!(counts[2048], 1);
        assert_eq!(counts[4095], 1);
        assert_eq!(counts.iter().sum::<u64>(), 4);
    }

    #[test]
    fn f32_edges_and_nan() {
        let spec = HistogramSpec { bins: 10, lower: 0.0f32, upper: 1.0 };
        let below_one = f32::from_bits(1.0f32.to_bits() - 1);
        let counts = histogram_even(&[0.0, below_one, 1.0, -0.0, f32::NAN, 0.1], &spec).unwrap();
        assert_eq!(counts[9], 1);
        assert_eq!(counts[0], 2);
        assert_eq!(counts.iter().sum::<u64>(), 4);
    }

    proptest! {
        #[test]
        fn counts_add_up_to_in_range_samples(samples in prop::collection::vec(-100i32..100, 0..300), bins in 1u32..50, lower in -60i32..0, width in 1i32..90) {
            let spec = HistogramSpec { bins, lower, upper: lower + width };
            let counts = histogram_even(&samples, &spec)?;
            let in_range = samples.iter().filter(|&&x| x >= lower && x < lower + width).count() as u64;
            prop_assert_eq!(counts.iter().sum::<u64>(), in_range);
        }

        #[test]
        fn f32_bins_within_one_of_mathematical(samples in prop::collection::vec(-2.0f32..2.0, 0..200), bins in 1u32..4097, lower in -1.5f32..0.0, width in 0.001f32..3.0) {
            let spec = HistogramSpec { bins, lower, upper: lower + width };
            prop_assume!(f32::validate(&spec).is_ok());
            let counts = histogram_even(&samples, &spec)?;
            let in_range = samples.iter().filter(|&&x| x >= spec.lower && x < spec.upper).count() as u64;
            prop_assert_eq!(counts.iter().sum::<u64>(), in_range);
            for &x in &samples {
                if let (Some(model), Some(exact)) = (f32::bin(&spec, x), mathematical_bin_f32(&spec, x)) {
                    prop_assert!(model.abs_diff(exact) <= 1, "x {} model {} exact {}", x, model, exact);
                }
            }
        }
    }
}
