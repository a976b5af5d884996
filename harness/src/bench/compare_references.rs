//! The yardsticks a record of ours is judged against when two bench runs
//! are compared: the records both runs timed of programs we did not change
//! (CUB's and PyTorch's at the same op, size, dtype and timing mode, and the
//! copy and read ceilings at the nearest size). Their NEW / OLD is how far
//! the machine moved between the runs at that work (another day, clock or
//! driver moves small, launch-bound sizes far more than a large copy), so a
//! record of ours is judged by its own NEW / OLD divided by theirs.
//!
//! Rule: a reference that itself moved beyond the limit (NEW / OLD outside
//! [1 / limit, limit]) says the machine changed too much to read a small
//! change of ours off it, and is not used; a record left with no usable
//! reference is not judged (never passed).

use super::entries::ceilings::{COPY_OP, READ_OP};
use super::record::{BenchRecord, BenchSize, IMPL_CEILING, IMPL_CUB, IMPL_TORCH};
use super::stats::Interval;

/// How the interval of a NEW / OLD is taken from the two sides' samples
/// (NEW's first): the calls of one process each, or the medians of several
/// processes each (`super::compare::Spread`).
pub type IntervalOf = fn(&[f64], &[f64]) -> Option<Interval>;

/// The default limit on a reference's own NEW / OLD (and its inverse).
pub const DEFAULT_LIMIT: f64 = 1.5;

/// One reference timed in both runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// What it is, e.g. `cub 2^20` or `copy ceiling 2^20`.
    pub label: String,
    /// Its NEW / OLD median.
    pub ratio: f64,
    /// The bootstrap 95 % interval of that ratio (None: noise unknown).
    pub interval: Option<Interval>,
}

/// The references of one record: those used and those that moved beyond the limit.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Drift {
    /// References within the limit, peers first.
    pub used: Vec<Reference>,
    /// References beyond the limit (not used).
    pub moved: Vec<Reference>,
}

impl Drift {
    /// The machine's drift at this record: the geometric mean of the used
    /// references' ratios (None when none is usable).
    pub fn centre(&self) -> Option<f64> {
        if self.used.is_empty() {
            return None;
        }
        let logs: f64 = self.used.iter().map(|r| r.ratio.ln()).sum();
        Some((logs / self.used.len() as f64).exp())
    }

    /// How far the drift may lie from its [`centre`](Self::centre), as a
    /// half-width on the log scale: the larger of the centre's own noise and
    /// the references' disagreement. Rule: the centre is the mean of the
    /// used references' log ratios, whose noise is independent from one
    /// reference to the next (separate programs, separate calls), so its
    /// 95 % half-width is the root of the sum of their squared half-widths
    /// over their count; a reference that moved apart from the others (a
    /// copy and a read ceiling disagreeing) is not noise but a second
    /// estimate of the move, so the farthest of them from the centre bounds
    /// it too. None when no reference is usable.
    pub fn half_width(&self) -> Option<f64> {
        let centre = self.centre()?.ln();
        let count = self.used.len() as f64;
        let noise = (self.used.iter().map(|r| log_half_width(r.ratio, r.interval).powi(2)).sum::<f64>()).sqrt() / count;
        let disagreement = self.used.iter().map(|r| (r.ratio.ln() - centre).abs()).fold(0.0, f64::max);
        Some(noise.max(disagreement))
    }

    /// The record's NEW / OLD `ratio` (with its 95 % `interval`, None when
    /// its noise is unknown) divided by the drift: centred on `ratio /
    /// centre`, with the two half-widths added in quadrature on the log
    /// scale. Rule: the record's own noise and the references' come from
    /// different programs timed in turn, so they are independent, and the
    /// 95 % half-width of a difference of independent estimates is the root
    /// of the sum of their squares; adding the half-widths themselves (the
    /// lowest bound over the highest) asks both to be at their worst at
    /// once, which hid a 4.5 % slowdown of three-process receipts behind a
    /// 2.8 % lower bound in the speed-gate trial on the H100.
    pub fn normalise(&self, ratio: f64, interval: Option<Interval>) -> Option<Interval> {
        let centre = (ratio / self.centre()?).ln();
        let half = (log_half_width(ratio, interval).powi(2) + self.half_width()?.powi(2)).sqrt();
        Some(Interval { low: (centre - half).exp(), high: (centre + half).exp() })
    }

    /// The used references as `cub 2^20 1.02x, copy ceiling 2^20 0.98x`.
    pub fn describe(&self) -> String {
        let list = |refs: &[Reference]| {
            refs.iter().map(|r| format!("{} {:.2}x", r.label, r.ratio)).collect::<Vec<_>>().join(", ")
        };
        match (self.used.is_empty(), self.moved.is_empty()) {
            (false, _) => list(&self.used),
            (true, false) => format!("every reference moved beyond the limit: {}", list(&self.moved)),
            (true, true) => "no reference timed in both runs".into(),
        }
    }
}

/// The larger side of `interval` around `ratio`, on the log scale (0 when
/// the noise is unknown): an interval need not be symmetric about the ratio
/// it was taken with (a bootstrap's is not), and the wider side is the one
/// a verdict could be wrong on.
fn log_half_width(ratio: f64, interval: Option<Interval>) -> f64 {
    interval.map_or(0.0, |i| (i.high / ratio).ln().max((ratio / i.low).ln()).max(0.0))
}

/// NEW / OLD of one record of `new`, matched in `old` by `same`.
fn reference(
    label: String,
    r: &BenchRecord,
    old: &[BenchRecord],
    same: impl Fn(&BenchRecord) -> bool,
    interval_of: IntervalOf,
) -> Option<Reference> {
    let o = old.iter().find(|o| same(o) && o.timed_median().is_some())?;
    let ratio = r.timed_median()? / o.timed_median()?;
    ratio.is_finite().then(|| Reference { label, ratio, interval: interval_of(&r.samples_us, &o.samples_us) })
}

/// The peers (CUB, PyTorch) of `record` timed in both runs.
fn peers(record: &BenchRecord, old: &[BenchRecord], new: &[BenchRecord], interval_of: IntervalOf) -> Vec<Reference> {
    let peer_of = |r: &BenchRecord| {
        [IMPL_CUB, IMPL_TORCH].contains(&r.implementation.as_str())
            && r.primitive == record.primitive
            && r.op == record.op
            && r.size() == record.size()
            && r.dtype == record.dtype
            && r.timing_mode == record.timing_mode
    };
    new.iter()
        .filter(|r| peer_of(r))
        .filter_map(|r| {
            let same = |o: &BenchRecord| peer_of(o) && o.implementation == r.implementation && o.variant == r.variant;
            reference(format!("{} {}", r.implementation, r.size().label()), r, old, same, interval_of)
        })
        .collect()
}

/// The ceiling `op` at the size nearest `size` (log scale) timed in both runs.
fn ceiling(
    op: &str,
    size: BenchSize,
    old: &[BenchRecord],
    new: &[BenchRecord],
    interval_of: IntervalOf,
) -> Option<Reference> {
    let target = (size.elements().max(1) as f64).log2();
    let of_op = |r: &&BenchRecord| r.implementation == IMPL_CEILING && r.op == op && r.timed_median().is_some();
    let candidates: Vec<&BenchRecord> =
        new.iter().filter(of_op).filter(|r| old.iter().filter(of_op).any(|o| o.size() == r.size())).collect();
    let nearest = candidates.into_iter().min_by(|a, b| {
        let distance = |r: &BenchRecord| ((r.size().elements().max(1) as f64).log2() - target).abs();
        distance(a).total_cmp(&distance(b))
    })?;
    let name = if op == COPY_OP { "copy ceiling" } else { "read ceiling" };
    let same = |o: &BenchRecord| o.implementation == IMPL_CEILING && o.op == op && o.size() == nearest.size();
    reference(format!("{name} {}", nearest.size().label()), nearest, old, same, interval_of)
}

/// The references of `record` (a record of NEW), split by `limit`, each
/// with its interval taken by `interval_of`.
pub fn drift(
    record: &BenchRecord,
    old: &[BenchRecord],
    new: &[BenchRecord],
    limit: f64,
    interval_of: IntervalOf,
) -> Drift {
    let mut all = peers(record, old, new, interval_of);
    all.extend([COPY_OP, READ_OP].into_iter().filter_map(|op| ceiling(op, record.size(), old, new, interval_of)));
    let (used, moved) = all.into_iter().partition(|r| r.ratio <= limit && r.ratio >= 1.0 / limit);
    Drift { used, moved }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(label: &str, ratio: f64, interval: Option<(f64, f64)>) -> Reference {
        Reference { label: label.into(), ratio, interval: interval.map(|(low, high)| Interval { low, high }) }
    }

    /// The speed-gate trial's large record on the H100: ours 4.7 % slower over
    /// three processes, the copy ceiling within 0.2 % and the read ceiling 1 %.
    fn trial_drift() -> Drift {
        Drift {
            used: vec![
                reference("copy ceiling 2^28", 1.0, Some((0.999, 1.002))),
                reference("read ceiling 2^28", 1.001, Some((0.991, 1.011))),
            ],
            moved: Vec::new(),
        }
    }

    #[test]
    fn independent_noise_adds_in_quadrature_not_at_its_worst() {
        let judged = trial_drift().normalise(1.047, Some(Interval { low: 1.039, high: 1.054 })).unwrap();
        // Lowest over highest would be 1.039 / 1.011 = 1.028: under a 3 % threshold.
        assert!(judged.low > 1.03 && judged.low < 1.039, "{judged:?}");
        assert!(judged.high > 1.054 / 1.001 && judged.high < 1.054 / 0.991, "{judged:?}");
        // It is still wider than the record's own interval, on both sides.
        assert!(judged.low < 1.039 / 1.0005 && judged.high > 1.054 / 1.0005, "{judged:?}");
    }

    #[test]
    fn references_that_disagree_widen_the_drift_by_their_distance_from_its_centre() {
        let apart = Drift {
            used: vec![reference("cub 2^20", 1.0, Some((0.999, 1.001))), reference("copy ceiling 2^20", 1.1, None)],
            moved: Vec::new(),
        };
        let half = apart.half_width().unwrap();
        assert!((half - 1.1f64.ln() / 2.0).abs() < 1e-12, "{half}");
        // A record 5 % slower with a tight interval is no longer told from the drift's spread.
        let judged = apart.normalise(1.05 * apart.centre().unwrap(), Some(Interval { low: 1.049, high: 1.051 }));
        let judged = judged.unwrap();
        assert!(judged.low < 1.03 && judged.high > 1.07, "{judged:?}");
    }

    #[test]
    fn unknown_noise_on_both_sides_leaves_the_plain_quotient() {
        let drift = Drift { used: vec![reference("copy ceiling 2^10", 1.02, None)], moved: Vec::new() };
        let judged = drift.normalise(1.02, None).unwrap();
        assert!((judged.low - 1.0).abs() < 1e-12 && (judged.high - 1.0).abs() < 1e-12, "{judged:?}");
        assert_eq!(Drift::default().normalise(1.0, None), None, "no reference: nothing to normalise by");
    }
}
