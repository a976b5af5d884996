//! `harness bench ab OLD NEW -- [bench options]`: the merge gate that needs
//! no earlier receipt. Two harness binaries (the old build and the new one)
//! time the same selection on the same machine in interleaved rounds, the
//! order alternating (OLD then NEW, NEW then OLD, ...), each round a whole
//! `bench --no-baselines` of each into a folder of this run's own. Each
//! record of ours is judged on its paired ratios, one NEW / OLD per round:
//! the two halves of a round share the machine's state of that moment
//! (clocks, temperature, the driver), which cancels in their ratio, and the
//! rounds are the independent units of the interval
//! ([`super::stats::paired_interval`]).
//!
//! Both builds carry their own kernels (sources are embedded at build
//! time), so the two binaries may come from any two trees.

use super::compare::{key, records_of, verdict, Change, Key};
use super::digests::{Digests, DIGESTS_SCHEMA};
use super::record::{BenchRecord, IMPL_PRIMLAB};
use super::stats::{median, paired_interval, Interval};
use crate::registry::Primitive;
use crate::table::Table;
use anyhow::{bail, Context, Result};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

/// Options the run sets itself for each half; the user may not pass them.
const OWN_OPTIONS: [&str; 7] = ["--receipt", "--out", "--report", "--format", "--csv", "--gpus", "--no-baselines"];

/// The fewest rounds before a run may stop early, unless `--min-rounds`
/// says otherwise (never more than `--rounds`). Rule: three rounds give the
/// paired interval two degrees of freedom (t = 4.30, against 12.7 with
/// two), so a record whose rounds agree to about 1 % is decided on either
/// side of a 3 % threshold, while two rounds that agree by chance decide
/// nothing; a run whose records are all decided then stops at half the
/// default six rounds.
pub const DEFAULT_MIN_ROUNDS: usize = 3;

/// The `--min-rounds` of a run of `rounds` rounds given none.
pub fn default_min_rounds(rounds: usize) -> usize {
    DEFAULT_MIN_ROUNDS.min(rounds)
}

/// What the rounds time, and why.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// The primitives the user named with `--primitive` (their choice wins).
    Chosen,
    /// Every primitive, for the reason given.
    Everything(String),
    /// The primitives whose digests differ, and one unchanged as a control.
    Changed {
        /// Primitives whose sources differ between the builds.
        changed: Vec<Primitive>,
        /// The first unchanged primitive in the registry's order (None when every one changed).
        control: Option<Primitive>,
    },
}

impl Selection {
    /// The `--primitive` options both builds get (none: every primitive, or the user's own).
    pub fn args(&self) -> Vec<String> {
        match self {
            Selection::Changed { changed, control } => {
                changed.iter().chain(control).flat_map(|p| ["--primitive".to_string(), p.name().to_string()]).collect()
            }
            Selection::Chosen | Selection::Everything(_) => Vec::new(),
        }
    }

    /// The line the run prints before its rounds.
    pub fn describe(&self) -> String {
        match self {
            Selection::Chosen => "timing the primitives named with --primitive (the user's choice wins)".into(),
            Selection::Everything(why) => format!("timing every primitive: {why}"),
            Selection::Changed { changed, control } => {
                let names = |ps: &[Primitive]| ps.iter().map(|p| p.name()).collect::<Vec<_>>().join(", ");
                let what = if changed.is_empty() {
                    "no primitive's sources differ between the builds (the digests cover the verdict hash's \
                     scope, not the bench code)"
                        .to_string()
                } else {
                    format!("the sources of {} differ between the builds", names(changed))
                };
                match control {
                    Some(c) => format!(
                        "{what}; timing those and {c} as a control (unchanged, the first such in the registry's \
                         order): its records must come out within noise, or the machine moved, not the code"
                    ),
                    None => format!("{what}; every primitive changed, so there is no control"),
                }
            }
        }
    }
}

/// Whether the user named primitives in the bench options.
fn names_primitives(bench_args: &[String]) -> bool {
    bench_args.iter().any(|a| a == "--primitive" || a.starts_with("--primitive="))
}

/// What the rounds time, from the two builds' digests. Rule: only a
/// primitive whose sources differ can have changed speed, so the changed
/// ones and one unchanged control are timed; anything the digests cannot
/// vouch for times everything: a build that cannot report them (an older
/// build), different shared code, or a primitive one build lacks (timing
/// everything lets its records, timed on one side only, fail by name). The
/// user's own `--primitive` selection wins.
pub fn select(bench_args: &[String], old: &Result<Digests, String>, new: &Result<Digests, String>) -> Selection {
    if names_primitives(bench_args) {
        return Selection::Chosen;
    }
    let (old, new) = match (old, new) {
        (Ok(o), Ok(n)) => (o, n),
        (Err(e), _) | (_, Err(e)) => {
            let which = if old.is_err() { "OLD" } else { "NEW" };
            return Selection::Everything(format!(
                "the {which} build cannot say which sources it was built from ({e}; an older build?)"
            ));
        }
    };
    if old.shared != new.shared {
        return Selection::Everything("code shared by the primitives differs between the builds".into());
    }
    let known = |d: &Digests| d.primitives.keys().all(|k| Primitive::from_name(k).is_some());
    let names = |d: &Digests| d.primitives.keys().cloned().collect::<Vec<_>>();
    if !known(old) || !known(new) || names(old) != names(new) {
        return Selection::Everything(
            "the builds do not list the same primitives (one added or removed: its records, timed by one build \
             only, fail the gate by name)"
                .into(),
        );
    }
    let (changed, unchanged): (Vec<Primitive>, Vec<Primitive>) = Primitive::ALL
        .into_iter()
        .filter(|p| new.primitives.contains_key(p.name()))
        .partition(|p| old.primitives.get(p.name()) != new.primitives.get(p.name()));
    Selection::Changed { changed, control: unchanged.first().copied() }
}

/// The digests `binary bench --digests` prints, or why there are none.
pub fn digests_of(binary: &std::path::Path) -> Result<Digests, String> {
    let output = Command::new(binary)
        .args(["bench", "--digests"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{} did not start: {e}", binary.display()))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("no message");
        return Err(format!("`bench --digests` exited {}: {first}", output.status));
    }
    match serde_json::from_slice::<Digests>(&output.stdout) {
        Ok(d) if d.schema == DIGESTS_SCHEMA => Ok(d),
        Ok(d) => Err(format!("digests of schema {}, this build reads {DIGESTS_SCHEMA}", d.schema)),
        Err(_) => Err("`bench --digests` printed no digest document".into()),
    }
}

/// What `harness bench ab` does (its options, as plain values).
#[derive(Debug, Clone, PartialEq)]
pub struct AbOptions {
    /// The old build's harness binary.
    pub old: PathBuf,
    /// The new build's harness binary.
    pub new: PathBuf,
    /// Rounds (each times both builds once); at least 2: the most that run.
    pub rounds: usize,
    /// The fewest rounds before the run may stop early, once every record of
    /// ours is decided ([`decided`]); `rounds` runs them all.
    pub min_rounds: usize,
    /// A record regresses when its paired interval lies wholly above `1 + threshold`.
    pub threshold: f64,
    /// The folder of this run's receipts and logs (created; must be new or empty).
    pub out: PathBuf,
    /// List every record, not only the changed ones.
    pub all: bool,
    /// The bench options both builds get (`--primitive scan --quick`, ...).
    pub bench_args: Vec<String>,
}

/// One of the two builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// The old binary.
    Old,
    /// The new binary.
    New,
}

impl Build {
    fn name(self) -> &'static str {
        match self {
            Build::Old => "old",
            Build::New => "new",
        }
    }
}

/// The order of round `k` (from 0): OLD first on even rounds, NEW first on odd.
pub fn order(k: usize) -> [Build; 2] {
    if k % 2 == 0 {
        [Build::Old, Build::New]
    } else {
        [Build::New, Build::Old]
    }
}

/// One record judged over the rounds.
#[derive(Debug, Clone, PartialEq)]
pub struct Paired {
    /// The record's label and size.
    pub label: String,
    /// The record (of the first round's NEW).
    pub record: BenchRecord,
    /// Median over the rounds of OLD's median, microseconds.
    pub old_us: f64,
    /// Median over the rounds of NEW's median, microseconds.
    pub new_us: f64,
    /// Rounds in which both builds timed it.
    pub rounds: usize,
    /// Geometric mean of the rounds' NEW / OLD.
    pub ratio: f64,
    /// Its 95 % interval (None below two rounds: noise unknown).
    pub interval: Option<Interval>,
    /// Whether it is a record of ours (gated); the ceilings are listed only.
    pub ours: bool,
    /// The verdict.
    pub change: Change,
}

/// Every record timed by both builds in some round, judged on its paired
/// ratios, in the first round's order.
pub fn pair(rounds: &[(Vec<BenchRecord>, Vec<BenchRecord>)], threshold: f64) -> Vec<Paired> {
    let Some((_, first_new)) = rounds.first() else { return Vec::new() };
    let mut out = Vec::new();
    for n in first_new.iter().filter(|r| r.timed_median().is_some()) {
        let k = key(n);
        let medians: Vec<(f64, f64)> = rounds
            .iter()
            .filter_map(|(old, new)| {
                let of = |records: &[BenchRecord]| records.iter().find(|r| key(r) == k)?.timed_median();
                Some((of(old)?, of(new)?))
            })
            .collect();
        if medians.is_empty() {
            continue;
        }
        let ratios: Vec<f64> = medians.iter().map(|(o, n)| n / o).collect();
        let (ratio, interval) = match paired_interval(&ratios) {
            Some((centre, interval)) => (centre, Some(interval)),
            None => (ratios[0], None),
        };
        let ours = n.implementation == IMPL_PRIMLAB;
        let change = match verdict(ratio, interval, threshold) {
            Change::Regression if !ours => Change::Slower,
            other => other,
        };
        out.push(Paired {
            label: format!("{} {} {}", n.label(), n.op, n.size().label()),
            record: n.clone(),
            old_us: median(&medians.iter().map(|m| m.0).collect::<Vec<_>>()),
            new_us: median(&medians.iter().map(|m| m.1).collect::<Vec<_>>()),
            rounds: medians.len(),
            ratio,
            interval,
            ours,
            change,
        });
    }
    out
}

/// Whether more rounds could no longer change the gate for any record of
/// ours: each has an interval, lying wholly above `1 + threshold` (a
/// regression) or wholly below it (none). Rule: the gate only asks which side
/// of `1 + threshold` a record lies on, and an interval that clears it
/// answers; stopping at the first round where every record has answered is
/// what `--min-rounds` allows (at least `min_rounds` rounds, so that the
/// interval is not taken from too few).
pub fn decided(paired: &[Paired], threshold: f64) -> bool {
    let mut ours = paired.iter().filter(|p| p.ours).peekable();
    // A selection with no record of ours has decided nothing: it gates nothing.
    ours.peek().is_some()
        && ours.all(|p| p.interval.is_some_and(|i| i.low > 1.0 + threshold || i.high < 1.0 + threshold))
}

/// Why a run may stop before its last round, once `--min-rounds` rounds
/// are in: every record of ours decided ([`decided`]), or one of them a
/// REGRESSION already, which fails the gate whatever the others do. Rule:
/// a regression's interval lies wholly above `1 + threshold`, so the gate's
/// answer is known; more rounds would only narrow the other records'
/// intervals, whose verdicts are then printed from the rounds run (a
/// change that is gated again after its fix runs them all). Peeking at
/// each round asks more of chance than one look would, which the
/// threshold's margin absorbs: unchanged code lies 1 + threshold above its
/// true ratio only when its interval misses by the whole margin.
pub fn stop_reason(paired: &[Paired], threshold: f64) -> Option<String> {
    if decided(paired, threshold) {
        return Some("every record of ours decided".into());
    }
    let regressed: Vec<&str> =
        paired.iter().filter(|p| p.ours && p.change == Change::Regression).map(|p| p.label.as_str()).collect();
    (!regressed.is_empty()).then(|| {
        format!(
            "{} record(s) of ours a REGRESSION already ({}): the gate fails whatever the others do",
            regressed.len(),
            regressed.join(", ")
        )
    })
}

/// A record of ours that one build timed and the other did not, in some
/// round: the pairing cannot judge it, so it would drop out of the gate
/// unseen (a kernel the new build lost, a record the old build lacks).
#[derive(Debug, Clone, PartialEq)]
pub struct OneSided {
    /// The record's label and size.
    pub label: String,
    /// The build that timed it.
    pub timed_by: Build,
    /// The rounds (from 1) in which only that build timed it.
    pub rounds: Vec<usize>,
}

/// Every record of ours timed by one build only in some round, in the order met.
pub fn one_sided(rounds: &[(Vec<BenchRecord>, Vec<BenchRecord>)]) -> Vec<OneSided> {
    let mut out: Vec<(Key, OneSided)> = Vec::new();
    for (k, (old, new)) in rounds.iter().enumerate() {
        let timed = |records: &[BenchRecord]| -> Vec<Key> {
            records.iter().filter(|r| r.implementation == IMPL_PRIMLAB && r.timed_median().is_some()).map(key).collect()
        };
        let (old_keys, new_keys) = (timed(old), timed(new));
        for (side, records, other) in [(Build::Old, old, &new_keys), (Build::New, new, &old_keys)] {
            for r in records.iter().filter(|r| r.implementation == IMPL_PRIMLAB && r.timed_median().is_some()) {
                let rk = key(r);
                if other.contains(&rk) {
                    continue;
                }
                match out.iter_mut().find(|(ok, o)| *ok == rk && o.timed_by == side) {
                    Some((_, o)) => o.rounds.push(k + 1),
                    None => out.push((
                        rk,
                        OneSided {
                            label: format!("{} {} {}", r.label(), r.op, r.size().label()),
                            timed_by: side,
                            rounds: vec![k + 1],
                        },
                    )),
                }
            }
        }
    }
    out.into_iter().map(|(_, o)| o).collect()
}

/// The lines that fail the gate for the records of ours timed on one side only.
fn render_one_sided(records: &[OneSided]) -> String {
    let mut out = String::new();
    for o in records {
        let (timed, missing) = match o.timed_by {
            Build::Old => ("OLD", "NEW"),
            Build::New => ("NEW", "OLD"),
        };
        let rounds: Vec<String> = o.rounds.iter().map(|r| r.to_string()).collect();
        out.push_str(&format!(
            "gate: FAIL: {} was timed by {timed} but not by {missing} in round(s) {}: a record one build \
             lacks cannot be judged (narrow the selection with --primitive to leave a new one out)\n",
            o.label,
            rounds.join(", ")
        ));
    }
    out
}

/// The text of a judged run: counts, the gate, the changed records of ours
/// (every record with `all`), then the records of ours one build lacked.
pub fn render(paired: &[Paired], lost: &[OneSided], threshold: f64, rounds: usize, all: bool) -> String {
    let ours: Vec<&Paired> = paired.iter().filter(|p| p.ours).collect();
    let count = |c: Change| ours.iter().filter(|p| p.change == c).count();
    let regressions = count(Change::Regression);
    let percent = 100.0 * threshold;
    let gate = if regressions > 0 {
        format!("gate: FAIL: {regressions} record(s) slower by more than {percent:.1} % beyond their noise")
    } else if !lost.is_empty() {
        format!("gate: FAIL: {} record(s) of ours timed by one build only (listed below)", lost.len())
    } else {
        format!("gate: pass: no record slower by more than {percent:.1} % beyond its noise")
    };
    let mut out = format!(
        "{} records of ours over {rounds} interleaved rounds: {} faster, {} slower, {regressions} REGRESSION, {} \
         within noise. Each judged on its rounds' NEW / OLD (geometric mean, 95 % t-interval over the rounds).\n\
         {gate}\n",
        ours.len(),
        count(Change::Faster),
        count(Change::Slower),
        count(Change::WithinNoise),
    );
    let listed: Vec<&Paired> = paired.iter().filter(|p| all || (p.ours && p.change.changed())).collect();
    if listed.is_empty() {
        out.push_str("\nNo record of ours changed beyond its noise.\n");
        out.push_str(&render_one_sided(lost));
        return out;
    }
    let mut t = Table::new(["verdict", "record", "old", "new", "new / old", "95 % CI", "rounds"]);
    for p in listed {
        let word = match (p.ours, p.interval.is_some()) {
            (true, true) => p.change.word().to_string(),
            (true, false) => format!("{} (noise unknown)", p.change.word()),
            (false, _) => format!("ceiling {}", p.change.word()),
        };
        let interval = p.interval.map_or("unknown".into(), |i| format!("{:.3}-{:.3}", i.low, i.high));
        t.row([
            word,
            p.label.clone(),
            format!("{:.2} us", p.old_us),
            format!("{:.2} us", p.new_us),
            format!("{:.3}", p.ratio),
            interval,
            p.rounds.to_string(),
        ]);
    }
    out.push_str(&format!("\n{}", t.render()));
    out.push_str(&render_one_sided(lost));
    out
}

/// Refuses what the run cannot do: a binary that is not an executable file,
/// fewer than two rounds, a bad threshold, an option it sets itself, an
/// output folder that holds files.
fn validate(o: &AbOptions) -> Result<()> {
    for (what, path) in [("OLD", &o.old), ("NEW", &o.new)] {
        if !path.is_file() {
            bail!("bench ab: {what} binary {} is not a file (build it: make build-release)", path.display());
        }
    }
    if o.rounds < 2 {
        bail!("bench ab: --rounds {} is too few: the paired interval needs at least 2 rounds", o.rounds);
    }
    if o.min_rounds < 2 || o.min_rounds > o.rounds {
        bail!("bench ab: --min-rounds {} must be at least 2 and at most --rounds {}", o.min_rounds, o.rounds);
    }
    if !(o.threshold.is_finite() && o.threshold >= 0.0) {
        bail!("bench ab: --threshold must be a finite amount of at least 0, not {}", o.threshold);
    }
    let option_of = |arg: &String| arg.split('=').next().unwrap_or("").to_string();
    if let Some(own) = o.bench_args.iter().map(option_of).find(|a| OWN_OPTIONS.contains(&a.as_str())) {
        bail!("bench ab: {own} is set by bench ab itself for each half; pass only what both builds time");
    }
    if o.out.exists() && std::fs::read_dir(&o.out).map(|mut d| d.next().is_some()).unwrap_or(true) {
        bail!("bench ab: --out {} holds files already; name a new or empty folder", o.out.display());
    }
    Ok(())
}

/// One half of a round: `binary bench --no-baselines ARGS --receipt R --out D`,
/// its output in a log beside the receipt; its records.
fn half(o: &AbOptions, args: &[String], k: usize, build: Build) -> Result<Vec<BenchRecord>> {
    let binary = if build == Build::Old { &o.old } else { &o.new };
    let stem = o.out.join(format!("round{}-{}", k + 1, build.name()));
    let (receipt, log) = (stem.with_extension("json"), stem.with_extension("log"));
    let log_file = std::fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?;
    let status = Command::new(binary)
        .arg("bench")
        .arg("--no-baselines")
        .args(args)
        .arg("--receipt")
        .arg(&receipt)
        .arg("--out")
        .arg(stem.with_extension("report"))
        .stdin(Stdio::null())
        .stdout(log_file.try_clone()?)
        .stderr(log_file)
        .status()
        .with_context(|| format!("starting {}", binary.display()))?;
    if !status.success() {
        bail!(
            "bench ab: round {} of {}: the {} build ({}) exited {status}; its output is in {}",
            k + 1,
            o.rounds,
            build.name(),
            binary.display(),
            log.display()
        );
    }
    records_of(&receipt).with_context(|| format!("round {}: the {} build's receipt", k + 1, build.name()))
}

/// `harness bench ab`: runs the rounds, prints the judgement. Ok(false), the
/// exit status 1, when a record of ours regressed or was timed by one build
/// only; an error (exit 2) when a half could not run, the builds share no
/// record, or the selection holds no record of ours.
pub fn run(o: &AbOptions) -> Result<bool> {
    validate(o)?;
    std::fs::create_dir_all(&o.out).with_context(|| format!("creating {}", o.out.display()))?;
    let started = Instant::now();
    let selection = select(&o.bench_args, &digests_of(&o.old), &digests_of(&o.new));
    println!("bench ab: {}", selection.describe());
    let args: Vec<String> = o.bench_args.iter().cloned().chain(selection.args()).collect();
    let mut rounds = Vec::with_capacity(o.rounds);
    for k in 0..o.rounds {
        let (mut old, mut new) = (Vec::new(), Vec::new());
        for build in order(k) {
            eprintln!(
                "bench ab: round {}/{}: {} build ({:.0} s so far)",
                k + 1,
                o.rounds,
                build.name(),
                started.elapsed().as_secs_f64()
            );
            let records = half(o, &args, k, build)?;
            *(if build == Build::Old { &mut old } else { &mut new }) = records;
        }
        rounds.push((old, new));
        if rounds.len() >= o.min_rounds && rounds.len() < o.rounds {
            if let Some(why) = stop_reason(&pair(&rounds, o.threshold), o.threshold) {
                eprintln!("bench ab: {why} after {} rounds; stopping (--min-rounds)", rounds.len());
                break;
            }
        }
    }
    let paired = pair(&rounds, o.threshold);
    if paired.is_empty() {
        bail!("bench ab: the two builds share no timed record (matched by impl, primitive, op, variant, size, dtype, timing mode)");
    }
    if !paired.iter().any(|p| p.ours) {
        bail!(
            "bench ab: the selection ({}) times no record of ours, only ceilings: it gates nothing",
            if o.bench_args.is_empty() { "every primitive".to_string() } else { o.bench_args.join(" ") }
        );
    }
    let lost = one_sided(&rounds);
    print!("{}", render(&paired, &lost, o.threshold, rounds.len(), o.all));
    println!(
        "bench ab: {} rounds in {:.0} s; receipts and logs in {}",
        rounds.len(),
        started.elapsed().as_secs_f64(),
        o.out.display()
    );
    Ok(lost.is_empty() && !paired.iter().any(|p| p.ours && p.change == Change::Regression))
}

#[cfg(test)]
#[path = "ab_tests.rs"]
mod tests;
