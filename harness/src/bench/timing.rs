//! Timing exactly like the baselines: a CUDA event recorded before and one
//! after each single call on the same stream, waiting for the end event
//! before the next call (so the GPU is idle when the start event is
//! recorded and the host cost of issuing the call counts), warm-ups first,
//! then the median, min and max of many calls.

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
    let wanted = protocol.iters_for(elements);
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
    let (iters, capped) = capped_iters(protocol, elements, per_call_s);
    let mut samples = Vec::with_capacity(iters);
    for _ in 0..iters {
        samples.push(timer.time_one(gpu, &mut enqueue)?);
    }
    let (median_us, min_us, max_us) = summarize(&samples).context("no timed call")?;
    Ok(Timing { median_us, min_us, max_us, iters, warmups: protocol.warmups, capped })
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
}
