//! The shared op names that line up primlab, the ceilings, CUB and PyTorch,
//! and which baseline ops serve which primitive.

/// Where a baseline op belongs: its report group, the shared op name and the dtype.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpMapping {
    /// Report group (`reduce`, `scan`, ..., `ceilings`).
    pub primitive: &'static str,
    /// The shared op name.
    pub op: String,
    /// Element type.
    pub dtype: &'static str,
}

fn param(params: &serde_json::Value, key: &str) -> Option<u64> {
    params.get(key).and_then(serde_json::Value::as_u64)
}

/// The shared name of baseline op `source` with its `params` (segment
/// length, bins); `None` for an op the harness does not know (kept under
/// `other` by the caller).
pub fn map_baseline_op(source: &str, params: &serde_json::Value) -> Option<OpMapping> {
    let m = |primitive, op: String, dtype| Some(OpMapping { primitive, op, dtype });
    match source {
        "memcpy_d2d" => m("ceilings", "memcpy_d2d".into(), "i32"),
        "read_ceiling_i32" => m("ceilings", "read_ceiling_i32".into(), "i32"),
        // The _n64 records are CUB's 64-bit num_items path of the same op (a peer like the other).
        "cub_reduce_sum_i32_i64" | "cub_reduce_sum_i32_i64_n64" | "torch_sum_i32_i64" => {
            m("reduce", "reduce_sum_i32_i64".into(), "i32->i64")
        }
        "cub_exclusive_scan_i32_i64" | "cub_exclusive_scan_i32_i64_n64" => {
            m("scan", "exclusive_scan_i32_i64".into(), "i32->i64")
        }
        // Same-type scans: peers a user without a wider output weighs; no entry of ours times them.
        "cub_exclusive_scan_i32" => m("scan", "exclusive_scan_i32".into(), "i32"),
        "cub_exclusive_scan_f32" => m("scan", "exclusive_scan_f32".into(), "f32"),
        "cub_inclusive_scan_i32_i64" | "torch_cumsum_i32_i64" => m("scan", "inclusive_scan_i32_i64".into(), "i32->i64"),
        "cub_select_if_positive_i32" | "torch_nonzero_positive_i32" => {
            m("compact", "compact_positive_i32".into(), "i32")
        }
        "cub_segreduce_sum_f32" | "torch_segsum_f32" => {
            m("segmented_reduce", format!("segmented_sum_f32_seg{}", param(params, "seg_len")?), "f32")
        }
        "cub_segreduce_sum_i32_i64" => {
            m("segmented_reduce", format!("segmented_sum_i32_i64_seg{}", param(params, "seg_len")?), "i32->i64")
        }
        "cub_histogram_even_i32" => m("histogram", format!("histogram_even_i32_bins{}", param(params, "bins")?), "i32"),
        // torch.histc counts float32 copies of the same int values in the same unit bins.
        "torch_histc_f32" => m("histogram", format!("histogram_even_i32_bins{}", param(params, "bins")?), "f32"),
        "cub_argmax_f32" | "torch_argmax_f32" => m("arg_reduce", "argmax_f32".into(), "f32"),
        "torch_argmax_rows_f32" => m("arg_reduce", "argmax_rows_f32".into(), "f32"),
        // The reproducible sum (the same bits on every GPU) stands beside our correctly rounded
        // one; the targets and the faster peer take the fastest CUB record, the ordinary sum.
        "cub_reduce_sum_f32" | "cub_reduce_sum_f32_gpu_to_gpu" | "torch_sum_f32" => {
            m("float_reduce", "float_reduce_sum_f32".into(), "f32")
        }
        "torch_softmax_f32" => m("softmax", "softmax_f32".into(), "f32"),
        "torch_softmax_bf16" => m("softmax", "softmax_bf16".into(), "bf16"),
        // CUB's DeviceTopK returns the k items unordered; torch.topk (sorted=True) orders them.
        "torch_topk_f32" | "cub_topk_f32" => m("topk", format!("topk_f32_k{}", param(params, "k")?), "f32"),
        // A peer a bfloat16 user weighs; no entry of ours times it yet.
        "torch_topk_bf16" => m("topk", format!("topk_bf16_k{}", param(params, "k")?), "bf16"),
        // torch.topk, softmax, cumsum, searchsorted: the sampler PyTorch users write.
        "torch_topk_sample_f32" => m("topk", format!("topk_sample_f32_k{}", param(params, "k")?), "f32"),
        _ => None,
    }
}

/// `cub_bench` ops that serve `primitive` (the ceilings always run).
pub fn cub_ops(primitive: &str) -> &'static [&'static str] {
    match primitive {
        "ceilings" => &["memcpy_d2d", "read_ceiling_i32"],
        "reduce" => &["cub_reduce_sum_i32_i64", "cub_reduce_sum_i32_i64_n64"],
        "scan" => &[
            "cub_exclusive_scan_i32_i64",
            "cub_exclusive_scan_i32_i64_n64",
            "cub_inclusive_scan_i32_i64",
            "cub_exclusive_scan_i32",
            "cub_exclusive_scan_f32",
        ],
        "compact" => &["cub_select_if_positive_i32"],
        "segmented_reduce" => &["cub_segreduce_sum_f32", "cub_segreduce_sum_i32_i64"],
        "histogram" => &["cub_histogram_even_i32"],
        "arg_reduce" => &["cub_argmax_f32"],
        "float_reduce" => &["cub_reduce_sum_f32", "cub_reduce_sum_f32_gpu_to_gpu"],
        "topk" => &["cub_topk_f32"],
        _ => &[],
    }
}

/// `torch_bench.py` ops that serve `primitive`.
pub fn torch_ops(primitive: &str) -> &'static [&'static str] {
    match primitive {
        "reduce" => &["torch_sum_i32_i64"],
        "scan" => &["torch_cumsum_i32_i64"],
        "compact" => &["torch_nonzero_positive_i32"],
        "segmented_reduce" => &["torch_segsum_f32"],
        "histogram" => &["torch_histc_f32"],
        "arg_reduce" => &["torch_argmax_f32", "torch_argmax_rows_f32"],
        "float_reduce" => &["torch_sum_f32"],
        "softmax" => &["torch_softmax_f32", "torch_softmax_bf16"],
        "topk" => &["torch_topk_f32", "torch_topk_bf16", "torch_topk_sample_f32"],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn baseline_ops_map_to_the_shared_names() {
        let none = json!({});
        assert_eq!(map_baseline_op("cub_reduce_sum_i32_i64", &none).unwrap().op, "reduce_sum_i32_i64");
        assert_eq!(map_baseline_op("torch_cumsum_i32_i64", &none).unwrap().op, "inclusive_scan_i32_i64");
        let seg = map_baseline_op("cub_segreduce_sum_f32", &json!({"seg_len": 1024})).unwrap();
        assert_eq!((seg.primitive, seg.op.as_str()), ("segmented_reduce", "segmented_sum_f32_seg1024"));
        let hist = map_baseline_op("cub_histogram_even_i32", &json!({"bins": 19})).unwrap();
        assert_eq!(hist.op, "histogram_even_i32_bins19");
        assert_eq!(map_baseline_op("torch_histc_f32", &json!({"bins": 19})).unwrap().op, hist.op);
        assert!(map_baseline_op("cub_segreduce_sum_f32", &none).is_none());
        assert!(map_baseline_op("cub_something_new", &none).is_none());
        let same = map_baseline_op("cub_exclusive_scan_f32", &none).unwrap();
        assert_eq!((same.primitive, same.op.as_str(), same.dtype), ("scan", "exclusive_scan_f32", "f32"));
        let topk = map_baseline_op("torch_topk_f32", &json!({"k": 50})).unwrap();
        assert_eq!((topk.primitive, topk.op.as_str()), ("topk", "topk_f32_k50"));
        assert_eq!(map_baseline_op("cub_topk_f32", &json!({"k": 50})).unwrap().op, topk.op);
        assert!(map_baseline_op("torch_topk_f32", &none).is_none());
        let sample = map_baseline_op("torch_topk_sample_f32", &json!({"k": 50})).unwrap();
        assert_eq!((sample.primitive, sample.op.as_str()), ("topk", "topk_sample_f32_k50"));
        let reproducible = map_baseline_op("cub_reduce_sum_f32_gpu_to_gpu", &none).unwrap();
        assert_eq!(reproducible.op, "float_reduce_sum_f32");
    }

    /// Every op the harness asks `cub_bench` for is one it knows (its `kAllOps`).
    #[test]
    fn every_requested_cub_op_is_one_cub_bench_knows() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/baselines");
        let options = std::fs::read_to_string(dir.join("bench_options.cuh")).expect("bench_options.cuh");
        let table = &options[options.find("kAllOps[]").expect("the kAllOps table")..];
        let table = &table[..table.find("};").expect("its end")];
        for primitive in crate::bench::entries::report_order().iter().chain(&["ceilings"]) {
            for op in cub_ops(primitive) {
                assert!(table.contains(&format!("\"{op}\"")), "{op} is not in cub_bench's kAllOps");
            }
        }
    }

    #[test]
    fn every_selectable_op_maps() {
        let params = json!({"seg_len": 1024, "bins": 19, "k": 50});
        for primitive in crate::bench::entries::report_order() {
            for op in cub_ops(primitive).iter().chain(torch_ops(primitive)) {
                let mapped = map_baseline_op(op, &params).unwrap_or_else(|| panic!("{op} unmapped"));
                assert_eq!(mapped.primitive, primitive, "{op}");
            }
        }
    }
}
