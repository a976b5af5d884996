//! When a record stops taking timed calls: the adaptive sampling of
//! `--min-samples`, `--max-noise` and `--max-time`, as a pure function of the
//! samples so far and the time spent ([`next_step`]), which the GPU loop
//! (`timing::measure`) asks after every call.
//!
//! The rule, in order: never fewer than the minimum; never more than the
//! count for the size (the protocol's, [`ADAPTIVE_CEILING_FACTOR`] times it
//! when adaptive; the budget cap included); past the minimum, stop at the
//! time limit; past the minimum, stop once the median's 95 % interval is
//! narrow enough (its half width relative to the median, the "±" of the
//! report, at most the noise target). The interval is a
//! bootstrap of 2,000 resamples, so it is asked for only at the minimum and
//! every [`NOISE_CHECK_EVERY`] samples after it. A full run is adaptive by
//! default ([`DEFAULT_MAX_NOISE`], [`DEFAULT_MAX_TIME_S`]); with
//! `--fixed-count`, or `--quick` without `--max-noise` and `--max-time`, the
//! count is fixed, as before, and the record says so.

use serde::{Deserialize, Serialize};

/// Samples between two looks at the noise (each look is a bootstrap).
pub const NOISE_CHECK_EVERY: usize = 10;
/// Fewest timed calls of an adaptive record when `--min-samples` is not given.
pub const DEFAULT_MIN_SAMPLES: usize = 20;
/// An adaptive record may take up to this many times the protocol's count
/// (within the per-entry budget): a record still noisier than the target
/// at the fixed count goes on, so its interval ends narrower than a fixed
/// run's, while quiet records stop early and pay for it.
pub const ADAPTIVE_CEILING_FACTOR: usize = 2;
/// The noise target of a full run when no sampling option is given
/// (`--fixed-count` turns adaptive sampling off): a full run's median
/// record, fixed at 200 / 30 calls, had a half width of 1.0 % (H200,
/// 2026-12-02), and a quarter of them 0.5 % or less.
pub const DEFAULT_MAX_NOISE: f64 = 0.005;
/// The time limit of a record of a full run when no sampling option is given.
pub const DEFAULT_MAX_TIME_S: f64 = 2.0;

/// Why a record stopped taking samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The protocol's fixed count (no noise target, no time limit).
    FixedCount,
    /// The noise target was reached.
    NoiseTarget,
    /// The protocol's count was reached before the noise target.
    MaxSamples,
    /// The time limit was reached (after the minimum) before the noise target.
    TimeLimit,
}

impl StopReason {
    /// The name the receipt, the CSV and the report use.
    pub fn name(self) -> &'static str {
        match self {
            StopReason::FixedCount => "fixed_count",
            StopReason::NoiseTarget => "noise_target",
            StopReason::MaxSamples => "max_samples",
            StopReason::TimeLimit => "time_limit",
        }
    }
}

/// The stopping rule of one record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StopRule {
    /// Never stop below this many samples (at most `max_samples`).
    pub min_samples: usize,
    /// Never take more than this many.
    pub max_samples: usize,
    /// Stop once the median's 95 % interval half width / median is at most this.
    pub max_noise: Option<f64>,
    /// Stop once this many seconds of timing have passed (after the minimum).
    pub max_time_s: Option<f64>,
}

impl StopRule {
    /// The rule for a record whose protocol count (after the budget cap) is
    /// `max_samples`, given the adaptive options (`None`: not given).
    pub fn new(
        max_samples: usize,
        min_samples: Option<usize>,
        max_noise: Option<f64>,
        max_time_s: Option<f64>,
    ) -> Self {
        let adaptive = max_noise.is_some() || max_time_s.is_some();
        let min = match (min_samples, adaptive) {
            (Some(m), _) => m,
            (None, true) => DEFAULT_MIN_SAMPLES,
            (None, false) => max_samples,
        };
        StopRule { min_samples: min.clamp(1, max_samples.max(1)), max_samples, max_noise, max_time_s }
    }

    /// Whether the count is fixed (no noise target and no time limit).
    pub fn fixed(&self) -> bool {
        self.max_noise.is_none() && self.max_time_s.is_none()
    }
}

/// The median's 95 % interval half width relative to the median (`None`:
/// too few samples to tell).
pub fn relative_noise(samples: &[f64]) -> Option<f64> {
    let interval = super::stats::median_interval(samples)?;
    let median = super::stats::median_in_place(&mut samples.to_vec());
    (median > 0.0).then(|| 0.5 * (interval.high - interval.low) / median)
}

/// Whether the noise is looked at with `taken` samples under `rule`.
fn noise_due(rule: &StopRule, taken: usize) -> bool {
    taken >= rule.min_samples && (taken - rule.min_samples) % NOISE_CHECK_EVERY == 0
}

/// `Some(reason)` when the record stops after `samples` (taken in
/// `elapsed_s` seconds), `None` when it takes another.
pub fn next_step(rule: &StopRule, samples: &[f64], elapsed_s: f64) -> Option<StopReason> {
    let taken = samples.len();
    if taken >= rule.max_samples {
        return Some(if rule.fixed() { StopReason::FixedCount } else { StopReason::MaxSamples });
    }
    if taken < rule.min_samples {
        return None;
    }
    if rule.max_time_s.is_some_and(|limit| elapsed_s >= limit) {
        return Some(StopReason::TimeLimit);
    }
    let target = rule.max_noise?;
    if noise_due(rule, taken) && relative_noise(samples).is_some_and(|noise| noise <= target) {
        return Some(StopReason::NoiseTarget);
    }
    None
}

/// Runs the rule over `samples` as if they arrived one a `seconds_each`:
/// how many are taken and why it stopped (the GPU loop's decisions, for tests).
#[cfg(test)]
pub fn replay(rule: &StopRule, samples: &[f64], seconds_each: f64) -> (usize, Option<StopReason>) {
    for taken in 1..=samples.len() {
        if let Some(reason) = next_step(rule, &samples[..taken], taken as f64 * seconds_each) {
            return (taken, Some(reason));
        }
    }
    (samples.len(), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 10.0 exactly, every call: no noise at all.
    fn steady(count: usize) -> Vec<f64> {
        vec![10.0; count]
    }

    /// Alternately 5 and 15: the median's interval spans most of [5, 15] at any count.
    fn jumpy(count: usize) -> Vec<f64> {
        (0..count).map(|i| if i % 2 == 0 { 5.0 } else { 15.0 }).collect()
    }

    #[test]
    fn without_a_noise_target_or_time_limit_the_count_is_fixed() {
        let rule = StopRule::new(200, None, None, None);
        assert_eq!((rule.min_samples, rule.max_samples), (200, 200));
        assert_eq!(replay(&rule, &steady(300), 1.0), (200, Some(StopReason::FixedCount)));
    }

    #[test]
    fn quiet_samples_stop_at_the_minimum_once_the_target_is_met() {
        let rule = StopRule::new(200, Some(30), Some(0.01), None);
        assert_eq!(replay(&rule, &steady(300), 0.0), (30, Some(StopReason::NoiseTarget)));
    }

    #[test]
    fn noisy_samples_run_to_the_protocol_count() {
        let rule = StopRule::new(200, Some(30), Some(0.01), None);
        assert_eq!(replay(&rule, &jumpy(300), 0.0), (200, Some(StopReason::MaxSamples)));
    }

    #[test]
    fn the_noise_is_looked_at_only_at_the_minimum_and_every_ten_after() {
        // Noisy for 40 samples, then quiet: the noise falls below 1 % somewhere past 40 samples,
        // and the record can stop only at 30, 40, 50, ... samples.
        let mut samples = jumpy(40);
        samples.extend(steady(400));
        let rule = StopRule::new(400, Some(30), Some(0.01), None);
        let (taken, reason) = replay(&rule, &samples, 0.0);
        assert_eq!(reason, Some(StopReason::NoiseTarget));
        assert!(taken > 40 && (taken - 30) % NOISE_CHECK_EVERY == 0, "stopped at {taken}");
        assert!(relative_noise(&samples[..taken]).unwrap() <= 0.01);
        assert!(relative_noise(&samples[..taken - NOISE_CHECK_EVERY]).unwrap() > 0.01);
    }

    #[test]
    fn the_time_limit_stops_a_noisy_record_but_never_below_the_minimum() {
        // One second a call and a 5 s limit: the minimum of 12 still runs, then it stops.
        let rule = StopRule::new(200, Some(12), Some(0.01), Some(5.0));
        assert_eq!(replay(&rule, &jumpy(300), 1.0), (12, Some(StopReason::TimeLimit)));
        // A limit alone (no noise target) makes the rule adaptive: default minimum, then the limit.
        let rule = StopRule::new(200, None, None, Some(0.5));
        assert_eq!(rule.min_samples, DEFAULT_MIN_SAMPLES);
        assert_eq!(replay(&rule, &steady(300), 0.1), (DEFAULT_MIN_SAMPLES, Some(StopReason::TimeLimit)));
    }

    #[test]
    fn the_minimum_never_exceeds_the_protocol_count() {
        let rule = StopRule::new(10, Some(50), Some(0.01), None);
        assert_eq!(rule.min_samples, 10);
        assert_eq!(replay(&rule, &jumpy(100), 0.0), (10, Some(StopReason::MaxSamples)));
        assert_eq!(StopRule::new(10, Some(0), None, None).min_samples, 1);
    }

    #[test]
    fn relative_noise_of_identical_and_too_few_samples() {
        assert_eq!(relative_noise(&steady(5)), Some(0.0));
        assert_eq!(relative_noise(&[1.0, 2.0]), None);
        // Alternating 5 and 15 (median 10): the interval spans at least half the distance to each side.
        assert!(relative_noise(&jumpy(40)).unwrap() > 0.2);
    }
}
