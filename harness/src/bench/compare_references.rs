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

impl Reference {
    fn bounds(&self) -> (f64, f64) {
        self.interval.map_or((self.ratio, self.ratio), |i| (i.low, i.high))
    }
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

    /// Where the drift lies: from the lowest to the highest bound of the used
    /// references (their noise and their disagreement both widen it).
    pub fn interval(&self) -> Option<Interval> {
        let bounds = self.used.iter().map(Reference::bounds);
        let low = bounds.clone().map(|b| b.0).fold(f64::INFINITY, f64::min);
        let high = bounds.map(|b| b.1).fold(f64::NEG_INFINITY, f64::max);
        (low.is_finite() && high.is_finite() && low > 0.0).then_some(Interval { low, high })
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

    /// `interval` (NEW / OLD of the record) divided by the drift: the
    /// conservative quotient, lowest over highest and highest over lowest.
    pub fn normalise(&self, interval: Interval) -> Option<Interval> {
        let d = self.interval()?;
        Some(Interval { low: interval.low / d.high, high: interval.high / d.low })
    }
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
