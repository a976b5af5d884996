//! What one `harness bench` run covers and how it times: sizes, shapes,
//! iteration counts and the per-entry time budget, from the command line.

use super::export;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// log2 of the sizes of a full run: 2^10, 2^12, ..., 2^28.
pub const FULL_SIZES_LOG2: [u32; 10] = [10, 12, 14, 16, 18, 20, 22, 24, 26, 28];
/// log2 of the sizes of a `--quick` run (the baselines' `--quick` sizes).
pub const QUICK_SIZES_LOG2: [u32; 5] = [10, 16, 20, 24, 28];
/// Softmax (and per-row argmax) shapes `[rows, cols]`, the baselines' defaults.
pub const ROW_SHAPES: [(usize, usize); 5] = [(4096, 1024), (4096, 4096), (8192, 32000), (1024, 131_072), (65536, 33)];
/// Top-k's decoder batch sizes and vocabularies (`[1, 8, 64, 256] x [32000, 128256, 256000]`),
/// a full run's top-k row shapes (the PyTorch baseline's `DEFAULT_TOPK_SHAPES`).
pub const TOPK_ROWS: [usize; 4] = [1, 8, 64, 256];
pub const TOPK_COLS: [usize; 3] = [32_000, 128_256, 256_000];
/// Top-k's k of a full run (the baseline's `DEFAULT_TOPK_KS`).
pub const TOPK_KS: [usize; 4] = [1, 50, 256, 2048];
/// A `--quick` run's top-k row shapes and k (the baseline's `QUICK_TOPK_SHAPES`, `QUICK_TOPK_KS`).
pub const TOPK_QUICK_SHAPES: [(usize, usize); 2] = [(1, 32_000), (64, 128_256)];
pub const TOPK_QUICK_KS: [usize; 2] = [1, 2048];
/// The segment length every run measures (the targets' and the anchors' 1024).
pub const MAIN_SEGMENT_LEN: usize = 1024;
/// Further segment lengths of a full run (float32 sums only): a warp's and a
/// multi-block schedule's home ground.
pub const EXTRA_SEGMENT_LENS: [usize; 2] = [32, 65536];
/// Bins of the histogram: unit bins over [-9, 10), one per input value (the
/// baselines' definition: `bins` bins of width 1 over [-9, -9 + bins)).
pub const HISTOGRAM_BINS: usize = 19;
/// From this many elements on, a record gets the smaller iteration count.
pub const LARGE_ELEMENTS: usize = 1 << 24;

/// The timing protocol, identical to the baselines' (see scripts/baselines/README.md).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Protocol {
    /// Untimed calls after the check run and before the timed ones.
    pub warmups: usize,
    /// Timed calls when the entry has fewer than 2^24 elements.
    pub iters_small: usize,
    /// Timed calls from 2^24 elements on.
    pub iters_large: usize,
    /// An entry whose warm-up calls show that the timed calls would take
    /// longer than this gets fewer timed calls (never fewer than
    /// `min_iters`); its record says so. Only the one-thread serial
    /// baselines and the one-atomic-per-element sum come near it.
    pub entry_budget_s: f64,
    /// The fewest timed calls a capped entry gets.
    pub min_iters: usize,
    /// Whether each entry is also timed back to back (`--hot`), as a second
    /// record of timing mode "hot". Absent in older receipts: cold only.
    #[serde(default)]
    pub hot: bool,
    /// `--min-samples`: the fewest timed calls of an adaptive record (absent: the default of
    /// `sampling::StopRule::new`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_samples: Option<usize>,
    /// `--max-noise`: stop a record's timed calls once its median's 95 % interval half width is
    /// at most this fraction of the median (absent: no noise target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_noise: Option<f64>,
    /// `--max-time`: stop a record's timed calls after this many seconds, once the minimum is
    /// taken (absent: no limit beyond `entry_budget_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_time_s: Option<f64>,
}

impl Protocol {
    /// The fields every fixed-count protocol shares: cold only, no adaptive sampling.
    const FIXED: Protocol = Protocol {
        warmups: 0,
        iters_small: 0,
        iters_large: 0,
        entry_budget_s: 0.0,
        min_iters: 0,
        hot: false,
        min_samples: None,
        max_noise: None,
        max_time_s: None,
    };

    /// The protocol of a full run (`quick = false`) or a `--quick` one.
    pub fn new(quick: bool) -> Protocol {
        if quick {
            Protocol { warmups: 3, iters_small: 20, iters_large: 10, entry_budget_s: 1.5, min_iters: 5, ..Self::FIXED }
        } else {
            Protocol {
                warmups: 5,
                iters_small: 200,
                iters_large: 30,
                entry_budget_s: 5.0,
                min_iters: 10,
                ..Self::FIXED
            }
        }
    }

    /// The stopping rule of a record allowed `max_samples` timed calls (after the budget cap).
    pub fn stop_rule(&self, max_samples: usize) -> super::sampling::StopRule {
        super::sampling::StopRule::new(max_samples, self.min_samples, self.max_noise, self.max_time_s)
    }

    /// Whether a record's count adapts to its noise (`--max-noise` or `--max-time`).
    pub fn adaptive(&self) -> bool {
        self.max_noise.is_some() || self.max_time_s.is_some()
    }

    /// The most timed calls for an entry of `elements` elements, before any
    /// budget cap: the protocol's count, times the adaptive ceiling when the
    /// count adapts.
    pub fn most_for(&self, elements: usize) -> usize {
        let factor = if self.adaptive() { super::sampling::ADAPTIVE_CEILING_FACTOR } else { 1 };
        self.iters_for(elements) * factor
    }

    /// Timed calls for an entry of `elements` elements, before any budget cap.
    pub fn iters_for(&self, elements: usize) -> usize {
        if elements >= LARGE_ELEMENTS {
            self.iters_large
        } else {
            self.iters_small
        }
    }
}

/// Everything a run needs to know, derived from [`BenchOptions`].
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// A `--quick` run.
    pub quick: bool,
    /// log2 of every 1-D size.
    pub sizes_log2: Vec<u32>,
    /// `[rows, cols]` of the row primitives.
    pub row_shapes: Vec<(usize, usize)>,
    /// Segment lengths of the float32 segmented sum (the first is 1024).
    pub segment_lens: Vec<usize>,
    /// The timing protocol.
    pub protocol: Protocol,
    /// Primitive filter (empty: every primitive).
    pub primitives: Vec<String>,
    /// Whether the float atomic crossover study runs.
    pub crossover: bool,
    /// Whether CUB and PyTorch run.
    pub baselines: bool,
    /// The `--sizes`, `--shape` and `--variant` selection.
    pub selection: super::select::Selection,
}

impl BenchConfig {
    /// The run `args` asks for. A full run always includes the crossover
    /// study; a `--quick` one only with `--crossover`.
    pub fn from_args(args: &BenchOptions) -> BenchConfig {
        let default_sizes = if args.quick { QUICK_SIZES_LOG2.to_vec() } else { FULL_SIZES_LOG2.to_vec() };
        let mut selected_sizes = args.sizes.clone();
        selected_sizes.sort_unstable();
        selected_sizes.dedup();
        let sizes_log2 = if selected_sizes.is_empty() { default_sizes } else { selected_sizes.clone() };
        let row_shapes = if args.shapes.is_empty() { ROW_SHAPES.to_vec() } else { args.shapes.clone() };
        let mut segment_lens = vec![MAIN_SEGMENT_LEN];
        if !args.quick {
            segment_lens.extend(EXTRA_SEGMENT_LENS);
        }
        BenchConfig {
            quick: args.quick,
            sizes_log2,
            row_shapes,
            segment_lens,
            protocol: sampling_of(args),
            primitives: args.primitives.iter().map(|p| p.name().to_string()).collect(),
            crossover: args.crossover || (!args.quick && args.primitives.is_empty()),
            baselines: !args.no_baselines,
            selection: super::select::Selection {
                sizes_log2: selected_sizes,
                shapes: args.shapes.clone(),
                variants: args.variants.clone(),
            },
        }
    }

    /// Every 1-D size n = 2^k of the run.
    pub fn sizes(&self) -> Vec<usize> {
        self.sizes_log2.iter().map(|&k| 1usize << k).collect()
    }

    /// Top-k's (and its sampler's) row shapes: the `--shape` values when given (so that a
    /// run narrowed to one shape times top-k there, and its baseline too), else the decoder
    /// shapes of a full or a `--quick` run.
    pub fn topk_shapes(&self) -> Vec<(usize, usize)> {
        if !self.selection.shapes.is_empty() {
            self.selection.shapes.clone()
        } else if self.quick {
            TOPK_QUICK_SHAPES.to_vec()
        } else {
            TOPK_ROWS.iter().flat_map(|&r| TOPK_COLS.map(|c| (r, c))).collect()
        }
    }

    /// Top-k's k of the run.
    pub fn topk_ks(&self) -> &'static [usize] {
        if self.quick {
            &TOPK_QUICK_KS
        } else {
            &TOPK_KS
        }
    }

    /// Whether `primitive` is selected (no filter selects all).
    pub fn wants(&self, primitive: &str) -> bool {
        self.primitives.is_empty() || self.primitives.iter().any(|p| p == primitive)
    }
}

/// The protocol `args` asks for. A full run samples adaptively by default
/// (a noise target of [`super::sampling::DEFAULT_MAX_NOISE`] and a time limit of
/// [`super::sampling::DEFAULT_MAX_TIME_S`] per record, each replaced by its
/// option); `--fixed-count` and `--quick` keep the fixed count unless an
/// adaptive option is given.
fn sampling_of(args: &BenchOptions) -> Protocol {
    let defaults = !args.quick && !args.fixed_count;
    let or_default = |given: Option<f64>, default: f64| given.or(defaults.then_some(default));
    Protocol {
        hot: args.hot,
        min_samples: args.min_samples,
        max_noise: or_default(args.max_noise, super::sampling::DEFAULT_MAX_NOISE),
        max_time_s: or_default(args.max_time, super::sampling::DEFAULT_MAX_TIME_S),
        ..Protocol::new(args.quick)
    }
}

/// What a bench run does: `harness bench`'s options, as plain values.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// A short run: n = 2^10, 2^16, 2^20, 2^24, 2^28, 3 warm-ups and 20 / 10 timed calls,
    /// baselines with --quick (under 2 minutes on an H200).
    pub quick: bool,
    /// Only these primitives (repeatable; the ceilings always run).
    pub primitives: Vec<crate::registry::Primitive>,
    /// Directory of the CUB/PyTorch baseline programs.
    pub baselines: PathBuf,
    /// Skip the CUB and PyTorch baselines (the report says so).
    pub no_baselines: bool,
    /// Receipt path (default: receipts/bench.json for a full run, receipts/partial/bench.json
    /// for a partial one: --quick, --primitive or --no-baselines; a partial run is refused
    /// receipts/bench.json and never replaces a full run's receipt).
    pub receipt: Option<PathBuf>,
    /// Run the float atomic crossover study (always part of a full run; with
    /// --quick or --primitive only when asked).
    pub crossover: bool,
    /// Directory of the Markdown report and PNG plots written after the run (default:
    /// receipts/report for a full run, receipts/partial/report for a partial one).
    /// (`--report` is the old spelling, kept for one release with a warning.)
    pub report: Option<PathBuf>,
    /// Only these 1-D sizes, comma separated element counts, powers of two up to 2^30 (2^20 or
    /// 1048576). A bare number below 64 is the old spelling, a log2 exponent (20 = 2^20), kept
    /// for one release with a warning. Given alone, the row entries are left out. Makes the run
    /// partial.
    pub sizes: Vec<u32>,
    /// Only this variant (repeatable; the ceilings always run). Makes the run partial.
    pub variants: Vec<String>,
    /// Only this row shape of the row primitives, ROWSxCOLS (repeatable). Given alone, the
    /// 1-D entries are left out. Makes the run partial.
    pub shapes: Vec<(usize, usize)>,
    /// Also time every entry back to back (batches of calls between two events, per call =
    /// total / calls), recorded beside the cold per-call timing as timing mode "hot".
    pub hot: bool,
    /// Adaptive sampling: the fewest timed calls of a record (default 20 when --max-noise or
    /// --max-time is given, capped at the protocol's count).
    pub min_samples: Option<usize>,
    /// Adaptive sampling: stop a record once its median's 95 % interval is within this much of
    /// the median (3% or 0.03: the "±" of the report); at most twice the protocol's count of calls.
    pub max_noise: Option<f64>,
    /// Adaptive sampling: stop a record's timed calls after this many seconds (once the
    /// minimum is taken). Each record says why it stopped.
    pub max_time: Option<f64>,
    /// Time a fixed count per record (the protocol's), not adaptively: a full
    /// run's default is adaptive.
    pub fixed_count: bool,
    /// Also write every record as CSV (one row each) to this path.
    pub csv: Option<PathBuf>,
    /// What stdout carries: text, or one JSON summary of every record (messages go to stderr).
    pub format: export::OutputFormat,
}

impl Default for BenchOptions {
    /// The options of a plain `harness bench` (a full run).
    fn default() -> BenchOptions {
        BenchOptions {
            quick: false,
            primitives: Vec::new(),
            baselines: "scripts/baselines".into(),
            no_baselines: false,
            receipt: None,
            crossover: false,
            report: None,
            sizes: Vec::new(),
            variants: Vec::new(),
            shapes: Vec::new(),
            hot: false,
            min_samples: None,
            max_noise: None,
            max_time: None,
            fixed_count: false,
            csv: None,
            format: export::OutputFormat::Text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(quick: bool) -> BenchOptions {
        BenchOptions { quick, ..BenchOptions::default() }
    }

    #[test]
    fn a_full_run_samples_adaptively_by_default_and_a_quick_or_fixed_one_does_not() {
        use crate::bench::sampling::{ADAPTIVE_CEILING_FACTOR, DEFAULT_MAX_NOISE, DEFAULT_MAX_TIME_S};
        let full = BenchConfig::from_args(&args(false)).protocol;
        assert_eq!((full.max_noise, full.max_time_s), (Some(DEFAULT_MAX_NOISE), Some(DEFAULT_MAX_TIME_S)));
        assert_eq!(full.most_for(1 << 20), 200 * ADAPTIVE_CEILING_FACTOR);
        assert_eq!(full.most_for(1 << 28), 30 * ADAPTIVE_CEILING_FACTOR);
        let fixed = BenchConfig::from_args(&BenchOptions { fixed_count: true, ..args(false) }).protocol;
        assert!(!fixed.adaptive());
        assert_eq!(fixed.most_for(1 << 20), 200);
        let quick = BenchConfig::from_args(&args(true)).protocol;
        assert!(!quick.adaptive());
        assert_eq!(quick.most_for(1 << 28), 10);
        // A given option replaces its default and leaves the other's.
        let given = BenchConfig::from_args(&BenchOptions { max_noise: Some(0.02), ..args(false) }).protocol;
        assert_eq!((given.max_noise, given.max_time_s), (Some(0.02), Some(DEFAULT_MAX_TIME_S)));
        let quick_given = BenchConfig::from_args(&BenchOptions { max_time: Some(1.0), ..args(true) }).protocol;
        assert_eq!(
            (quick_given.max_noise, quick_given.max_time_s, quick_given.most_for(1 << 20)),
            (None, Some(1.0), 40)
        );
    }

    #[test]
    fn the_protocol_matches_the_baselines() {
        let full = Protocol::new(false);
        assert_eq!((full.warmups, full.iters_for(1 << 23), full.iters_for(1 << 24)), (5, 200, 30));
        let quick = Protocol::new(true);
        assert_eq!((quick.warmups, quick.iters_for(1 << 20), quick.iters_for(1 << 28)), (3, 20, 10));
    }

    #[test]
    fn quick_runs_the_baselines_quick_sizes_and_no_crossover_unless_asked() {
        let quick = BenchConfig::from_args(&args(true));
        assert_eq!(quick.sizes(), vec![1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 28]);
        assert!(!quick.crossover);
        assert_eq!(quick.segment_lens, vec![1024]);
        let full = BenchConfig::from_args(&args(false));
        assert_eq!(full.sizes().len(), 10);
        assert!(full.crossover);
    }

    #[test]
    fn topk_runs_at_the_given_shapes_else_the_decoder_ones() {
        let quick = BenchConfig::from_args(&args(true));
        assert_eq!((quick.topk_shapes(), quick.topk_ks()), (vec![(1, 32_000), (64, 128_256)], &[1, 2048][..]));
        let full = BenchConfig::from_args(&args(false));
        assert_eq!(full.topk_shapes().len(), 12);
        assert!(full.topk_shapes().contains(&(256, 256_000)) && full.topk_shapes().contains(&(8, 128_256)));
        assert_eq!(full.topk_ks(), &[1, 50, 256, 2048]);
        // `--shape` replaces them: a run narrowed to [1, 128256] times top-k there alone.
        let one = BenchConfig::from_args(&BenchOptions { shapes: vec![(1, 128_256)], ..args(true) });
        assert_eq!((one.topk_shapes(), one.topk_ks()), (vec![(1, 128_256)], &[1, 2048][..]));
    }

    #[test]
    fn topk_defaults_are_the_torch_baselines() {
        let script =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/baselines/torch_bench.py"))
                .expect("the PyTorch baseline script");
        let tuple = |(r, c): &(usize, usize)| format!("({r}, {c})");
        let join = |v: &[usize]| v.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", ");
        let lines = [
            format!("DEFAULT_TOPK_SHAPES = [(r, c) for r in ({}) for c in ({})]", join(&TOPK_ROWS), join(&TOPK_COLS)),
            format!("QUICK_TOPK_SHAPES = [{}]", TOPK_QUICK_SHAPES.iter().map(tuple).collect::<Vec<_>>().join(", ")),
            format!("DEFAULT_TOPK_KS = [{}]", join(&TOPK_KS)),
            format!("QUICK_TOPK_KS = [{}]", join(&TOPK_QUICK_KS)),
        ];
        for line in lines {
            assert!(script.lines().any(|l| l.trim() == line), "torch_bench.py lacks `{line}`");
        }
    }
}
