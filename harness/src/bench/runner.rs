//! Runs the registered entries: grouped by size so that each size's inputs
//! are made once and freed before the next, each behind a device-memory
//! guard, a panic guard and a check of the CUDA context afterwards (a broken
//! context skips the rest of the run instead of recording garbage).

use super::config::Protocol;
use super::entries::{Described, Entry, EntryContext, EntryId, Outcome, Registry};
use super::pool::{ensure_device_memory, InputPool};
use super::record::{BenchRecord, SkippedEntry, TimingMode};
use super::timing::{summarize, EventTimer, HotTiming};
use crate::progress::Progress;
use anyhow::Result;
use kernels::Gpu;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What the entries produced.
pub struct EntriesRun {
    /// One record per entry that ran (ok or not).
    pub records: Vec<BenchRecord>,
    /// Entries not run.
    pub skipped: Vec<SkippedEntry>,
    /// Why the run stopped early, if it did.
    pub aborted: Option<String>,
}

/// The record of `id` with `outcome`.
pub fn record_of(id: &EntryId, outcome: Outcome) -> BenchRecord {
    let shape = match id.size {
        super::record::BenchSize::Rows { rows, cols } => Some([rows, cols]),
        super::record::BenchSize::Elements(_) => None,
    };
    let Outcome { described, check, verdict } = outcome;
    let mut record = BenchRecord {
        implementation: id.implementation.to_string(),
        primitive: id.primitive.to_string(),
        op: id.op.clone(),
        variant: id.variant.clone(),
        n: id.size.elements(),
        shape,
        dtype: id.dtype.to_string(),
        median_us: None,
        min_us: None,
        max_us: None,
        iters: 0,
        warmups: 0,
        samples_us: Vec::new(),
        timing_mode: TimingMode::Cold,
        logical_bytes: described.logical_bytes,
        gbps: None,
        ok: false,
        error: None,
        check,
        cache_policy: described.cache_policy,
        timed_region: described.timed_region,
        bytes_moved_estimate: described.bytes_moved_estimate,
        launches: described.launches,
        params: described.params,
        note: None,
        stop_reason: None,
        process: 0,
    };
    match verdict {
        Ok(timing) => {
            record.ok = true;
            record.gbps = Some(described.logical_bytes as f64 / (timing.median_us * 1e3));
            record.median_us = Some(timing.median_us);
            record.min_us = Some(timing.min_us);
            record.max_us = Some(timing.max_us);
            record.iters = timing.iters;
            record.warmups = timing.warmups;
            record.samples_us = timing.samples_us;
            record.note = timing.capped;
            record.stop_reason = Some(timing.stop_reason);
        }
        Err(mismatch) => record.error = Some(format!("{}: wrong result (not timed): {mismatch}", id.label())),
    }
    record
}

/// The records of `id` with `outcome`: the cold record of [`record_of`],
/// then, when the outcome holds a hot timing, its hot record.
pub fn records_of(id: &EntryId, mut outcome: Outcome) -> Vec<BenchRecord> {
    let hot = outcome.verdict.as_mut().ok().and_then(|t| t.hot.take());
    let cold = record_of(id, outcome);
    match hot {
        Some(hot) => {
            let hot = hot_record(&cold, hot);
            vec![cold, hot]
        }
        None => vec![cold],
    }
}

/// The hot record beside `cold`: the same entry, timing mode "hot", its
/// samples the batches' per-call times. No batch: not ok, with the reason.
pub fn hot_record(cold: &BenchRecord, hot: HotTiming) -> BenchRecord {
    // Its batches are planned from the cold count: a fixed count.
    let stop_reason = Some(super::sampling::StopReason::FixedCount);
    let mut record = BenchRecord { timing_mode: TimingMode::Hot, note: None, stop_reason, ..cold.clone() };
    record.timed_region = format!(
        "{} calls back to back between two events, per call = total / {}; each call: {}",
        hot.calls_per_batch, hot.calls_per_batch, cold.timed_region
    );
    match summarize(&hot.samples_us) {
        Some((median, min, max)) => {
            record.median_us = Some(median);
            record.min_us = Some(min);
            record.max_us = Some(max);
            record.gbps = Some(record.logical_bytes as f64 / (median * 1e3));
            record.iters = hot.samples_us.len() * hot.calls_per_batch;
        }
        None => {
            record.ok = false;
            record.median_us = None;
            record.min_us = None;
            record.max_us = None;
            record.gbps = None;
            record.iters = 0;
            record.error = Some(format!("{}: no hot batch was timed", cold.label()));
        }
    }
    record.samples_us = hot.samples_us;
    record
}

/// The record of an entry that failed with `error` before a verdict.
pub fn failure_record(id: &EntryId, error: String) -> BenchRecord {
    let mut record = record_of(
        id,
        Outcome {
            described: Described {
                logical_bytes: 0,
                cache_policy: String::new(),
                timed_region: String::new(),
                bytes_moved_estimate: None,
                launches: None,
                params: serde_json::Value::Null,
            },
            check: String::new(),
            verdict: Err(String::new()),
        },
    );
    record.error = Some(format!("{}: {error}", id.label()));
    record
}

fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic".to_string())
}

/// One-line summary of a record for the progress output.
fn summary(record: &BenchRecord) -> String {
    match (record.median_us, record.gbps) {
        (Some(m), Some(g)) => format!("{} {}: {m:.1} us, {g:.0} GB/s", record.label(), record.size().label()),
        _ => format!("{} {}: FAILED", record.label(), record.size().label()),
    }
}

/// Runs every entry of `registry` on `gpu`.
pub fn run_entries(gpu: &Gpu, registry: Registry, protocol: Protocol, progress: &Progress) -> Result<EntriesRun> {
    let timer = EventTimer::new(gpu)?;
    let Registry { mut entries, mut skipped } = registry;
    // Group by size (stable: registration order within a size) so inputs are made once per size.
    entries.sort_by_key(|e| e.id.size);
    let mut ctx = EntryContext { gpu, timer: &timer, protocol, pool: InputPool::new(gpu) };
    let mut records = Vec::new();
    let mut aborted: Option<String> = None;
    let mut current_size = None;
    for Entry { id, device_bytes, body } in entries {
        if let Some(reason) = &aborted {
            skipped.push(id.skipped(format!("not run: {reason}")));
            progress.step(&format!("{} skipped", id.label()));
            continue;
        }
        if current_size != Some(id.size) {
            ctx.pool.clear();
            if let Err(e) = gpu.synchronize() {
                let reason = format!("the CUDA context failed while freeing the inputs before {} ({e})", id.label());
                progress.println(&format!("ABORT: {reason}"));
                skipped.push(id.skipped(format!("not run: {reason}")));
                aborted = Some(reason);
                progress.step(&format!("{} skipped", id.label()));
                continue;
            }
            current_size = Some(id.size);
        }
        if let Err(e) = ensure_device_memory(gpu, device_bytes, &id.label()) {
            skipped.push(id.skipped(format!("{e:#}")));
            progress.step(&format!("{} skipped (memory)", id.label()));
            continue;
        }
        let result = catch_unwind(AssertUnwindSafe(|| body(&mut ctx)));
        let mut produced = match result {
            Ok(Ok(outcome)) => records_of(&id, outcome),
            Ok(Err(e)) => vec![failure_record(&id, format!("{e:#}"))],
            Err(payload) => vec![failure_record(&id, format!("panicked: {}", panic_text(payload)))],
        };
        // The cold record decides the entry's fate; a hot record rides along.
        let hot = if produced.len() > 1 { produced.pop() } else { None };
        let record = produced.remove(0);
        if !record.ok {
            progress.println(&format!("FAIL {}", record.error.as_deref().unwrap_or("")));
            // A sticky CUDA error makes every later call fail: stop instead of recording noise.
            if let Err(e) = gpu.synchronize() {
                aborted = Some(format!("the CUDA context failed after {} ({e})", id.label()));
                progress.println(&format!("ABORT: {}", aborted.as_deref().unwrap_or("")));
            }
        }
        progress.step(&summary(&record));
        records.push(record);
        records.extend(hot);
    }
    ctx.pool.clear();
    // Free everything before the baselines run; an error here only matters if the context broke.
    let _ = gpu.synchronize();
    Ok(EntriesRun { records, skipped, aborted })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::record::BenchSize;
    use crate::bench::timing::Timing;

    fn id() -> EntryId {
        EntryId::primlab(
            "scan",
            "exclusive_scan_i32_i64",
            "decoupled_lookback",
            BenchSize::Elements(1 << 20),
            "i32->i64",
        )
    }

    fn outcome(verdict: Result<Timing, String>) -> Outcome {
        Outcome {
            described: Described {
                logical_bytes: 12 << 20,
                cache_policy: "rotated".into(),
                timed_region: "one ScanPlan::enqueue".into(),
                bytes_moved_estimate: Some(12 << 20),
                launches: Some(2),
                params: serde_json::json!({}),
            },
            check: "every prefix".into(),
            verdict,
        }
    }

    #[test]
    fn a_timed_outcome_becomes_an_ok_record_with_gbps() {
        let timing = Timing {
            median_us: 10.0,
            min_us: 9.0,
            max_us: 12.0,
            iters: 3,
            warmups: 3,
            capped: None,
            samples_us: vec![9.0, 10.0, 12.0],
            hot: None,
            stop_reason: crate::bench::sampling::StopReason::FixedCount,
        };
        let records = records_of(&id(), outcome(Ok(timing)));
        assert_eq!(records.len(), 1);
        let record = &records[0];
        assert!(record.ok);
        assert_eq!(record.median_us, Some(10.0));
        assert_eq!(record.samples_us, vec![9.0, 10.0, 12.0]);
        assert_eq!(record.timing_mode, TimingMode::Cold);
        assert!((record.gbps.unwrap() - (12u64 << 20) as f64 / 1e4).abs() < 1e-9);
    }

    #[test]
    fn a_hot_timing_adds_a_hot_record_beside_the_cold_one() {
        let hot = HotTiming { samples_us: vec![4.0, 5.0, 6.0], calls_per_batch: 20 };
        let timing = Timing {
            median_us: 10.0,
            min_us: 9.0,
            max_us: 12.0,
            iters: 60,
            warmups: 3,
            capped: None,
            samples_us: vec![10.0; 60],
            hot: Some(hot),
            stop_reason: crate::bench::sampling::StopReason::FixedCount,
        };
        let records = records_of(&id(), outcome(Ok(timing)));
        assert_eq!(records.len(), 2);
        let (cold, hot) = (&records[0], &records[1]);
        assert_eq!((cold.timing_mode, hot.timing_mode), (TimingMode::Cold, TimingMode::Hot));
        assert_eq!((hot.median_us, hot.min_us, hot.max_us), (Some(5.0), Some(4.0), Some(6.0)));
        assert_eq!(hot.iters, 60);
        assert!(hot.timed_region.starts_with("20 calls back to back"), "{}", hot.timed_region);
        let empty = hot_record(cold, HotTiming { samples_us: vec![], calls_per_batch: 0 });
        assert!(!empty.ok && empty.error.unwrap().contains("no hot batch"));
    }

    #[test]
    fn a_wrong_result_is_not_ok_and_names_the_entry() {
        let record = record_of(&id(), outcome(Err("first mismatch at index 5".into())));
        assert!(!record.ok);
        assert_eq!(record.median_us, None);
        let error = record.error.unwrap();
        assert!(error.contains("scan/decoupled_lookback exclusive_scan_i32_i64 2^20"), "{error}");
        assert!(error.contains("index 5"));
        let failed = failure_record(&id(), "CUDA driver error".into());
        assert!(!failed.ok && failed.error.unwrap().contains("2^20: CUDA driver error"));
    }
}
