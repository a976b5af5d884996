//! The int32 contracts on the integer edge families (`alternating_min_max`, `long_runs`):
//! scan, reduce and compaction as the raw catalogue builds them over its int families,
//! segmented sums and maxima over its segment shapes, and the int32 histogram over the full
//! range `[i32::MIN, i32::MAX)` (where `i32::MAX` is out of range). Expected outputs are the
//! model's, as in the raw modules.

use super::values::{alternating_min_max, long_runs};
use crate::sweep::gpu::{case_seed, id, int_families};
use crate::sweep::raw::{variant, Array, Contract, RawCase, RawSpec, Value};
use crate::sweep::SweepPlan;
use kernels::HistogramSpec;
use model::generators::DataFamily;

/// An integer edge family: its name and generator of `(n, seed)`.
type IntFamily = (&'static str, fn(usize, u64) -> Vec<i32>);

/// The integer edge families, in case order.
pub const INT_FAMILIES: [IntFamily; 2] = [("alternating_min_max", alternating_min_max), ("long_runs", long_runs)];

/// Appends one case per edge size of `plan` and integer edge family, family `f` at `n` seeded
/// `case_seed(plan.seed, primitive, n, k + f)` where `k` is the number of the catalogue's int
/// families there (so no edge case shares a seed with a catalogue case), the data made by
/// `make(input, n, seed)`.
fn per_family<F>(plan: &SweepPlan, primitive: &str, contract: &Contract, label: &str, out: &mut Vec<RawSpec>, make: F)
where
    F: Fn(Vec<i32>, usize, u64) -> Result<RawCase, String> + Clone + Send + Sync + 'static,
{
    for n in super::sizes(plan) {
        let first = int_families(plan, n).len();
        for (f, &(family, generate)) in INT_FAMILIES.iter().enumerate() {
            let seed = case_seed(plan.seed, primitive, n, first + f);
            let case_id = id(primitive, variant(label, contract), n.to_string(), n, family, seed);
            let make = make.clone();
            out.push(RawSpec::new(case_id, move || make(generate(n, seed), n, seed)));
        }
    }
}

/// The int64 sum (`sum.i32`).
pub fn reduce(plan: &SweepPlan, contract: &Contract, label: &str, out: &mut Vec<RawSpec>) {
    per_family(plan, "reduce", contract, label, out, |x, _, _| {
        let sum = model::reduce::reduce_i64(&x).map_err(|e| e.to_string())?;
        Ok(RawCase::new(vec![Array::Int32(x)], vec![Array::Int64(vec![sum])]))
    });
}

/// The int64 prefixes (`exclusive.i32`, `inclusive.i32`, by the contract's name).
pub fn scan(plan: &SweepPlan, contract: &Contract, label: &str, out: &mut Vec<RawSpec>) {
    let inclusive = contract.name.starts_with("inclusive");
    per_family(plan, "scan", contract, label, out, move |x, _, _| {
        let prefixes =
            if inclusive { model::scan::inclusive_scan_i64(&x) } else { model::scan::exclusive_scan_i64(&x) };
        let prefixes = prefixes.map_err(|e| e.to_string())?;
        Ok(RawCase::new(vec![Array::Int32(x)], vec![Array::Int64(prefixes)]))
    });
}

/// The kept items and their count (`positive.i32`; `flagged.i32` with the flags the
/// catalogue draws for the same size and seed).
pub fn compact(plan: &SweepPlan, contract: &Contract, label: &str, out: &mut Vec<RawSpec>) {
    let flagged = contract.inputs.len() == 2;
    per_family(plan, "compact", contract, label, out, move |x, n, seed| {
        let (inputs, kept) = if flagged {
            // The catalogue's flags depend on (n, seed) only, not on its data family.
            let flags = crate::sweep::gpu::compact::make(DataFamily::SmallInts, n, seed)?.flags;
            let binary: Vec<u8> = flags.iter().map(|&f| u8::from(f != 0)).collect();
            let kept = model::compact::compact_flags(&x, &binary).map_err(|e| e.to_string())?.output;
            (vec![Array::Int32(x), Array::Uint8(flags)], kept)
        } else {
            let kept = model::compact::compact_positive(&x).output;
            (vec![Array::Int32(x)], kept)
        };
        let count = kept.len() as i64;
        Ok(RawCase::new(inputs, vec![Array::Int32(kept), Array::Int64(vec![count])]))
    });
}

/// The segment shapes of the edge families: seeded random lengths, and the cycle of empty,
/// single and warp-boundary lengths.
const SEGMENT_SHAPES: [&str; 2] = ["random", "lengths"];

/// The int64 segment sums or maxima (`sum.i32`, `max.i32`) over [`SEGMENT_SHAPES`]: family
/// `f` on shape `s` is named `<family>.<shape>` and seeded
/// `case_seed(plan.seed, "segmented_reduce", n, k + 2f + s)` where `k` is the number of the
/// catalogue's shapes at `n`.
pub fn segmented(plan: &SweepPlan, contract: &Contract, label: &str, out: &mut Vec<RawSpec>) {
    use crate::sweep::gpu::segmented_reduce::{offsets, shapes};
    let max = contract.name.starts_with("max");
    for n in super::sizes(plan) {
        let first = shapes(plan, n).len();
        for (f, &(family, generate)) in INT_FAMILIES.iter().enumerate() {
            for (s, &shape) in SEGMENT_SHAPES.iter().enumerate() {
                let seed = case_seed(plan.seed, "segmented_reduce", n, first + SEGMENT_SHAPES.len() * f + s);
                let name = format!("{family}.{shape}");
                let case_id = id("segmented_reduce", variant(label, contract), n.to_string(), n, &name, seed);
                out.push(RawSpec::new(case_id, move || {
                    let offsets = offsets(shape, n, seed);
                    let values = generate(n, seed);
                    let result = if max {
                        model::segmented_reduce::segmented_max(&values, &offsets)
                    } else {
                        model::segmented_reduce::segmented_sum(&values, &offsets)
                    };
                    let result = result.map_err(|e| e.to_string())?;
                    let wide: Vec<i64> = offsets.iter().map(|&o| o as i64).collect();
                    Ok(RawCase {
                        inputs: vec![Array::Int32(values), Array::Int64(wide)],
                        params: vec![Value::Int64(result.len() as i64)],
                        expected: vec![Array::Int64(result)],
                    })
                }));
            }
        }
    }
}

/// The int32 histogram shape of the edge families: 4096 bins over `[i32::MIN, i32::MAX)`.
pub const HISTOGRAM_SPEC: HistogramSpec<i32> = HistogramSpec { bins: 4096, lower: i32::MIN, upper: i32::MAX };

/// The bin counts (`even.i32`) over [`HISTOGRAM_SPEC`]: family `f` is named
/// `<family>.bins4096_full_range` and seeded `case_seed(plan.seed, "histogram", n, k + f)`
/// where `k` is the number of the catalogue's int32 shapes at `n`.
pub fn histogram(plan: &SweepPlan, contract: &Contract, label: &str, out: &mut Vec<RawSpec>) {
    use crate::sweep::gpu::histogram::int_shapes;
    for n in super::sizes(plan) {
        let first = int_shapes(plan, n).len();
        for (f, &(family, generate)) in INT_FAMILIES.iter().enumerate() {
            let seed = case_seed(plan.seed, "histogram", n, first + f);
            let name = format!("{family}.bins4096_full_range");
            let case_id = id("histogram", variant(label, contract), n.to_string(), n, &name, seed);
            out.push(RawSpec::new(case_id, move || {
                let samples = generate(n, seed);
                let s = HISTOGRAM_SPEC;
                let counts = model::histogram::histogram_even(&samples, &s).map_err(|e| e.to_string())?;
                Ok(RawCase {
                    inputs: vec![Array::Int32(samples)],
                    params: vec![Value::Int32(s.bins as i32), Value::Int32(s.lower), Value::Int32(s.upper)],
                    expected: vec![int32_counts(counts)?],
                })
            }));
        }
    }
}

/// The model's bin counts as the contract's int32 (each count is at most n <= 2^20).
pub fn int32_counts(counts: Vec<u64>) -> Result<Array, String> {
    let narrow: Result<Vec<i32>, _> = counts.into_iter().map(i32::try_from).collect();
    narrow.map(Array::Int32).map_err(|_| "a bin count does not fit int32".to_string())
}
