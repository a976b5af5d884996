//! The `details` object of a bench receipt (`receipts/bench.json`, kind
//! "bench"): everything `harness report` needs to redraw the report without
//! a GPU. The receipt's top level holds the kernel-source hash, the command
//! line and the machine (GPU, driver, toolkit, clocks).

use super::baselines::BaselineRun;
use super::config::Protocol;
use super::crossover::CrossoverStudy;
use super::record::{BenchRecord, SkippedEntry};
use super::targets::TargetResult;
use serde::{Deserialize, Serialize};

/// Version of this layout.
pub const DETAILS_SCHEMA: u32 = 1;

/// A primitive this build does not benchmark, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NotWired {
    /// Primitive name.
    pub primitive: String,
    /// Why.
    pub reason: String,
}

/// The receipt's `details`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchDetails {
    /// [`DETAILS_SCHEMA`].
    pub schema: u32,
    /// A `--quick` run.
    pub quick: bool,
    /// log2 of the 1-D sizes.
    pub sizes_log2: Vec<u32>,
    /// `[rows, cols]` of the row primitives.
    pub row_shapes: Vec<[usize; 2]>,
    /// Segment lengths of the float32 segmented sum.
    pub segment_lens: Vec<usize>,
    /// Warm-ups, iterations, per-entry budget.
    pub protocol: Protocol,
    /// The timing method in words.
    pub timing: String,
    /// How each input was generated.
    pub inputs: Vec<(String, String)>,
    /// Every record: primlab, ceilings, cub, torch.
    pub records: Vec<BenchRecord>,
    /// Entries not run, with reasons.
    #[serde(default)]
    pub skipped: Vec<SkippedEntry>,
    /// Primitives this build cannot benchmark.
    #[serde(default)]
    pub not_wired: Vec<NotWired>,
    /// The CUB and PyTorch runs (meta lines, failures, absence reasons).
    #[serde(default)]
    pub baselines: Vec<BaselineRun>,
    /// The speed targets ([`crate::bench::targets::TARGETS`]), evaluated.
    #[serde(default)]
    pub targets: Vec<TargetResult>,
    /// The float atomic crossover study, when it ran.
    #[serde(default)]
    pub crossover: Option<CrossoverStudy>,
    /// Why the crossover study is absent.
    #[serde(default)]
    pub crossover_absent: Option<String>,
    /// Set when a broken CUDA context stopped the run early.
    #[serde(default)]
    pub aborted: Option<String>,
    /// Seconds compiling the kernels (NVRTC), before any timing.
    #[serde(default)]
    pub compile_seconds: f64,
    /// Wall-clock seconds of the whole run.
    #[serde(default)]
    pub wall_seconds: f64,
    /// nvidia-smi's clocks, throttle reasons, temperature and power during
    /// the run (empty in older receipts: not recorded).
    #[serde(default)]
    pub clocks: super::clocks::ClockLog,
}

/// The timing method, as recorded in every receipt.
pub const TIMING_TEXT: &str = "CUDA events (CU_EVENT_DEFAULT) recorded on the Gpu's stream before and after each \
    single plan enqueue; the end event is waited for before the next call, so the GPU is idle when the start event \
    is recorded and the host cost of issuing the call counts (as in cub_bench and torch_bench.py). One checked call \
    first, then the warm-ups, then the timed calls; median (mean of the middle two for an even count), min and max; \
    every call's time kept as a sample, the median's 95 % interval bootstrapped from them (2000 resamples, fixed \
    seed). With --hot, also batches of calls back to back between two events (per call = batch total / calls), \
    recorded as timing mode \"hot\". Plans allocate all scratch before; enqueue only launches and memsets.";
/// A bench receipt of `records` alone, written to `path`, as a `--quick`
/// run at 2^20 would have saved it (the compare and ab tests' receipts).
#[cfg(test)]
pub fn save_synthetic_receipt(records: Vec<BenchRecord>, path: &std::path::Path) {
    let details = BenchDetails {
        schema: DETAILS_SCHEMA,
        quick: true,
        sizes_log2: vec![20],
        row_shapes: vec![],
        segment_lens: vec![],
        protocol: crate::bench::config::Protocol::new(true),
        timing: TIMING_TEXT.into(),
        inputs: vec![],
        records,
        skipped: vec![],
        not_wired: vec![],
        baselines: vec![],
        targets: vec![],
        crossover: None,
        crossover_absent: None,
        aborted: None,
        compile_seconds: 0.0,
        wall_seconds: 0.0,
        clocks: Default::default(),
    };
    let value = serde_json::to_value(&details).expect("details serialise");
    crate::receipts::Receipt::new("bench", crate::receipts::MachineInfo::default(), Default::default(), value)
        .save(path)
        .expect("the receipt is written");
}
