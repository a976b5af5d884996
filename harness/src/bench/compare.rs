//! `harness bench compare OLD NEW`: every record timed in both receipts,
//! matched by implementation, primitive, op, variant, size or shape, dtype
//! and timing mode, as the ratio NEW median / OLD median with a bootstrap
//! 95 % interval, and "faster", "slower", "REGRESSION", "within noise" or
//! "UNJUDGED".
//!
//! The two receipts come from two processes, often on two days, and between
//! them the machine moves identical work too (on the H200, 15-60 % at small,
//! launch-bound sizes), which the bootstrap of calls within each process
//! does not see. So by default a record of ours is judged against the
//! references timed in the same two runs ([`super::compare_references`]):
//! CUB's and PyTorch's record of the same op and size and the copy and read
//! ceilings at the nearest size. Its NEW / OLD is divided by their mean
//! move, the two noises added in quadrature (independent programs timed in
//! turn; the references' disagreement bounds theirs), so a machine that is 20 %
//! slower moves both sides and cancels; a reference that moved beyond the
//! limit is not used, and a record with no usable reference is UNJUDGED,
//! which the gate reports as "could not judge" (exit 2), never as a pass.
//! The references themselves are listed, never gated: they are the
//! yardstick, not the code under test.
//!
//! `--raw` judges the plain NEW / OLD instead, on the interval widened by
//! the run drift of the copy ceiling at the nearest size (for two runs of
//! one machine minutes apart, or receipts without references).
//!
//! A change is faster or slower only when the judged interval lies wholly on
//! one side of 1, and a regression (exit status 1, the gate) only when it
//! lies wholly above 1 + the threshold. Records without samples are judged
//! by the ratio alone and say that their noise is unknown.
//!
//! Only receipts of several processes are judged ([`Spread`]). A record's
//! time can sit in a mode that holds for its whole process, which no
//! interval over one process's calls shows: three quick runs of unchanged
//! sources compared pairwise gave 5, 2 and 5 false regressions on the H200
//! while a planted 5 % slowdown passed. So a receipt written by `bench
//! --processes K` (K whole processes, each record tagged with its process)
//! is judged on the spread between its processes
//! ([`super::stats::process_interval`]); given a receipt of one process (every
//! receipt older than `--processes` included) the comparison is printed for
//! information only, never calls a record a regression, and the command
//! says why and exits 2 ([`cannot_judge`]).

use super::compare_references::IntervalOf;
use super::compare_references::{drift, Drift};
use super::details::BenchDetails;
use super::export::{csv_document, number, OutputFormat};
use super::record::{BenchRecord, BenchSize, TimingMode};
use super::record::{IMPL_CEILING, IMPL_PRIMLAB};
use super::stats::{process_interval, ratio_interval, Interval};
use super::targets::{copy_margin, ProgramMargin};
use crate::exit::CannotRun;
use crate::receipts::Receipt;
use crate::table::Table;
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// The options of `harness bench compare`.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// A record regresses when its judged interval lies wholly above `1 + threshold`.
    pub threshold: f64,
    /// What our records' NEW / OLD is judged against.
    pub basis: Basis,
    /// List every matched record, not only the changed ones.
    pub all: bool,
    /// Also write every matched record as CSV here.
    pub csv: Option<PathBuf>,
    /// What stdout carries.
    pub format: OutputFormat,
}

/// What a record of ours is judged against.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Basis {
    /// The references of the same runs, each used only while its own NEW / OLD
    /// lies within [1 / limit, limit].
    References {
        /// The limit (1.5: a reference 50 % slower or faster is not used).
        limit: f64,
    },
    /// The plain NEW / OLD, widened by the copy ceiling's drift.
    Raw,
}

/// What a record's NEW / OLD interval is taken from: how many whole
/// processes each receipt holds decides whether a verdict can be given.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spread {
    /// A receipt of one process on a side: the bootstrap of that process's
    /// calls, which cannot show a mode of the whole process. Informational:
    /// no record is called a regression.
    OneProcess {
        /// Processes in OLD.
        old: usize,
        /// Processes in NEW.
        new: usize,
    },
    /// Several processes on each side: the medians of the processes
    /// ([`process_interval`]).
    Processes {
        /// Processes in OLD.
        old: usize,
        /// Processes in NEW.
        new: usize,
    },
}

impl Spread {
    /// The spread two receipts' records allow: [`Spread::Processes`] only
    /// when each holds at least two processes.
    pub fn of(old: &[BenchRecord], new: &[BenchRecord]) -> Spread {
        let (old, new) = (process_count(old), process_count(new));
        if old >= 2 && new >= 2 {
            Spread::Processes { old, new }
        } else {
            Spread::OneProcess { old, new }
        }
    }

    /// Whether a verdict may be given.
    pub fn judges(self) -> bool {
        matches!(self, Spread::Processes { .. })
    }

    /// How a NEW / OLD interval is taken from the two sides' samples.
    fn interval_of(self) -> IntervalOf {
        match self {
            Spread::Processes { .. } => |new, old| process_interval(new, old).map(|(_, i)| i),
            Spread::OneProcess { .. } => ratio_interval,
        }
    }
}

/// How many processes timed the records of a receipt: the distinct
/// `process` indices of its timed records (1 for every receipt older than
/// `bench --processes`, whose records all read as process 0).
pub fn process_count(records: &[BenchRecord]) -> usize {
    let mut seen: Vec<usize> = records.iter().filter(|r| r.timed_median().is_some()).map(|r| r.process).collect();
    seen.sort_unstable();
    seen.dedup();
    seen.len()
}

/// One record per key for a receipt of several processes: its samples are
/// the medians of the processes that timed it (one each, in process order;
/// a second record of one key in one process is ignored), its median their
/// geometric mean (the centre [`process_interval`] takes), so the matched
/// NEW / OLD is the ratio of the geometric means.
pub fn collapse(records: &[BenchRecord]) -> Vec<BenchRecord> {
    let mut out: Vec<(Key, Vec<usize>, BenchRecord)> = Vec::new();
    let mut timed: Vec<&BenchRecord> = records.iter().filter(|r| r.timed_median().is_some()).collect();
    timed.sort_by_key(|r| r.process);
    for r in timed {
        let (k, median) = (key(r), r.timed_median().unwrap_or(f64::NAN));
        match out.iter_mut().find(|(ok, _, _)| *ok == k) {
            Some((_, processes, _)) if processes.contains(&r.process) => {}
            Some((_, processes, c)) => {
                processes.push(r.process);
                c.samples_us.push(median);
            }
            None => out.push((k, vec![r.process], BenchRecord { samples_us: vec![median], ..r.clone() })),
        }
    }
    out.into_iter()
        .map(|(_, _, mut r)| {
            let logs: f64 = r.samples_us.iter().map(|m| m.ln()).sum();
            r.median_us = Some((logs / r.samples_us.len() as f64).exp());
            r.iters = r.samples_us.len();
            r
        })
        .collect()
}

/// What matches a record across receipts.
pub type Key = (String, String, String, String, BenchSize, String, TimingMode);

pub fn key(r: &BenchRecord) -> Key {
    (
        r.implementation.clone(),
        r.primitive.clone(),
        r.op.clone(),
        r.variant.clone(),
        r.size(),
        r.dtype.clone(),
        r.timing_mode,
    )
}

/// How NEW compares with OLD for one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// NEW is faster (the whole interval below 1).
    Faster,
    /// NEW is slower (the whole interval above 1), by no more than the threshold.
    Slower,
    /// NEW is slower beyond the threshold (the whole interval above 1 + threshold): the gate fails.
    Regression,
    /// The interval holds 1.
    WithinNoise,
    /// A record of ours with no usable reference: not judged, and the gate cannot pass.
    Unjudged,
}

impl Change {
    /// Whether the record moved (anything but within noise).
    pub fn changed(self) -> bool {
        self != Change::WithinNoise
    }

    /// The order of the listing: regressions first, within noise last.
    fn rank(self) -> u8 {
        match self {
            Change::Regression => 0,
            Change::Unjudged => 1,
            Change::Slower => 2,
            Change::Faster => 3,
            Change::WithinNoise => 4,
        }
    }

    /// The word the table prints.
    pub fn word(self) -> &'static str {
        match self {
            Change::Faster => "faster",
            Change::Slower => "slower",
            Change::Regression => "REGRESSION",
            Change::WithinNoise => "within noise",
            Change::Unjudged => "UNJUDGED",
        }
    }
}

/// One matched record.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The record's label and size, e.g. `primlab single_pass reduce_sum_i32_i64 2^20`.
    pub label: String,
    /// The NEW record (its identity: impl, primitive, op, variant, size, dtype, mode).
    pub record: BenchRecord,
    /// OLD median, microseconds.
    pub old_us: f64,
    /// NEW median, microseconds.
    pub new_us: f64,
    /// NEW / OLD.
    pub ratio: f64,
    /// Its 95 % interval (None: noise unknown).
    pub interval: Option<Interval>,
    /// Whether it is a record of ours (gated); the others are references.
    pub ours: bool,
    /// Its references and how far they moved ([`Basis::References`], ours only).
    pub references: Option<Drift>,
    /// NEW / OLD over the references' drift (the plain ratio when not normalised).
    pub normalised: f64,
    /// The copy ceiling's run drift at this record's size ([`Basis::Raw`];
    /// None: a receipt has no copy record to measure it by).
    pub drift: Option<ProgramMargin>,
    /// The interval the verdict is taken on: `interval` over the references'
    /// drift, or widened by the copy's run drift.
    pub judged: Option<Interval>,
    /// The verdict.
    pub change: Change,
}

/// The verdict on `ratio` (NEW / OLD) judged on `judged` (`None`: noise
/// unknown, the ratio alone decides): faster or slower when the interval lies
/// wholly below or above 1, a regression when wholly above `1 + threshold`.
pub fn verdict(ratio: f64, judged: Option<Interval>, threshold: f64) -> Change {
    let (low, high) = judged.map_or((ratio, ratio), |i| (i.low, i.high));
    if low > 1.0 + threshold {
        Change::Regression
    } else if low > 1.0 {
        Change::Slower
    } else if high < 1.0 {
        Change::Faster
    } else {
        Change::WithinNoise
    }
}

/// Every record timed in both `old` and `new`, in NEW's order, judged on
/// `basis` (references only ever on their plain ratio), and the number of
/// timed records only in OLD and only in NEW.
pub fn compare(
    old: &[BenchRecord],
    new: &[BenchRecord],
    threshold: f64,
    basis: Basis,
) -> (Vec<Comparison>, usize, usize) {
    compare_with(old, new, threshold, basis, Spread::OneProcess { old: 1, new: 1 })
}

/// [`compare`] of two receipts of several processes each: every record on
/// the spread between its processes ([`collapse`], [`process_interval`]); a
/// record of ours timed in fewer than two processes of a side has no
/// interval and is UNJUDGED (one process's calls never decide).
pub fn compare_processes(
    old: &[BenchRecord],
    new: &[BenchRecord],
    threshold: f64,
    basis: Basis,
) -> (Vec<Comparison>, usize, usize) {
    let spread = Spread::of(old, new);
    compare_with(&collapse(old), &collapse(new), threshold, basis, spread)
}

/// [`compare`] with each interval taken as `spread` says.
fn compare_with(
    old: &[BenchRecord],
    new: &[BenchRecord],
    threshold: f64,
    basis: Basis,
    spread: Spread,
) -> (Vec<Comparison>, usize, usize) {
    let interval_of = spread.interval_of();
    let timed = |r: &&BenchRecord| r.timed_median().is_some();
    let mut out = Vec::new();
    for n in new.iter().filter(timed) {
        let Some(o) = old.iter().filter(timed).find(|o| key(o) == key(n)) else { continue };
        let (old_us, new_us) = (o.timed_median().unwrap_or(f64::NAN), n.timed_median().unwrap_or(f64::NAN));
        let ratio = new_us / old_us;
        let interval = interval_of(&n.samples_us, &o.samples_us);
        let ours = n.implementation == IMPL_PRIMLAB;
        let mut c = Comparison {
            label: format!("{} {} {}", n.label(), n.op, n.size().label()),
            record: n.clone(),
            old_us,
            new_us,
            ratio,
            interval,
            ours,
            references: None,
            normalised: ratio,
            drift: None,
            judged: interval,
            change: Change::WithinNoise,
        };
        match basis {
            Basis::References { limit } if ours => {
                judge_on_references(&mut c, drift(n, old, new, limit, interval_of), threshold)
            }
            // A reference is the yardstick: it moves, it never regresses.
            Basis::References { .. } => {
                c.change = match verdict(ratio, interval, threshold) {
                    Change::Regression => Change::Slower,
                    other => other,
                }
            }
            Basis::Raw => {
                c.drift = copy_margin((old, IMPL_CEILING), (new, IMPL_CEILING), n.size());
                c.judged = match (interval, c.drift) {
                    (Some(i), Some(d)) => Some(d.widen(i)),
                    (i, _) => i,
                };
                c.change = verdict(ratio, c.judged, threshold);
            }
        }
        if spread.judges() && ours && interval.is_none() {
            // Fewer than two processes of a side timed it: nothing to judge on.
            c.change = Change::Unjudged;
        }
        out.push(c);
    }
    let only = |a: &[BenchRecord], b: &[BenchRecord]| {
        a.iter().filter(timed).filter(|x| !b.iter().filter(timed).any(|y| key(x) == key(y))).count()
    };
    (out, only(old, new), only(new, old))
}

/// Judges a record of ours by its ratio over the references' drift; UNJUDGED
/// when no reference is usable.
fn judge_on_references(c: &mut Comparison, references: Drift, threshold: f64) {
    match references.centre() {
        Some(centre) => {
            c.normalised = c.ratio / centre;
            c.judged = references.normalise(c.ratio, c.interval);
            // Noise unknown on both sides: the normalised ratio alone decides.
            let judged =
                c.judged.filter(|_| c.interval.is_some() || references.used.iter().any(|r| r.interval.is_some()));
            c.change = verdict(c.normalised, judged, threshold);
        }
        None => {
            c.judged = None;
            c.change = Change::Unjudged;
        }
    }
    c.references = Some(references);
}

/// The counts of a comparison.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Records of ours in both receipts (the gated ones).
    pub matched: usize,
    /// Records of ours faster, slower (within the threshold), regressed, within noise and unjudged.
    pub faster: usize,
    /// See `faster`.
    pub slower: usize,
    /// See `faster`.
    pub regressions: usize,
    /// See `faster`.
    pub within_noise: usize,
    /// See `faster`.
    pub unjudged: usize,
    /// Geometric mean of our NEW / OLD (NaN when no ratio is finite).
    pub geomean: f64,
    /// Reference records (CUB, PyTorch, ceilings) in both receipts.
    pub references: usize,
    /// Geometric mean of their NEW / OLD: how far the machine moved overall.
    pub references_geomean: f64,
    /// Timed records only in OLD.
    pub only_old: usize,
    /// Timed records only in NEW.
    pub only_new: usize,
}

fn geomean<'a>(ratios: impl Iterator<Item = &'a f64>) -> f64 {
    let logs: Vec<f64> = ratios.map(|r| r.ln()).filter(|l| l.is_finite()).collect();
    if logs.is_empty() {
        f64::NAN
    } else {
        (logs.iter().sum::<f64>() / logs.len() as f64).exp()
    }
}

/// The counts of `comparisons`.
pub fn summarize(comparisons: &[Comparison], only_old: usize, only_new: usize) -> Summary {
    let ours: Vec<&Comparison> = comparisons.iter().filter(|c| c.ours).collect();
    let count = |change| ours.iter().filter(|c| c.change == change).count();
    let references: Vec<&Comparison> = comparisons.iter().filter(|c| !c.ours).collect();
    Summary {
        matched: ours.len(),
        faster: count(Change::Faster),
        slower: count(Change::Slower),
        regressions: count(Change::Regression),
        within_noise: count(Change::WithinNoise),
        unjudged: count(Change::Unjudged),
        geomean: geomean(ours.iter().map(|c| &c.ratio)),
        references: references.len(),
        references_geomean: geomean(references.iter().map(|c| &c.ratio)),
        only_old,
        only_new,
    }
}

/// The gate's word: cannot judge (a receipt of one process), fail (a
/// regression), could not judge (a record of ours without a usable
/// reference or without two processes a side), or pass.
fn gate_word(s: &Summary, spread: Spread) -> &'static str {
    if !spread.judges() {
        "cannot judge"
    } else if s.regressions > 0 {
        "fail"
    } else if s.unjudged > 0 {
        "could not judge"
    } else {
        "pass"
    }
}

/// Why receipts of one process are not judged, and what gates instead.
/// Rule: a record's time may sit in a mode that holds for its whole process
/// (measured on the H200, receipts/speed-gate/2026-12-03: the exclusive scan
/// at 2^20 ran at 12.2 us in two processes of unchanged code and 14.5 us in
/// four), and a receipt's interval only sees the calls of its own process;
/// `bench ab` times fresh processes of both builds in every round, and
/// `bench --processes K` writes a receipt of K processes.
pub fn cannot_judge(spread: Spread) -> String {
    let (old, new) = match spread {
        Spread::OneProcess { old, new } | Spread::Processes { old, new } => (old, new),
    };
    format!(
        "bench compare: cannot judge a regression from single-process receipts (OLD holds {old} process(es), NEW \
         {new}): a record's time can sit in a mode that holds for its whole process (up to 25 % apart at 2^10 to \
         2^24 on the H200 for unchanged code), which the calls of one process cannot show. Gate with `harness \
         bench ab OLD_BINARY NEW_BINARY` (rounds of fresh processes of both builds), or time each side with \
         `harness bench --processes 3` and compare those receipts."
    )
}

/// The gate's line.
fn gate_line(s: &Summary, threshold: f64, spread: Spread) -> String {
    let percent = 100.0 * threshold;
    match gate_word(s, spread) {
        "cannot judge" => "gate: CANNOT JUDGE: single-process receipts; the ratios below are for information \
             (why, and what gates instead, on the last line)"
            .to_string(),
        "fail" => {
            format!("gate: FAIL: {} record(s) slower by more than {percent:.1} % beyond their noise", s.regressions)
        }
        "could not judge" => format!(
            "gate: COULD NOT JUDGE {} record(s): none of their references stayed within the limit, none was timed \
             in both runs, or fewer than two processes of a side timed them (listed as UNJUDGED)",
            s.unjudged
        ),
        _ => format!("gate: pass: no record slower by more than {percent:.1} % beyond its noise"),
    }
}

/// What the intervals are taken from.
fn spread_note(spread: Spread) -> String {
    match spread {
        Spread::Processes { old, new } => format!(
            "Each interval is taken between whole processes (OLD {old}, NEW {new}): NEW / OLD is the ratio of the \
             geometric means of the process medians, its 95 % interval Student's t over the processes (Welch's \
             standard error and Welch-Satterthwaite's degrees of freedom), never the calls of one process."
        ),
        Spread::OneProcess { .. } => "Each interval below is the bootstrap of one process's calls a side, which \
             cannot show a mode that holds for the whole process: a move here is a lead, not a verdict."
            .to_string(),
    }
}

/// The summary lines printed before any table: the counts, the gate's
/// verdict, and what the verdicts are judged on.
fn summary_text(s: &Summary, threshold: f64, basis: Basis, drift_measured: bool, spread: Spread) -> String {
    let gate = gate_line(s, threshold, spread);
    let basis_note = match basis {
        Basis::References { limit } => format!(
            "Each record of ours is judged on its NEW / OLD over the references' (CUB's and PyTorch's record of the \
             same op and size, the copy and read ceilings at the nearest size), each reference used while its own \
             NEW / OLD stays within {:.2}x-{limit:.2}x. References in both: {}, geometric mean new / old {:.3} \
             (the machine's move; listed, never gated).",
            1.0 / limit,
            s.references,
            s.references_geomean
        ),
        Basis::Raw if drift_measured => "Verdicts are taken on the plain 95 % interval widened by the run drift \
             (how far the harness's copy ceiling, the same device copy in both runs, moved between OLD and NEW at \
             the nearest size)."
            .into(),
        Basis::Raw => "The two receipts share no copy ceiling record, so no run drift was measured: the verdicts \
             see only the spread within each receipt."
            .into(),
    };
    let counts = if spread.judges() {
        format!(
            "{} records of ours in both: {} faster, {} slower, {} REGRESSION, {} within noise, {} UNJUDGED",
            s.matched, s.faster, s.slower, s.regressions, s.within_noise, s.unjudged
        )
    } else {
        format!(
            "{} records of ours in both (for information): {} faster, {} slower, {} within noise, {} without a usable \
             reference",
            s.matched, s.faster, s.slower, s.within_noise, s.unjudged
        )
    };
    let spread_note = spread_note(spread);
    format!(
        "{counts}; geometric mean new / old {:.3}. {} timed only in OLD, {} only in NEW.\n{gate}\n{basis_note}\n\
         {spread_note}\n",
        s.geomean, s.only_old, s.only_new
    )
}

/// For a receipt of one process: no record is a regression (a slowdown
/// beyond the threshold is listed as slower), since no interval of one
/// process's calls can tell a change from the process's mode.
pub fn informational(comparisons: &mut [Comparison]) {
    for c in comparisons.iter_mut().filter(|c| c.change == Change::Regression) {
        c.change = Change::Slower;
    }
}

/// `low-high` of an interval, or `unknown`.
fn range(interval: Option<Interval>) -> String {
    interval.map(|i| format!("{:.3}-{:.3}", i.low, i.high)).unwrap_or_else(|| "unknown".into())
}

/// The table of `comparisons`: regressions first, then slower, faster and
/// within noise, each by how far the ratio is from 1.
fn table(comparisons: &[&Comparison]) -> Table {
    let mut sorted = comparisons.to_vec();
    sorted.sort_by(|a, b| {
        (!a.ours, a.change.rank(), -a.normalised.ln().abs())
            .partial_cmp(&(!b.ours, b.change.rank(), -b.normalised.ln().abs()))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut t = Table::new(["verdict", "record", "old", "new", "new / old", "95 % CI", "judged", "judged against"]);
    for c in sorted {
        let against = match (&c.references, c.drift) {
            (Some(r), _) => r.describe(),
            (None, Some(d)) => format!("run drift {}", d.describe()),
            (None, None) if c.ours => "drift unknown".into(),
            (None, None) => "(a reference: listed, not gated)".into(),
        };
        let mut word = c.change.word().to_string();
        if c.interval.is_none() && c.change != Change::Unjudged {
            word.push_str(" (noise unknown)");
        }
        if !c.ours {
            word = format!("reference {word}");
        }
        let judged = match c.judged {
            Some(i) if c.references.is_some() => format!("{:.3} ({})", c.normalised, range(Some(i))),
            Some(i) => range(Some(i)),
            None => "-".into(),
        };
        t.row([
            word,
            c.label.clone(),
            format!("{:.2} us", c.old_us),
            format!("{:.2} us", c.new_us),
            format!("{:.3}", c.ratio),
            range(c.interval),
            judged,
            against,
        ]);
    }
    t
}

/// What `harness bench compare` prints as text: the summary, then the
/// changed records (every record with `all`).
pub fn render(
    comparisons: &[Comparison],
    only_old: usize,
    only_new: usize,
    options: &Options,
    spread: Spread,
) -> String {
    let (threshold, all) = (options.threshold, options.all);
    let summary = summarize(comparisons, only_old, only_new);
    let drift_measured = comparisons.iter().any(|c| c.drift.is_some());
    let mut out = summary_text(&summary, threshold, options.basis, drift_measured, spread);
    let listed: Vec<&Comparison> = comparisons.iter().filter(|c| all || (c.ours && c.change.changed())).collect();
    if listed.is_empty() {
        out.push_str("\nNo record changed beyond its noise.\n");
        return out;
    }
    let which = if all {
        format!("All {} records", listed.len())
    } else {
        format!("The {} changed records of ours (--all lists all {}, references too)", listed.len(), comparisons.len())
    };
    out.push_str(&format!("\n{which}:\n\n{}", table(&listed).render()));
    out
}

/// The interval as a JSON pair, or null.
fn interval_json(interval: Option<Interval>) -> serde_json::Value {
    interval.map_or(serde_json::Value::Null, |i| serde_json::json!([i.low, i.high]))
}

/// One matched record as JSON.
fn comparison_json(c: &Comparison) -> serde_json::Value {
    let r = &c.record;
    serde_json::json!({
        "impl": r.implementation,
        "primitive": r.primitive,
        "op": r.op,
        "variant": r.variant,
        "size": r.size().label(),
        "n": r.n,
        "dtype": r.dtype,
        "timing_mode": r.timing_mode.name(),
        "old_us": c.old_us,
        "new_us": c.new_us,
        "ratio": c.ratio,
        "ci95": interval_json(c.interval),
        "judged": interval_json(c.judged),
        "gated": c.ours,
        "normalised": number_json(c.normalised),
        "references": c.references.as_ref().map(|d| d.used.iter().map(|r| serde_json::json!({
            "reference": r.label, "ratio": r.ratio, "ci95": interval_json(r.interval)
        })).collect::<Vec<_>>()),
        "references_beyond_limit": c.references.as_ref().map(|d| d.moved.iter().map(|r| serde_json::json!({
            "reference": r.label, "ratio": r.ratio
        })).collect::<Vec<_>>()),
        "drift_percent": c.drift.map(|d| d.percent()),
        "verdict": c.change.word().to_lowercase(),
    })
}

/// The `--format json` document: the summary, the gate, every matched record.
pub fn to_json(
    comparisons: &[Comparison],
    only_old: usize,
    only_new: usize,
    options: &Options,
    spread: Spread,
) -> serde_json::Value {
    let s = summarize(comparisons, only_old, only_new);
    let (spread_name, old_processes, new_processes) = match spread {
        Spread::Processes { old, new } => ("processes", old, new),
        Spread::OneProcess { old, new } => ("one_process", old, new),
    };
    serde_json::json!({
        "spread": { "kind": spread_name, "old_processes": old_processes, "new_processes": new_processes },
        "threshold": options.threshold,
        "basis": match options.basis {
            Basis::References { limit } => serde_json::json!({ "references": { "limit": limit } }),
            Basis::Raw => serde_json::json!("raw"),
        },
        "gate": gate_word(&s, spread),
        "summary": {
            "matched": s.matched,
            "faster": s.faster,
            "slower": s.slower,
            "regression": s.regressions,
            "within_noise": s.within_noise,
            "unjudged": s.unjudged,
            "geomean_new_over_old": number_json(s.geomean),
            "references": s.references,
            "references_geomean_new_over_old": number_json(s.references_geomean),
            "only_old": s.only_old,
            "only_new": s.only_new,
        },
        "records": comparisons.iter().map(comparison_json).collect::<Vec<_>>(),
    })
}

/// A finite number, or null (JSON has no NaN).
fn number_json(v: f64) -> serde_json::Value {
    if v.is_finite() {
        serde_json::json!(v)
    } else {
        serde_json::Value::Null
    }
}

/// The columns of [`to_csv`].
pub const CSV_COLUMNS: [&str; 17] = [
    "impl",
    "primitive",
    "op",
    "variant",
    "size",
    "dtype",
    "timing_mode",
    "old_us",
    "new_us",
    "ratio",
    "ci_low",
    "ci_high",
    "normalised",
    "judged_low",
    "judged_high",
    "judged_against",
    "verdict",
];

/// Every matched record as CSV, one row each ([`CSV_COLUMNS`]).
pub fn to_csv(comparisons: &[Comparison]) -> String {
    let rows: Vec<Vec<String>> = comparisons
        .iter()
        .map(|c| {
            let r = &c.record;
            vec![
                r.implementation.clone(),
                r.primitive.clone(),
                r.op.clone(),
                r.variant.clone(),
                r.size().label(),
                r.dtype.clone(),
                r.timing_mode.name().to_string(),
                number(Some(c.old_us)),
                number(Some(c.new_us)),
                number(Some(c.ratio)),
                number(c.interval.map(|i| i.low)),
                number(c.interval.map(|i| i.high)),
                number(Some(c.normalised)),
                number(c.judged.map(|i| i.low)),
                number(c.judged.map(|i| i.high)),
                match (&c.references, c.ours) {
                    (Some(r), _) => r.describe(),
                    (None, true) => "raw".into(),
                    (None, false) => "reference".into(),
                },
                c.change.word().to_lowercase(),
            ]
        })
        .collect();
    csv_document(&CSV_COLUMNS, &rows)
}

/// The records of the bench receipt at `path` (an error naming it when it is
/// unreadable or another kind of receipt).
pub fn records_of(path: &Path) -> Result<Vec<BenchRecord>> {
    let receipt = Receipt::load(path)?;
    if receipt.kind != "bench" {
        bail!("{} is a '{}' receipt, not a bench receipt", path.display(), receipt.kind);
    }
    let details: BenchDetails = serde_json::from_value(receipt.details)
        .with_context(|| format!("reading the bench details of {}", path.display()))?;
    Ok(details.records)
}

/// `harness bench compare OLD NEW`: prints the comparison (and writes the
/// CSV when asked). Ok(false), the exit status 1, when a record regressed
/// between the processes of two multi-process receipts; an error (exit 2)
/// when a receipt cannot be read, the two share no timed record, a record of
/// ours could not be judged, or either receipt holds one process only
/// ([`cannot_judge`], after the comparison is printed for information).
pub fn run(old: &Path, new: &Path, options: &Options) -> Result<bool> {
    if !(options.threshold.is_finite() && options.threshold >= 0.0) {
        bail!("--threshold must be a finite amount of at least 0, not {}", options.threshold);
    }
    let (old_records, new_records) = (records_of(old)?, records_of(new)?);
    if let Basis::References { limit } = options.basis {
        if !(limit.is_finite() && limit > 1.0) {
            bail!("--reference-limit must be a finite factor above 1 (1.5 or 50%), not {limit}");
        }
    }
    let spread = Spread::of(&old_records, &new_records);
    let (mut comparisons, only_old, only_new) = if spread.judges() {
        compare_processes(&old_records, &new_records, options.threshold, options.basis)
    } else {
        compare(&old_records, &new_records, options.threshold, options.basis)
    };
    if !spread.judges() {
        informational(&mut comparisons);
    }
    if comparisons.is_empty() {
        bail!(
            "{} and {} share no timed record (matched by impl, primitive, op, variant, size, dtype, timing mode)",
            old.display(),
            new.display()
        );
    }
    print_comparison(&comparisons, only_old, only_new, options, spread)?;
    if !spread.judges() {
        return Err(CannotRun(cannot_judge(spread)).into());
    }
    let summary = summarize(&comparisons, only_old, only_new);
    if summary.regressions == 0 && summary.unjudged > 0 {
        bail!(
            "could not judge {} record(s) of ours (UNJUDGED above): their references moved beyond the limit or were \
             not timed in both runs, or fewer than two processes of a side timed them; widen --reference-limit, \
             judge the raw ratios with --raw, or time more processes",
            summary.unjudged
        );
    }
    Ok(summary.regressions == 0)
}

/// Writes the CSV when asked and prints the comparison in the chosen format.
fn print_comparison(
    comparisons: &[Comparison],
    only_old: usize,
    only_new: usize,
    options: &Options,
    spread: Spread,
) -> Result<()> {
    if let Some(path) = &options.csv {
        super::export::write_text(path, &to_csv(comparisons))?;
    }
    match options.format {
        OutputFormat::Text => {
            print!("{}", render(comparisons, only_old, only_new, options, spread));
            if let Some(path) = &options.csv {
                println!("CSV of all {} records: {}", comparisons.len(), path.display());
            }
        }
        OutputFormat::Json => {
            let document = to_json(comparisons, only_old, only_new, options, spread);
            println!("{}", serde_json::to_string_pretty(&document)?);
        }
        OutputFormat::Csv => print!("{}", to_csv(comparisons)),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::entries::ceilings::{COPY_OP, READ_OP};
    use crate::receipts::{MachineInfo, Tally};

    fn rec(variant: &str, n: usize, centre: f64, spread: f64) -> BenchRecord {
        let samples = (0..31).map(|i| centre - spread + 2.0 * spread * i as f64 / 30.0).collect();
        BenchRecord::synthetic("primlab", "scan", "exclusive_scan_i32_i64", variant, n, centre, 12 * n as u64)
            .with_samples(samples)
    }

    const REFERENCES: Basis = Basis::References { limit: crate::bench::compare_references::DEFAULT_LIMIT };

    fn options(threshold: f64) -> Options {
        Options { threshold, basis: REFERENCES, all: false, csv: None, format: OutputFormat::Text }
    }

    fn raw(threshold: f64) -> Options {
        Options { basis: Basis::Raw, ..options(threshold) }
    }

    fn receipt(records: Vec<BenchRecord>, path: &Path) {
        crate::bench::details::save_synthetic_receipt(records, path);
    }

    /// How the tests that render comparisons of their own say they were judged.
    const JUDGED: Spread = Spread::Processes { old: 3, new: 3 };

    /// `records` as timed by one process each per factor of `jitter`: every
    /// time of process `p` scaled by `jitter[p]` (the process's mode).
    fn in_processes(records: &[BenchRecord], jitter: &[f64]) -> Vec<BenchRecord> {
        let mut out = Vec::new();
        for (process, factor) in jitter.iter().enumerate() {
            for r in records {
                let mut r = r.clone();
                r.process = process;
                r.median_us = r.median_us.map(|m| m * factor);
                r.samples_us = r.samples_us.iter().map(|s| s * factor).collect();
                out.push(r);
            }
        }
        out
    }

    /// Three processes a side, their modes 0.1 % apart.
    const QUIET: [f64; 3] = [1.0, 1.001, 0.999];

    #[test]
    fn two_receipts_compare_record_by_record() {
        let dir = std::env::temp_dir().join(format!("primlab-bench-compare-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (old, new) = (dir.join("old.json"), dir.join("new.json"));
        // (variant, n, old median, new median, spread): None where a receipt lacks the record.
        type Row = (&'static str, usize, Option<f64>, Option<f64>, f64);
        let table: [Row; 5] = [
            ("a", 1 << 20, Some(10.0), Some(8.0), 0.1),
            ("b", 1 << 20, Some(10.0), Some(12.0), 0.1),
            ("c", 1 << 20, Some(10.0), Some(10.2), 2.0),
            ("gone", 1 << 20, Some(10.0), None, 0.1),
            ("a", 1 << 24, None, Some(8.0), 0.1),
        ];
        // The records of one receipt: `median` picks its column of the table.
        let side = |median: fn(&Row) -> Option<f64>| -> Vec<BenchRecord> {
            table.iter().filter_map(|row| median(row).map(|us| rec(row.0, row.1, us, row.4))).collect()
        };
        let mut unsampled = BenchRecord::synthetic("cub", "scan", "exclusive_scan_i32_i64", "cub", 1 << 20, 10.0, 1);
        let mut old_records = side(|row| row.2);
        old_records.push(unsampled.clone());
        receipt(old_records, &old);
        unsampled.median_us = Some(12.0);
        let mut new_records = side(|row| row.3);
        new_records.push(unsampled);
        receipt(new_records, &new);
        let (comparisons, only_old, only_new) =
            compare(&records_of(&old).unwrap(), &records_of(&new).unwrap(), 0.5, Basis::Raw);
        let changes: Vec<Change> = comparisons.iter().map(|c| c.change).collect();
        assert_eq!(changes, [Change::Faster, Change::Slower, Change::WithinNoise, Change::Slower]);
        assert!((comparisons[0].ratio - 0.8).abs() < 1e-9);
        assert!(comparisons[0].interval.unwrap().high < 1.0);
        assert_eq!(comparisons[3].interval, None);
        assert_eq!((only_old, only_new), (1, 1));
        assert!(comparisons.iter().all(|c| c.drift.is_none() && c.judged == c.interval));
        let text = render(&comparisons, only_old, only_new, &raw(0.5), JUDGED);
        assert!(
            text.starts_with("3 records of ours in both: 1 faster, 1 slower, 0 REGRESSION, 1 within noise, 0 UNJUDGED"),
            "the CUB record is a reference, not counted: {text}"
        );
        assert!(text.contains("no run drift was measured"), "{text}");
        assert!(text.contains("reference slower (noise unknown)") || !text.contains("cub"), "{text}");
        assert!(text.contains("The 2 changed records of ours (--all lists all 4, references too)"), "{text}");
        assert!(!text.contains("within noise  "), "only changed records are listed: {text}");
        let all = Options { all: true, ..raw(0.5) };
        assert!(render(&comparisons, only_old, only_new, &all, JUDGED).contains("All 4 records"));
        // Receipts of one process each are not judged at all (exit 2).
        assert!(run(&old, &new, &raw(0.5)).unwrap_err().to_string().contains("single-process receipts"));
        // A receipt of another kind is refused.
        Receipt::new("sweep", MachineInfo::default(), Tally::default(), serde_json::json!({})).save(&old).unwrap();
        assert!(run(&old, &new, &raw(0.5)).unwrap_err().to_string().contains("not a bench receipt"));
    }

    /// The harness's copy ceiling of the same size in OLD and NEW.
    fn copy(n: usize, centre: f64) -> BenchRecord {
        let samples = (0..31).map(|i| centre * (1.0 + 0.001 * (i as f64 - 15.0) / 15.0)).collect();
        BenchRecord::synthetic(IMPL_CEILING, "ceilings", COPY_OP, COPY_OP, n, centre, 8 * n as u64)
            .with_samples(samples)
    }

    // (old median, new median, verdict): the copy moved 10 % between the
    // runs at 2^20 and not at all at 2^28, and every record's own spread is
    // tiny, so the bootstrap alone would call each of these a change.
    const DRIFT_CASES: [(usize, f64, f64, Change); 4] = [
        (1 << 20, 10.0, 10.5, Change::WithinNoise),
        (1 << 20, 10.0, 13.0, Change::Slower),
        (1 << 20, 10.0, 8.0, Change::Faster),
        (1 << 28, 10.0, 10.5, Change::Slower),
    ];

    #[test]
    fn verdicts_count_the_drift_of_the_copy_between_the_runs() {
        let variants = ["d0", "d1", "d2", "d3"];
        let mut old = vec![copy(1 << 20, 10.0), copy(1 << 28, 1000.0)];
        let mut new = vec![copy(1 << 20, 11.0), copy(1 << 28, 1000.0)];
        for (variant, &(n, before, after, _)) in variants.iter().zip(DRIFT_CASES.iter()) {
            old.push(rec(variant, n, before, 0.001));
            new.push(rec(variant, n, after, 0.001));
        }
        let (comparisons, _, _) = compare(&old, &new, 0.5, Basis::Raw);
        let scan: Vec<&Comparison> = comparisons.iter().filter(|c| c.label.contains("exclusive_scan")).collect();
        assert_eq!(scan.len(), DRIFT_CASES.len());
        for (c, &(n, _, _, expected)) in scan.iter().zip(DRIFT_CASES.iter()) {
            assert_eq!(c.change, expected, "{c:?}");
            let drift = c.drift.expect("both receipts time the copy");
            assert_eq!(drift.copy_elements, n, "the drift is read at the record's own size");
            let (bootstrap, judged) = (c.interval.unwrap(), c.judged.unwrap());
            assert!(judged.low <= bootstrap.low && judged.high >= bootstrap.high);
        }
        // The 10 % drift at 2^20 is what turned a bootstrap "slower" into "within noise".
        assert!(scan[0].interval.unwrap().low > 1.0);
        assert!((scan[0].drift.unwrap().percent() - 10.0).abs() < 1e-6);
        let text = render(&comparisons, 0, 0, &Options { all: true, ..raw(0.5) }, JUDGED);
        assert!(text.contains("run drift 10.0 % at 2^20"), "{text}");
        assert!(text.contains("widened by the run drift"), "{text}");
    }

    /// A fresh folder with OLD holding `old` and NEW holding `new`, each
    /// timed by three processes whose modes differ by `jitter`.
    fn pair_in(name: &str, old: Vec<BenchRecord>, new: Vec<BenchRecord>, jitter: &[f64]) -> (PathBuf, PathBuf) {
        let dir = crate::test_dir::fresh_temp_dir(name);
        let (old_path, new_path) = (dir.join("old.json"), dir.join("new.json"));
        receipt(in_processes(&old, jitter), &old_path);
        receipt(in_processes(&new, jitter), &new_path);
        (old_path, new_path)
    }

    /// [`pair_in`] with quiet processes ([`QUIET`]).
    fn pair(name: &str, old: Vec<BenchRecord>, new: Vec<BenchRecord>) -> (PathBuf, PathBuf) {
        pair_in(name, old, new, &QUIET)
    }

    /// A receipt's records: the copy ceiling at 2^20 and 2^28 (the same in
    /// OLD and NEW) and two scans, `scale` x 10 us and 100 us, spread +-1 %.
    fn run_of(scale: f64) -> Vec<BenchRecord> {
        vec![
            copy(1 << 20, 10.0),
            copy(1 << 28, 1000.0),
            rec("s1", 1 << 20, 10.0 * scale, 0.1 * scale),
            rec("s2", 1 << 28, 100.0, 1.0),
        ]
    }

    #[test]
    fn a_planted_ten_percent_slowdown_fails_the_three_percent_gate() {
        let (old, new) = pair("compare-gate-slow", run_of(1.0), run_of(1.1));
        assert!(!run(&old, &new, &options(0.03)).unwrap(), "exit 1: s1 is 10 % slower, its noise about 1 %");
        // The same slowdown within a 20 % threshold passes, and is still listed as slower.
        assert!(run(&old, &new, &options(0.2)).unwrap());
        let (comparisons, _, _) =
            compare_processes(&records_of(&old).unwrap(), &records_of(&new).unwrap(), 0.03, REFERENCES);
        let s1 = comparisons.iter().find(|c| c.label.contains("s1")).unwrap();
        assert_eq!(s1.change, Change::Regression);
        let text = render(&comparisons, 0, 0, &options(0.03), JUDGED);
        assert!(text.contains("gate: FAIL: 1 record(s) slower by more than 3.0 %"), "{text}");
        // The comparison says its intervals are taken between processes.
        assert!(text.contains("taken between whole processes (OLD 3, NEW 3)"), "{text}");
    }

    #[test]
    fn an_unchanged_or_faster_receipt_passes_the_gate() {
        let (old, same) = pair("compare-gate-same", run_of(1.0), run_of(1.0));
        assert!(run(&old, &same, &options(0.03)).unwrap(), "exit 0: nothing moved");
        let (old, faster) = pair("compare-gate-faster", run_of(1.0), run_of(0.8));
        assert!(run(&old, &faster, &options(0.03)).unwrap(), "exit 0: 20 % faster is no regression");
    }

    #[test]
    fn a_slowdown_within_the_noise_passes_the_gate() {
        // 10 % slower medians, but processes whose modes lie 20 % apart: the interval holds 1.03.
        let noisy = |scale: f64| vec![copy(1 << 20, 10.0), rec("s1", 1 << 20, 10.0 * scale, 0.01 * scale)];
        let (old, new) = pair_in("compare-gate-noisy", noisy(1.0), noisy(1.1), &[0.8, 1.0, 1.2]);
        let (comparisons, _, _) =
            compare_processes(&records_of(&old).unwrap(), &records_of(&new).unwrap(), 0.03, REFERENCES);
        let comparisons: Vec<Comparison> = comparisons.into_iter().filter(|c| c.ours).collect();
        assert!(comparisons[0].interval.unwrap().low < 1.03, "{:?}", comparisons[0]);
        assert!(run(&old, &new, &options(0.03)).unwrap(), "exit 0: within noise");
    }

    #[test]
    fn bad_input_is_an_error_not_a_verdict() {
        let (old, new) = pair("compare-gate-bad", run_of(1.0), vec![rec("other", 1 << 10, 1.0, 0.1)]);
        let e = run(&old, &new, &options(0.03)).unwrap_err().to_string();
        assert!(e.contains("share no timed record"), "{e}");
        let missing = old.with_file_name("missing.json");
        assert!(run(&missing, &old, &options(0.03)).is_err());
        std::fs::write(&missing, "{ not json").unwrap();
        assert!(run(&missing, &old, &options(0.03)).is_err());
        assert!(run(&old, &old, &options(f64::NAN)).unwrap_err().to_string().contains("--threshold"));
    }

    #[test]
    fn verdicts_against_the_threshold() {
        let i = |low, high| Some(Interval { low, high });
        assert_eq!(verdict(1.10, i(1.08, 1.12), 0.03), Change::Regression);
        assert_eq!(verdict(1.04, i(1.02, 1.06), 0.03), Change::Slower);
        assert_eq!(verdict(1.04, i(0.99, 1.06), 0.03), Change::WithinNoise);
        assert_eq!(verdict(0.90, i(0.88, 0.92), 0.03), Change::Faster);
        // Noise unknown: the ratio alone decides.
        assert_eq!(verdict(1.05, None, 0.03), Change::Regression);
        assert_eq!(verdict(1.0, None, 0.03), Change::WithinNoise);
    }

    #[test]
    fn json_and_csv_carry_every_matched_record_and_the_gate() {
        let (old, new) = pair("compare-formats", run_of(1.0), run_of(1.1));
        let (comparisons, only_old, only_new) =
            compare_processes(&records_of(&old).unwrap(), &records_of(&new).unwrap(), 0.03, REFERENCES);
        let json = to_json(&comparisons, only_old, only_new, &options(0.03), JUDGED);
        assert_eq!(json["gate"], "fail");
        assert_eq!(json["summary"]["matched"], 2, "two records of ours");
        assert_eq!(json["summary"]["references"], 2, "two copy ceilings");
        assert_eq!(json["summary"]["regression"], 1);
        let records = json["records"].as_array().unwrap();
        assert_eq!(records.len(), 4);
        let s1 = records.iter().find(|r| r["variant"] == "s1").unwrap();
        assert_eq!((s1["verdict"].as_str(), s1["size"].as_str()), (Some("regression"), Some("2^20")));
        assert!((s1["ratio"].as_f64().unwrap() - 1.1).abs() < 1e-9);
        assert_eq!(s1["judged"].as_array().unwrap().len(), 2);
        assert_eq!(s1["gated"], true);
        assert_eq!(s1["references"][0]["reference"], "copy ceiling 2^20");
        let csv = to_csv(&comparisons);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 5, "a header and one line per matched record");
        assert_eq!(lines[0], CSV_COLUMNS.join(","));
        assert!(lines
            .iter()
            .any(|l| l.starts_with("primlab,scan,exclusive_scan_i32_i64,s1,2^20,") && l.ends_with(",regression")));
        // --csv writes the same file.
        let path = old.with_file_name("out.csv");
        let csv_options = Options { csv: Some(path.clone()), ..options(0.03) };
        assert!(!run(&old, &new, &csv_options).unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), csv);
    }

    /// A receipt as a machine `machine` times slower than OLD's would time
    /// it: the ceilings at 2^10 and 2^20, CUB's and PyTorch's scan and our
    /// two scans, each +-1 %; our op `slow_op` (if any) is `ours` times slower on top.
    fn machine_run(machine: f64, slowed: Option<(&str, f64)>) -> Vec<BenchRecord> {
        let tight = |r: BenchRecord, us: f64| {
            r.with_samples((0..31).map(|i| us * (1.0 + 0.01 * (i as f64 - 15.0) / 15.0)).collect())
        };
        let mut out = Vec::new();
        for n in [1usize << 10, 1 << 20] {
            let t = machine * n as f64 / 1e5;
            out.push(tight(BenchRecord::synthetic(IMPL_CEILING, "ceilings", COPY_OP, COPY_OP, n, t, 8 * n as u64), t));
            out.push(tight(BenchRecord::synthetic(IMPL_CEILING, "ceilings", READ_OP, READ_OP, n, t, 4 * n as u64), t));
            for (implementation, variant) in [("cub", "cub"), ("torch", "torch")] {
                let r =
                    BenchRecord::synthetic(implementation, "scan", "exclusive_scan_i32_i64", variant, n, 2.0 * t, 12);
                out.push(tight(r, 2.0 * t));
            }
            for variant in ["decoupled_lookback", "reduce_then_scan"] {
                let extra = slowed.filter(|(v, _)| *v == variant).map_or(1.0, |(_, f)| f);
                let us = 2.0 * t * extra;
                let r = BenchRecord::synthetic("primlab", "scan", "exclusive_scan_i32_i64", variant, n, us, 12);
                out.push(tight(r, us));
            }
        }
        out
    }

    #[test]
    fn a_machine_twenty_percent_slower_everywhere_passes_against_the_references() {
        let (old, new) = pair("compare-machine-slower", machine_run(1.0, None), machine_run(1.2, None));
        assert!(run(&old, &new, &options(0.03)).unwrap(), "exit 0: every reference moved with us");
        let (comparisons, _, _) =
            compare_processes(&records_of(&old).unwrap(), &records_of(&new).unwrap(), 0.03, REFERENCES);
        for c in comparisons.iter().filter(|c| c.ours) {
            assert_eq!(c.change, Change::WithinNoise, "{c:?}");
            assert!((c.normalised - 1.0).abs() < 1e-9, "{c:?}");
            let used: Vec<&str> = c.references.as_ref().unwrap().used.iter().map(|r| r.label.as_str()).collect();
            assert_eq!(used.len(), 4, "CUB, PyTorch, copy and read: {used:?}");
        }
        // The bootstrap alone would call every record of ours a regression.
        assert!(comparisons.iter().filter(|c| c.ours).all(|c| c.interval.unwrap().low > 1.03));
    }

    #[test]
    fn a_five_percent_slowdown_of_one_op_fails_naming_it_and_no_other() {
        let slowed = Some(("reduce_then_scan", 1.05));
        for machine in [1.0, 1.2] {
            let (old, new) = pair("compare-one-op-slower", machine_run(1.0, None), machine_run(machine, slowed));
            assert!(!run(&old, &new, &options(0.03)).unwrap(), "exit 1 on a {machine}x machine");
            let (comparisons, _, _) =
                compare_processes(&records_of(&old).unwrap(), &records_of(&new).unwrap(), 0.03, REFERENCES);
            let regressed: Vec<&str> = comparisons
                .iter()
                .filter(|c| c.change == Change::Regression)
                .map(|c| c.record.variant.as_str())
                .collect();
            assert_eq!(regressed, ["reduce_then_scan", "reduce_then_scan"], "both sizes of that op, nothing else");
        }
    }

    #[test]
    fn references_that_moved_beyond_the_limit_leave_a_record_unjudged_not_passed() {
        // Only the ceilings and PyTorch as references, all 1.6x: beyond the 1.5x limit.
        let run_at = |machine: f64| -> Vec<BenchRecord> {
            machine_run(machine, None).into_iter().filter(|r| r.implementation != "cub").collect()
        };
        let (old, new) = pair("compare-unjudged", run_at(1.0), run_at(1.6));
        let e = run(&old, &new, &options(0.03)).unwrap_err().to_string();
        assert!(e.contains("could not judge 4 record(s) of ours"), "{e}");
        let (comparisons, only_old, only_new) =
            compare_processes(&records_of(&old).unwrap(), &records_of(&new).unwrap(), 0.03, REFERENCES);
        assert!(comparisons.iter().filter(|c| c.ours).all(|c| c.change == Change::Unjudged));
        assert_eq!(to_json(&comparisons, only_old, only_new, &options(0.03), JUDGED)["gate"], "could not judge");
        let text = render(&comparisons, only_old, only_new, &options(0.03), JUDGED);
        assert!(text.contains("gate: COULD NOT JUDGE 4 record(s)"), "{text}");
        assert!(text.contains("every reference moved beyond the limit: torch 2^10 1.60x"), "{text}");
        // A wider limit uses them again; the references are never gated themselves.
        let wide = Options { basis: Basis::References { limit: 2.0 }, ..options(0.03) };
        assert!(run(&old, &new, &wide).unwrap());
        assert!(run(&old, &new, &Options { basis: Basis::References { limit: 1.0 }, ..options(0.03) }).is_err());
    }
}

#[cfg(test)]
#[path = "compare_process_tests.rs"]
mod process_tests;
