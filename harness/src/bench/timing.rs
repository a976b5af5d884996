//! Timing exactly like the baselines ("cold"): a CUDA event recorded before
//! and one after each single call on the same stream, waiting for the end
//! event before the next call (so the GPU is idle when the start event is
//! recorded and the host cost of issuing the call counts), warm-ups first,
//! then the median, min and max of many calls, every per-call sample kept.
//!
//! With `--hot` each entry is also timed back to back ("hot"): batches of
//! calls enqueued one after the other between two events, with no wait in
//! between, so launch latency overlaps the previous call; a batch's
//! per-call time is its total divided by its call count.

use super::config::Protocol;
use anyhow::{Context, Result};
use cudarc::driver::{sys::CUevent_flags, CudaEvent};
use kernels::{Gpu, GpuResult};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// The two timing events (created once per run, with timing enabled).
pub struct EventTimer {
    start: CudaEvent,
    end: CudaEvent,
}

impl EventTimer {
    /// Creates the events in `gpu`'s context. `CU_EVENT_DEFAULT`: cudarc's
    /// `new_event(None)` would disable timing.
    pub fn new(gpu: &Gpu) -> Result<EventTimer> {
        let ctx = gpu.context();
        let start = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).context("creating the start event")?;
        let end = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).context("creating the end event")?;
        Ok(EventTimer { start, end })
    }

    /// Times one call: records the start event, calls `enqueue`, records the
    /// end event, waits for it, and returns the elapsed microseconds.
    pub fn time_one(&self, gpu: &Gpu, enqueue: impl FnOnce() -> GpuResult<()>) -> Result<f64> {
        let stream = gpu.stream();
        self.start.record(stream).context("recording the start event")?;
        enqueue()?;
        self.end.record(stream).context("recording the end event")?;
        // elapsed_ms synchronises both events.
        let ms = self.start.elapsed_ms(&self.end).context("waiting for the end event")?;
        Ok(f64::from(ms) * 1000.0)
    }

    /// Times `calls` calls back to back: records the start event, calls
    /// `enqueue` `calls` times without waiting, records the end event, waits
    /// for it, and returns the per-call microseconds ([`per_call_us`]).
    pub fn time_batch(&self, gpu: &Gpu, calls: usize, mut enqueue: impl FnMut() -> GpuResult<()>) -> Result<f64> {
        let stream = gpu.stream();
        self.start.record(stream).context("recording the start event")?;
        for _ in 0..calls {
            enqueue()?;
        }
        self.end.record(stream).context("recording the end event")?;
        let ms = self.start.elapsed_ms(&self.end).context("waiting for the end event")?;
        Ok(per_call_us(ms, calls))
    }
}

/// Median, min and max of the timed calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// Median in microseconds (the mean of the two middle values for an even count).
    pub median_us: f64,
    /// Fastest call.
    pub min_us: f64,
    /// Slowest call.
    pub max_us: f64,
    /// Timed calls.
    pub iters: usize,
    /// Warm-up calls before them.
    pub warmups: usize,
    /// Set when the time budget lowered the number of timed calls.
    pub capped: Option<String>,
    /// Every timed call, microseconds, in the order timed.
    pub samples_us: Vec<f64>,
    /// The back-to-back timing, when the protocol asks for it.
    pub hot: Option<HotTiming>,
    /// Why the timed calls stopped.
    pub stop_reason: super::sampling::StopReason,
}

/// Back-to-back timing of one entry: `batches` batches of `calls_per_batch`
/// calls, each batch between two events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HotTiming {
    /// Per-call microseconds of each batch (batch total / calls per batch).
    pub samples_us: Vec<f64>,
    /// Calls enqueued between the two events of one batch.
    pub calls_per_batch: usize,
}

/// Most batches of a hot timing (each one sample of its per-call time).
pub const HOT_BATCHES: usize = 10;

/// How a hot timing of `iters` calls is split: (batches, calls per batch).
/// It spends no more calls than the cold timing (`batches x calls <= iters`,
/// so the per-entry budget holds), with up to [`HOT_BATCHES`] batches and
/// at least one call per batch; `iters = 0` gives no batch.
pub fn hot_plan(iters: usize) -> (usize, usize) {
    if iters == 0 {
        return (0, 0);
    }
    let batches = iters.min(HOT_BATCHES);
    (batches, iters / batches)
}

/// Per-call microseconds of a batch of `calls` calls that took `total_ms`
/// between its events (`calls > 0`).
pub fn per_call_us(total_ms: f32, calls: usize) -> f64 {
    f64::from(total_ms) * 1000.0 / calls as f64
}

/// Median (mean of the middle two for an even count), min and max, or
/// `None` for no samples.
pub fn summarize(samples_us: &[f64]) -> Option<(f64, f64, f64)> {
    if samples_us.is_empty() {
        return None;
    }
    let mut sorted = samples_us.to_vec();
    sorted.sort_by(f64::total_cmp);
    let m = sorted.len();
    let median = if m % 2 == 1 { sorted[m / 2] } else { 0.5 * (sorted[m / 2 - 1] + sorted[m / 2]) };
    Some((median, sorted[0], sorted[m - 1]))
}

/// How many timed calls fit the budget when one call takes `per_call_s`:
/// the protocol's count, lowered to what fits the budget but not below
/// `min_iters`; and a note when lowered.
pub fn capped_iters(protocol: &Protocol, elements: usize, per_call_s: f64) -> (usize, Option<String>) {
    let wanted = protocol.most_for(elements);
    if per_call_s.is_nan() || per_call_s <= 0.0 || per_call_s * wanted as f64 <= protocol.entry_budget_s {
        return (wanted, None);
    }
    let fit = (protocol.entry_budget_s / per_call_s).floor() as usize;
    let iters = fit.clamp(protocol.min_iters, wanted);
    if iters == wanted {
        return (wanted, None);
    }
    let note = format!(
        "{iters} timed calls instead of {wanted}: one call takes {:.1} ms and the per-entry budget is {:.0} s",
        per_call_s * 1000.0,
        protocol.entry_budget_s
    );
    (iters, Some(note))
}

/// Runs the warm-ups, then times calls of `enqueue` (each one call of a
/// plan, reading the next rotated input) per the protocol. The caller has
/// already run and checked one call.
pub fn measure(
    gpu: &Gpu,
    timer: &EventTimer,
    protocol: &Protocol,
    elements: usize,
    mut enqueue: impl FnMut() -> GpuResult<()>,
) -> Result<Timing> {
    let started = Instant::now();
    for _ in 0..protocol.warmups {
        enqueue()?;
    }
    gpu.synchronize()?;
    let per_call_s = started.elapsed().as_secs_f64() / protocol.warmups.max(1) as f64;
    let (most, capped) = capped_iters(protocol, elements, per_call_s);
    // The stopping rule (sampling.rs) is asked after every call; a fixed
    // protocol stops at `most`, as before.
    let rule = protocol.stop_rule(most);
    let mut samples = Vec::with_capacity(most);
    let timing_started = Instant::now();
    let stop_reason = loop {
        samples.push(timer.time_one(gpu, &mut enqueue)?);
        if let Some(reason) = super::sampling::next_step(&rule, &samples, timing_started.elapsed().as_secs_f64()) {
            break reason;
        }
    };
    let iters = samples.len();
    let (median_us, min_us, max_us) = summarize(&samples).context("no timed call")?;
    let hot = if protocol.hot { Some(measure_hot(gpu, timer, iters, &mut enqueue)?) } else { None };
    let warmups = protocol.warmups;
    Ok(Timing { median_us, min_us, max_us, iters, warmups, capped, samples_us: samples, hot, stop_reason })
}

/// The hot timing after the cold one (the warm-ups already ran): the
/// batches of [`hot_plan`]`(iters)`, the GPU drained before the first.
fn measure_hot(
    gpu: &Gpu,
    timer: &EventTimer,
    iters: usize,
    mut enqueue: impl FnMut() -> GpuResult<()>,
) -> Result<HotTiming> {
    let (batches, calls_per_batch) = hot_plan(iters);
    gpu.synchronize()?;
    let mut samples_us = Vec::with_capacity(batches);
    for _ in 0..batches {
        samples_us.push(timer.time_batch(gpu, calls_per_batch, &mut enqueue)?);
    }
    Ok(HotTiming { samples_us, calls_per_batch })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(summarize(&[3.0, 1.0, 2.0]), Some((2.0, 1.0, 3.0)));
        assert_eq!(summarize(&[4.0, 1.0, 2.0, 3.0]), Some((2.5, 1.0, 4.0)));
        assert_eq!(summarize(&[]), None);
    }

    #[test]
    fn the_budget_caps_only_slow_entries() {
        let quick = Protocol::new(true);
        assert_eq!(capped_iters(&quick, 1 << 20, 1e-5), (20, None));
        let (iters, note) = capped_iters(&quick, 1 << 20, 0.2);
        assert_eq!(iters, 7);
        assert!(note.unwrap().contains("7 timed calls instead of 20"));
        // Never below the minimum.
        assert_eq!(capped_iters(&quick, 1 << 20, 10.0).0, quick.min_iters);
    }

    #[test]
    fn hot_batches_never_spend_more_calls_than_the_cold_timing() {
        assert_eq!(hot_plan(200), (10, 20));
        assert_eq!(hot_plan(30), (10, 3));
        assert_eq!(hot_plan(25), (10, 2));
        assert_eq!(hot_plan(5), (5, 1));
        assert_eq!(hot_plan(0), (0, 0));
        for iters in 1..500 {
            let (batches, calls) = hot_plan(iters);
            assert!(batches * calls <= iters && batches >= 1 && calls >= 1, "{iters}");
        }
    }

    #[test]
    fn a_batch_total_divides_into_per_call_microseconds() {
        // 20 calls in 0.5 ms: 25 us each.
        assert!((per_call_us(0.5, 20) - 25.0).abs() < 1e-9);
        assert!((per_call_us(3.0, 1) - 3000.0).abs() < 1e-9);
    }
}
