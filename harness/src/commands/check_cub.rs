//! `check --bench`'s CUB column: the `cub_bench` baseline of `harness
//! bench` (built with nvcc in the background, or `$PRIMLAB_CUB_BENCH`), run
//! once for the check's primitive at its timed sizes, its medians read for
//! the op that solves the contract's problem. Contracts whose problem CUB's
//! program does not time (other bins, segments or data) have no column.
//! CUB's medians follow `cub_bench`'s own protocol, quick form (its receipt
//! line says it). The nvcc build gets the quick bench's wait, counted from
//! the start of the timing; past it CUB is absent, with how to cache it.

use crate::bench::baselines::{self, cub_build, BaselineRun};
use crate::bench::config::BenchConfig;
use crate::bench::BenchOptions;
use crate::registry::Primitive;
use crate::sweep::raw::Contract;
use std::path::Path;
use std::time::{Duration, Instant};

/// The folder holding `cub_bench.cu`, relative to the repository root (where checks run).
pub const BASELINES: &str = "scripts/baselines";

/// The shared op name of `cub_bench`'s timing of `contract`'s problem, if it times it.
pub fn shared_op(primitive: Primitive, contract: &Contract) -> Option<&'static str> {
    match (primitive, contract.name) {
        (Primitive::Scan, "exclusive.i32") => Some("exclusive_scan_i32_i64"),
        (Primitive::Scan, "inclusive.i32") => Some("inclusive_scan_i32_i64"),
        (Primitive::Reduce, "sum.i32") => Some("reduce_sum_i32_i64"),
        (Primitive::Compact, "positive.i32") => Some("compact_positive_i32"),
        (Primitive::ArgReduce, "argmax.f32") => Some("argmax_f32"),
        (Primitive::FloatReduce, "sum.f32") => Some("float_reduce_sum_f32"),
        _ => None,
    }
}

/// CUB's medians at the timed sizes, and how the baseline went.
#[derive(Debug, Clone)]
pub struct CubTimes {
    /// (n, median us) of the contract's op.
    pub medians: Vec<(usize, f64)>,
    /// One line: ran, absent or failed, with the reason.
    pub status: String,
    /// For the receipt.
    pub json: serde_json::Value,
}

impl CubTimes {
    fn none(status: String) -> CubTimes {
        let json = serde_json::json!({"status": status});
        CubTimes { medians: Vec::new(), status, json }
    }

    /// CUB's median at `n`.
    pub fn at(&self, n: usize) -> Option<f64> {
        self.medians.iter().find(|(m, _)| *m == n).map(|(_, us)| *us)
    }
}

/// A build started (or a binary found), and until when it is waited for.
pub struct Started {
    pending: cub_build::PendingBuild,
    deadline: Instant,
}

/// Starts the build (or finds the binary) for a GPU of compute capability `cc`.
pub fn start(cc: (i32, i32)) -> Started {
    let deadline = Instant::now() + Duration::from_secs(baselines::QUICK_BUILD_WAIT_S);
    let pending = cub_build::start(&baselines::cub_source(Path::new(BASELINES)), &format!("{}{}", cc.0, cc.1));
    Started { pending, deadline }
}

/// Runs `cub_bench` for `primitive` at `sizes` (powers of two) and reads the
/// medians of `contract`'s op.
pub fn time(started: Started, primitive: Primitive, contract: &Contract, sizes: &[usize]) -> CubTimes {
    let Some(op) = shared_op(primitive, contract) else {
        return CubTimes::none(format!("not timed: cub_bench times no problem of {primitive} {}", contract.name));
    };
    let args = BenchOptions {
        quick: true,
        primitives: vec![primitive],
        sizes: sizes.iter().map(|n| n.trailing_zeros()).collect(),
        ..BenchOptions::default()
    };
    let config = BenchConfig::from_args(&args);
    let work = cub_build::work_dir();
    if let Err(e) = std::fs::create_dir_all(&work) {
        return CubTimes::none(format!("absent: cannot create {}: {e}", work.display()));
    }
    let (run, records): (BaselineRun, _) = baselines::run_cub(started.pending, started.deadline, &config, &work);
    let medians: Vec<(usize, f64)> =
        records.iter().filter(|r| r.op == op).filter_map(|r| r.median_us.map(|us| (r.n, us))).collect();
    let status = match &run.reason {
        Some(reason) => format!("{}: {reason}", run.status),
        None => format!("{} ({} medians of {op})", run.status, medians.len()),
    };
    let json = serde_json::json!({"status": status, "op": op, "medians": medians, "baseline": run});
    CubTimes { medians, status, json }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::ops::{cub_ops, map_baseline_op};

    /// Every op named here is one `cub_bench` times for that primitive.
    #[test]
    fn each_shared_op_is_a_cub_op_of_its_primitive() {
        for p in Primitive::ALL {
            for c in crate::sweep::raw::contracts(p) {
                let Some(op) = shared_op(p, c) else { continue };
                let mapped: Vec<String> = cub_ops(p.name())
                    .iter()
                    .filter_map(|source| map_baseline_op(source, &serde_json::json!({})))
                    .map(|m| m.op)
                    .collect();
                assert!(mapped.iter().any(|m| m == op), "{p} {}: {op} not in {mapped:?}", c.name);
            }
        }
    }
}
