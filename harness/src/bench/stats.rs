//! Noise of a timing: a bootstrap 95 % confidence interval of the median,
//! the relative standard deviation, and intervals of ratios of medians.
//!
//! The bootstrap resamples with a fixed seed ([`SEED`]), so the same samples
//! always give the same interval and a report rebuilt from a receipt says
//! exactly what the first one said. Percentile intervals: the 2.5th and
//! 97.5th percentiles of [`RESAMPLES`] resampled medians (or ratios).

use serde::{Deserialize, Serialize};

/// Bootstrap resamples per interval.
pub const RESAMPLES: usize = 2000;
/// The resampling seed (fixed: reports are reproducible).
pub const SEED: u64 = 0x5eed_b007_57a9_0f00;
/// Coverage of every interval.
pub const CONFIDENCE: f64 = 0.95;
/// Fewest samples a bootstrap interval is computed from (below it the noise is unknown).
pub const MIN_SAMPLES: usize = 3;

/// A closed interval `[low, high]`, `low <= high`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

impl Interval {
    /// Whether `x` lies inside (bounds included).
    #[cfg(test)]
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }

    /// The interval scaled by a positive `factor`.
    pub fn scaled(&self, factor: f64) -> Interval {
        Interval { low: self.low * factor, high: self.high * factor }
    }

    /// Half the width relative to `centre`, in percent (the "±" of a report cell).
    pub fn half_width_percent(&self, centre: f64) -> f64 {
        if centre > 0.0 {
            50.0 * (self.high - self.low) / centre
        } else {
            f64::NAN
        }
    }
}

/// Where a value lies against a threshold, given its interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The whole interval is at or above the threshold.
    Above,
    /// The whole interval is below it.
    Below,
    /// The interval straddles it.
    WithinNoise,
}

/// Which side of `threshold` an interval lies; `None` (noise unknown) decides by
/// the point estimate alone.
pub fn side(point: f64, interval: Option<Interval>, threshold: f64) -> (Side, bool) {
    match interval {
        Some(i) if i.low >= threshold => (Side::Above, true),
        Some(i) if i.high < threshold => (Side::Below, true),
        Some(_) => (Side::WithinNoise, true),
        None if point >= threshold => (Side::Above, false),
        None => (Side::Below, false),
    }
}

/// SplitMix64: a small, well-mixed generator, enough to pick resample indices.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// An index below `len` (`len > 0`); the modulo bias is below 2^-50 for any sample count here.
    fn below(&mut self, len: usize) -> usize {
        (self.next() % len as u64) as usize
    }
}

/// Median of `values` (mean of the middle two for an even count), reordering them; NaN when empty.
pub fn median_in_place(values: &mut [f64]) -> f64 {
    let m = values.len();
    if m == 0 {
        return f64::NAN;
    }
    let (_, upper, _) = values.select_nth_unstable_by(m / 2, f64::total_cmp);
    let upper = *upper;
    if m % 2 == 1 {
        return upper;
    }
    // The lower middle value is the largest of the lower half.
    let lower = values[..m / 2].iter().copied().fold(f64::NEG_INFINITY, f64::max);
    0.5 * (lower + upper)
}

/// Median of `samples` without reordering them.
pub fn median(samples: &[f64]) -> f64 {
    median_in_place(&mut samples.to_vec())
}

/// The `q`-quantile (0..=1) of sorted `values`, linearly interpolated.
fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let position = q * (sorted.len() - 1) as f64;
    let below = position.floor() as usize;
    let above = position.ceil() as usize;
    let weight = position - below as f64;
    sorted[below] * (1.0 - weight) + sorted[above] * weight
}

/// The percentile interval of `statistics` at [`CONFIDENCE`].
fn percentile_interval(mut statistics: Vec<f64>) -> Interval {
    statistics.sort_by(f64::total_cmp);
    let tail = (1.0 - CONFIDENCE) / 2.0;
    Interval { low: quantile_sorted(&statistics, tail), high: quantile_sorted(&statistics, 1.0 - tail) }
}

/// One resample of `samples` (with replacement) into `buffer`, returning its median.
fn resampled_median(samples: &[f64], buffer: &mut Vec<f64>, rng: &mut SplitMix64) -> f64 {
    buffer.clear();
    buffer.extend((0..samples.len()).map(|_| samples[rng.below(samples.len())]));
    median_in_place(buffer)
}

/// Whether `samples` can carry an interval: enough of them, all finite.
fn usable(samples: &[f64]) -> bool {
    samples.len() >= MIN_SAMPLES && samples.iter().all(|s| s.is_finite())
}

/// The bootstrap 95 % interval of the median of `samples`; `None` with fewer
/// than [`MIN_SAMPLES`] samples or a non-finite one.
pub fn median_interval(samples: &[f64]) -> Option<Interval> {
    if !usable(samples) {
        return None;
    }
    let mut rng = SplitMix64(SEED);
    let mut buffer = Vec::with_capacity(samples.len());
    let medians = (0..RESAMPLES).map(|_| resampled_median(samples, &mut buffer, &mut rng)).collect();
    Some(percentile_interval(medians))
}

/// The bootstrap 95 % interval of `median(numerator) / median(denominator)`,
/// each side resampled independently (the two were timed apart); `None`
/// when either side cannot carry an interval or a resampled median is not positive.
pub fn ratio_interval(numerator: &[f64], denominator: &[f64]) -> Option<Interval> {
    if !usable(numerator) || !usable(denominator) {
        return None;
    }
    let mut rng = SplitMix64(SEED);
    let (mut a, mut b) = (Vec::with_capacity(numerator.len()), Vec::with_capacity(denominator.len()));
    let mut ratios = Vec::with_capacity(RESAMPLES);
    for _ in 0..RESAMPLES {
        let top = resampled_median(numerator, &mut a, &mut rng);
        let bottom = resampled_median(denominator, &mut b, &mut rng);
        if bottom <= 0.0 {
            return None;
        }
        ratios.push(top / bottom);
    }
    Some(percentile_interval(ratios))
}

/// Student's t quantile at 0.975 for 1..=30 degrees of freedom (beyond
/// 30 the normal's 1.96 is within 2 %).
const T_975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
    2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
];

/// The geometric mean of paired ratios (NEW / OLD of one record, one ratio
/// per round of an interleaved run) and its 95 % interval: Student's t on
/// the logs, since the rounds are the independent units (each pair shares
/// the machine's state of its moment, which cancels in the ratio). None
/// below two ratios or for a non-positive or non-finite one.
pub fn paired_interval(ratios: &[f64]) -> Option<(f64, Interval)> {
    if ratios.len() < 2 || ratios.iter().any(|r| !(r.is_finite() && *r > 0.0)) {
        return None;
    }
    let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
    let k = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / k;
    let variance = logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (k - 1.0);
    let t = T_975.get(logs.len() - 2).copied().unwrap_or(1.96);
    let half = t * (variance / k).sqrt();
    Some((mean.exp(), Interval { low: (mean - half).exp(), high: (mean + half).exp() }))
}

/// Mean and sample variance of the logs of `values` (None below two values or
/// for a non-positive or non-finite one).
fn log_moments(values: &[f64]) -> Option<(f64, f64)> {
    if values.len() < 2 || values.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
    let k = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / k;
    Some((mean, logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (k - 1.0)))
}

/// NEW / OLD from the medians of whole processes (one per process of each
/// receipt: `new` and `old`), and its 95 % interval: the ratio of the
/// geometric means, with Student's t on the difference of the mean logs
/// (Welch's standard error). The processes are the independent units: a
/// record's time can sit in a mode that holds for a whole process, so only
/// the spread between processes, never the calls within one, shows how far
/// it moves unchanged. The two receipts are not paired (unlike `bench ab`'s
/// rounds), and their spreads may differ, so the degrees of freedom are
/// Welch-Satterthwaite's ([`welch_degrees_of_freedom`]), rounded down. None
/// below two processes a side or for a non-positive or non-finite median.
pub fn process_interval(new: &[f64], old: &[f64]) -> Option<(f64, Interval)> {
    let (new_mean, new_var) = log_moments(new)?;
    let (old_mean, old_var) = log_moments(old)?;
    let centre = new_mean - old_mean;
    let (new_share, old_share) = (new_var / new.len() as f64, old_var / old.len() as f64);
    let standard_error = (new_share + old_share).sqrt();
    let freedom = welch_degrees_of_freedom((new_share, new.len()), (old_share, old.len()));
    let t = T_975.get(freedom - 1).copied().unwrap_or(1.96);
    let half = t * standard_error;
    Some((centre.exp(), Interval { low: (centre - half).exp(), high: (centre + half).exp() }))
}

/// Welch-Satterthwaite's degrees of freedom for a difference of two means,
/// each side given as (its variance over its count, its count), rounded
/// down: the Student's t whose spread matches that of the difference when
/// the sides' variances differ. It lies between the smaller side's count
/// less one (one side's spread dominates) and both counts less two (equal
/// spreads, equal counts); where neither side varies the standard error is
/// zero and the larger bound is taken.
fn welch_degrees_of_freedom((a, a_count): (f64, usize), (b, b_count): (f64, usize)) -> usize {
    let (smallest, largest) = (a_count.min(b_count) - 1, a_count + b_count - 2);
    let denominator = a * a / (a_count - 1) as f64 + b * b / (b_count - 1) as f64;
    if denominator <= 0.0 || !denominator.is_finite() {
        return largest;
    }
    let freedom = ((a + b) * (a + b) / denominator).floor();
    (freedom as usize).clamp(smallest, largest)
}

/// Relative standard deviation (sample standard deviation / mean), in percent;
/// `None` below two samples or for a non-positive mean.
pub fn relative_std_percent(samples: &[f64]) -> Option<f64> {
    if samples.len() < 2 {
        return None;
    }
    let m = samples.len() as f64;
    let mean = samples.iter().sum::<f64>() / m;
    if mean.is_nan() || mean <= 0.0 {
        return None;
    }
    let variance = samples.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (m - 1.0);
    Some(100.0 * variance.sqrt() / mean)
}

/// The noise of one record's samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Noise {
    /// The 95 % interval of the median.
    pub median_interval: Interval,
    /// Relative standard deviation, percent.
    pub rsd_percent: f64,
}

/// The noise of `samples`, or `None` (unknown) when they cannot carry an interval.
pub fn noise(samples: &[f64]) -> Option<Noise> {
    Some(Noise { median_interval: median_interval(samples)?, rsd_percent: relative_std_percent(samples)? })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_in_place_match_the_sorted_definition() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn the_interval_holds_the_median_and_is_reproducible() {
        let samples: Vec<f64> = (0..200).map(|i| 10.0 + ((i * 37) % 17) as f64 * 0.1).collect();
        let m = median(&samples);
        let first = median_interval(&samples).unwrap();
        assert!(first.contains(m), "{first:?} should hold {m}");
        assert!(first.low >= 10.0 && first.high <= 11.6);
        assert_eq!(median_interval(&samples), Some(first), "a fixed seed gives the same interval");
    }

    #[test]
    fn identical_samples_give_a_zero_width_interval_and_no_spread() {
        let interval = median_interval(&[5.0; 20]).unwrap();
        assert_eq!((interval.low, interval.high), (5.0, 5.0));
        assert_eq!(relative_std_percent(&[5.0; 20]), Some(0.0));
    }

    #[test]
    fn too_few_or_broken_samples_have_unknown_noise() {
        assert_eq!(median_interval(&[1.0, 2.0]), None);
        assert_eq!(median_interval(&[1.0, f64::NAN, 2.0, 3.0]), None);
        assert!(noise(&[]).is_none());
        assert_eq!(relative_std_percent(&[1.0]), None);
    }

    #[test]
    fn relative_std_of_a_known_set() {
        // mean 5, sample variance 32/7 (the classic 2,4,4,4,5,5,7,9).
        let rsd = relative_std_percent(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert!((rsd - 100.0 * (32.0f64 / 7.0).sqrt() / 5.0).abs() < 1e-9);
    }

    #[test]
    fn ratio_intervals_bracket_the_ratio_of_medians() {
        let slow: Vec<f64> = (0..50).map(|i| 20.0 + (i % 5) as f64 * 0.2).collect();
        let fast: Vec<f64> = (0..50).map(|i| 10.0 + (i % 7) as f64 * 0.1).collect();
        let interval = ratio_interval(&slow, &fast).unwrap();
        let point = median(&slow) / median(&fast);
        assert!(interval.contains(point), "{interval:?} should hold {point}");
        assert!(interval.low > 1.8 && interval.high < 2.2, "{interval:?}");
        assert_eq!(ratio_interval(&slow, &[1.0]), None);
    }

    #[test]
    fn sides_of_a_threshold() {
        let i = |low, high| Some(Interval { low, high });
        assert_eq!(side(1.3, i(1.25, 1.35), 1.2), (Side::Above, true));
        assert_eq!(side(1.1, i(1.05, 1.15), 1.2), (Side::Below, true));
        assert_eq!(side(1.2, i(1.15, 1.25), 1.2), (Side::WithinNoise, true));
        assert_eq!(side(1.2, None, 1.2), (Side::Above, false));
        assert_eq!(side(1.1, None, 1.2), (Side::Below, false));
    }

    #[test]
    fn paired_ratios_give_their_geometric_mean_and_a_t_interval() {
        let (centre, i) = paired_interval(&[1.05, 1.05, 1.05]).unwrap();
        assert!((centre - 1.05).abs() < 1e-12 && (i.low - 1.05).abs() < 1e-12 && (i.high - 1.05).abs() < 1e-12);
        // Logs +-0.01 around ln 1.05 over 4 rounds: t(3) = 3.182, sd 0.01155, half 3.182 * 0.01155 / 2.
        let r: Vec<f64> = [0.01, -0.01, 0.01, -0.01].iter().map(|d: &f64| (1.05f64.ln() + d).exp()).collect();
        let (centre, i) = paired_interval(&r).unwrap();
        let half = 3.182 * (0.0004f64 / 3.0).sqrt() / 2.0;
        assert!((centre - 1.05).abs() < 1e-9);
        assert!(
            (i.low.ln() - (1.05f64.ln() - half)).abs() < 1e-9 && (i.high.ln() - (1.05f64.ln() + half)).abs() < 1e-9
        );
        assert!(paired_interval(&[1.0]).is_none() && paired_interval(&[1.0, f64::NAN]).is_none());
        assert!(paired_interval(&[1.0, 0.0]).is_none());
    }

    #[test]
    fn welch_degrees_of_freedom_lie_between_the_smaller_side_and_both_sides() {
        // Equal shares and counts: n + n - 2.
        assert_eq!(welch_degrees_of_freedom((1e-4, 3), (1e-4, 3)), 4);
        assert_eq!(welch_degrees_of_freedom((1e-4, 5), (1e-4, 5)), 8);
        // One side does not vary: the other side's count less one.
        assert_eq!(welch_degrees_of_freedom((1e-4, 3), (0.0, 6)), 2);
        assert_eq!(welch_degrees_of_freedom((0.0, 3), (1e-4, 6)), 5);
        // Neither varies: both sides' counts less two.
        assert_eq!(welch_degrees_of_freedom((0.0, 3), (0.0, 4)), 5);
        // (3e-4 + 1e-4)^2 / (9e-8 / 2 + 1e-8 / 2) = 16e-8 / 5e-8 = 3.2, rounded down.
        assert_eq!(welch_degrees_of_freedom((3e-4, 3), (1e-4, 3)), 3);
    }

    #[test]
    fn process_medians_give_the_ratio_of_geometric_means_and_a_welch_interval() {
        // Three processes a side, each side's logs +-0.01 around its centre.
        let around = |c: f64| [-0.01, 0.0, 0.01].map(|d: f64| (c.ln() + d).exp());
        let (centre, i) = process_interval(&around(10.5), &around(10.0)).unwrap();
        assert!((centre - 1.05).abs() < 1e-9);
        // Each side: variance 0.0001, so the standard error is sqrt(2 * 0.0001 / 3); equal spreads
        // and counts give Welch-Satterthwaite 3 + 3 - 2 = 4 degrees of freedom: t(4) = 2.776.
        let half = 2.776 * (2.0 * 0.0001f64 / 3.0).sqrt();
        assert!((i.low.ln() - (1.05f64.ln() - half)).abs() < 1e-9, "{i:?}");
        assert!((i.high.ln() - (1.05f64.ln() + half)).abs() < 1e-9, "{i:?}");
        // A side of 2 processes whose spread dominates takes the degrees of freedom down to its
        // own count less one, t(1), against t(7) for 5 and 5 processes of like spreads.
        let (_, wide) = process_interval(&[10.0, 10.2], &[10.0, 10.1, 10.2, 10.0, 10.1]).unwrap();
        let (_, narrow) = process_interval(&[10.0, 10.1, 10.2, 10.0, 10.2], &[10.0, 10.1, 10.2, 10.0, 10.1]).unwrap();
        assert!(wide.high - wide.low > 3.0 * (narrow.high - narrow.low), "{wide:?} {narrow:?}");
        // Neither side varies: a zero-width interval at the ratio, not a division by zero.
        let (centre, flat) = process_interval(&[10.5, 10.5, 10.5], &[10.0, 10.0]).unwrap();
        assert!((centre - 1.05).abs() < 1e-9 && flat.low == flat.high, "{flat:?}");
        // One process on a side: no interval, whatever its calls said.
        assert!(process_interval(&[10.0], &around(10.0)).is_none());
        assert!(process_interval(&around(10.0), &[10.0, 0.0]).is_none());
    }
}
