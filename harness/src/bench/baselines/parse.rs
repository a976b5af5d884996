//! Reading the baselines' JSON Lines: the meta line, `"unavailable"`
//! (torch), timed records (kept as [`BenchRecord`]s under the shared op
//! names) and failed records (kept with their error text, never timed).

use crate::bench::ops::map_baseline_op;
use crate::bench::record::BenchRecord;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A baseline record whose check failed (or that raised).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailedBaselineRecord {
    /// The baseline's op name.
    pub op: String,
    /// Elements.
    pub n: u64,
    /// `[rows, cols]` of row ops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<[usize; 2]>,
    /// The baseline's error text.
    pub error: String,
}

/// Everything one JSONL file held.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParsedBaseline {
    /// The meta line's `meta` object.
    pub meta: Option<Value>,
    /// torch's `"unavailable"` reason.
    pub unavailable: Option<String>,
    /// Timed records.
    pub records: Vec<BenchRecord>,
    /// Records with `"ok": false`.
    pub failed: Vec<FailedBaselineRecord>,
    /// Lines that were not JSON objects (e.g. a write cut short), with their number.
    pub unreadable_lines: Vec<usize>,
}

fn f64_of(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

fn shape_of(v: &Value) -> Option<[usize; 2]> {
    let a = v.get("shape")?.as_array()?;
    match a.as_slice() {
        [r, c] => Some([r.as_u64()? as usize, c.as_u64()? as usize]),
        _ => None,
    }
}

/// The optional `samples_us` array (every timed call, microseconds); empty
/// when absent or when any entry is not a number (then the noise is unknown
/// rather than computed from part of the calls).
fn samples_of(v: &Value) -> Vec<f64> {
    let Some(values) = v.get("samples_us").and_then(Value::as_array) else { return Vec::new() };
    values.iter().map(Value::as_f64).collect::<Option<Vec<f64>>>().unwrap_or_default()
}

/// One record line as a [`BenchRecord`] of `implementation`.
fn record_of(v: &Value, implementation: &str, op: &str) -> BenchRecord {
    let params = v.get("params").cloned().unwrap_or(Value::Null);
    let (primitive, shared_op, dtype) = match map_baseline_op(op, &params) {
        Some(m) => (m.primitive.to_string(), m.op, m.dtype.to_string()),
        None => ("other".to_string(), op.to_string(), String::new()),
    };
    let text = |key: &str| v.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    BenchRecord {
        implementation: implementation.to_string(),
        primitive,
        op: shared_op,
        variant: op.to_string(),
        n: v.get("n").and_then(Value::as_u64).unwrap_or(0) as usize,
        shape: shape_of(v),
        dtype,
        median_us: f64_of(v, "median_us"),
        min_us: f64_of(v, "min_us"),
        max_us: f64_of(v, "max_us"),
        iters: v.get("iters").and_then(Value::as_u64).unwrap_or(0) as usize,
        warmups: v.get("warmups").and_then(Value::as_u64).unwrap_or(0) as usize,
        samples_us: samples_of(v),
        timing_mode: crate::bench::record::TimingMode::Cold,
        logical_bytes: f64_of(v, "logical_bytes").unwrap_or(0.0).round() as u64,
        gbps: f64_of(v, "gbps"),
        ok: true,
        error: None,
        check: text("check"),
        cache_policy: text("cache_policy"),
        timed_region: text("timed_region"),
        bytes_moved_estimate: None,
        launches: None,
        params,
        note: None,
        stop_reason: None,
        process: 0,
    }
}

/// Parses the JSONL text written by `cub_bench` or `torch_bench.py`.
pub fn parse_jsonl(text: &str, implementation: &str) -> ParsedBaseline {
    let mut parsed = ParsedBaseline::default();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            parsed.unreadable_lines.push(number + 1);
            continue;
        };
        if !v.is_object() {
            parsed.unreadable_lines.push(number + 1);
            continue;
        }
        if let Some(meta) = v.get("meta") {
            parsed.meta = Some(meta.clone());
            continue;
        }
        if let Some(reason) = v.get("unavailable") {
            parsed.unavailable = Some(reason.as_str().map(str::to_string).unwrap_or_else(|| reason.to_string()));
            continue;
        }
        let Some(op) = v.get("op").and_then(Value::as_str) else {
            parsed.unreadable_lines.push(number + 1);
            continue;
        };
        let ok = v.get("ok").and_then(Value::as_bool).unwrap_or(false);
        let median_ok = f64_of(&v, "median_us").is_some_and(|m| m > 0.0);
        if !ok || !median_ok {
            let error = v.get("error").and_then(Value::as_str).map(str::to_string).unwrap_or_else(|| {
                if ok {
                    "no median_us in the record".into()
                } else {
                    "ok: false".into()
                }
            });
            parsed.failed.push(FailedBaselineRecord {
                op: op.to_string(),
                n: v.get("n").and_then(Value::as_u64).unwrap_or(0),
                shape: shape_of(&v),
                error,
            });
            continue;
        }
        parsed.records.push(record_of(&v, implementation, op));
    }
    parsed
}

#[cfg(test)]
mod tests {
    use super::*;

    const CUB: &str = r#"{"impl":"cub","meta":{"gpu":"NVIDIA H200","cc":"9.0","quick":true}}
{"impl":"cub","op":"cub_exclusive_scan_i32_i64","n":268435456,"median_us":1069.0,"min_us":1060.0,"max_us":1100.5,"iters":10,"warmups":3,"logical_bytes":3221225472,"gbps":3013.3,"ok":true,"check":"every element","cache_policy":"single input buffer","timed_region":"one call","params":{"temp_storage_bytes":1024}}
{"impl":"cub","op":"cub_segreduce_sum_f32","n":1024,"ok":false,"error":"segment 0: got 1, exact 2","cache_policy":"x","timed_region":"y","params":{"seg_len":1024}}
{"impl":"cub","op":"cub_histogram_even_i32","n":1048576,"median_us":20.0,"min_us":19.0,"max_us":22.0,"iters":20,"warmups":3,"logical_bytes":4194304,"gbps":209.7,"ok":true,"cache_policy":"rot","timed_region":"one call","params":{"bins":19}}
{"impl":"cub","op":"cub_reduce_sum_i32_i64","n":10"#;

    #[test]
    fn cub_lines_become_records_failures_and_meta() {
        let parsed = parse_jsonl(CUB, "cub");
        assert_eq!(parsed.meta.as_ref().and_then(|m| m.get("gpu")).and_then(Value::as_str), Some("NVIDIA H200"));
        assert_eq!(parsed.records.len(), 2);
        let scan = &parsed.records[0];
        assert_eq!((scan.primitive.as_str(), scan.op.as_str()), ("scan", "exclusive_scan_i32_i64"));
        assert_eq!(scan.variant, "cub_exclusive_scan_i32_i64");
        assert_eq!(scan.timed_median(), Some(1069.0));
        assert_eq!(scan.logical_bytes, 3_221_225_472);
        assert_eq!(parsed.records[1].op, "histogram_even_i32_bins19");
        assert_eq!(parsed.failed.len(), 1);
        assert!(parsed.failed[0].error.contains("segment 0"));
        // The last line was cut short.
        assert_eq!(parsed.unreadable_lines, vec![5]);
    }

    /// A cub_bench line as it prints since it emits every timed call (iters
    /// cut to 5 here), and the same record as it printed before.
    const CUB_SAMPLED: &str = r#"{"impl":"cub","op":"cub_reduce_sum_i32_i64","n":1048576,"median_us":10.624,"min_us":10.208,"max_us":11.520,"iters":5,"warmups":5,"samples_us":[10.624,10.208,11.520,10.400,10.848],"logical_bytes":4194304,"gbps":394.80,"ok":true,"check":"the int64 sum equals the host sum","cache_policy":"rot","timed_region":"one call","params":{"temp_storage_bytes":1}}"#;
    const CUB_UNSAMPLED: &str = r#"{"impl":"cub","op":"cub_reduce_sum_i32_i64","n":1048576,"median_us":10.624,"min_us":10.208,"max_us":11.520,"iters":5,"warmups":5,"logical_bytes":4194304,"gbps":394.80,"ok":true,"check":"the int64 sum equals the host sum","cache_policy":"rot","timed_region":"one call","params":{"temp_storage_bytes":1}}"#;

    #[test]
    fn cub_samples_are_read_when_printed_and_absent_ones_leave_the_noise_unknown() {
        let sampled = parse_jsonl(CUB_SAMPLED, "cub");
        let record = &sampled.records[0];
        assert_eq!(record.samples_us, [10.624, 10.208, 11.520, 10.400, 10.848]);
        assert_eq!(record.op, "reduce_sum_i32_i64");
        assert_eq!(record.timed_median(), Some(10.624));
        let unsampled = parse_jsonl(CUB_UNSAMPLED, "cub");
        assert!(unsampled.records[0].samples_us.is_empty());
        assert_eq!(unsampled.records[0].timed_median(), Some(10.624));
        // A sample that is not a number (cub_bench prints null for a non-finite
        // time) drops them all: no interval from part of the calls.
        let broken = CUB_SAMPLED.replace("10.400", "null");
        assert!(parse_jsonl(&broken, "cub").records[0].samples_us.is_empty());
    }

    #[test]
    fn torch_unavailable_is_read() {
        let parsed =
            parse_jsonl(r#"{"impl": "torch", "unavailable": "import torch failed: ModuleNotFoundError"}"#, "torch");
        assert!(parsed.unavailable.unwrap().contains("ModuleNotFoundError"));
        assert!(parsed.records.is_empty());
    }

    #[test]
    fn row_records_keep_their_shape() {
        let line = r#"{"impl":"torch","op":"torch_softmax_f32","n":262144000,"shape":[8192,32000],"median_us":857.0,"min_us":850.0,"max_us":900.0,"iters":30,"warmups":5,"logical_bytes":2097152000,"gbps":2447.0,"ok":true,"params":{"dtype":"float32"}}"#;
        let parsed = parse_jsonl(line, "torch");
        assert_eq!(parsed.records[0].shape, Some([8192, 32000]));
        assert_eq!(parsed.records[0].op, "softmax_f32");
    }
}
