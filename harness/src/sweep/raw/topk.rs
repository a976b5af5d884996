//! Raw cases of top-k: the GPU catalogue's row blocks and whole arrays (same widths, rows,
//! families and seeds; the families without NaN, which the contracts refuse) with the model's
//! values and indices, one k per case (1, 33, 256, 2048, cols - 1 and cols where they fit;
//! whole arrays past 2^20: 1 and 2), every family without NaN, or one past [`HEAVY_WORK`].
//! The order is total: value descending (ascending for the smallest), index ascending among
//! equal values, `-0.0` equal to `+0.0`; values are the input elements, bit for bit.

use super::topk_sample;
use super::{variant, Array, Buffer, Contract, Dtype, Len, Param, RawCase, RawSpec, Rule, Value};
use crate::sweep::gpu::id;
use crate::sweep::gpu::topk::{array_sizes, families, input_seed, rows_for, widths};
use crate::sweep::SweepPlan;
use half::{bf16, f16};
use model::generators::topk_rows;
use model::topk::{topk_rows as model_topk, TopkNan, TopkSpec, TopkValue};

const SHAPE: [Param; 3] = [
    Param { name: "rows", dtype: Dtype::Int32 },
    Param { name: "cols", dtype: Dtype::Int32 },
    Param { name: "k", dtype: Dtype::Int32 },
];
const INDICES: Buffer = Buffer { role: "indices", dtype: Dtype::Int64, len: Len::PerCase };

const IN_F32: [Buffer; 1] = [Buffer { role: "in", dtype: Dtype::Float32, len: Len::N }];
const IN_BF16: [Buffer; 1] = [Buffer { role: "in", dtype: Dtype::Bfloat16, len: Len::N }];
const IN_F16: [Buffer; 1] = [Buffer { role: "in", dtype: Dtype::Float16, len: Len::N }];
const OUT_F32: [Buffer; 2] = [Buffer { role: "values", dtype: Dtype::Float32, len: Len::PerCase }, INDICES];
const OUT_BF16: [Buffer; 2] = [Buffer { role: "values", dtype: Dtype::Bfloat16, len: Len::PerCase }, INDICES];
const OUT_F16: [Buffer; 2] = [Buffer { role: "values", dtype: Dtype::Float16, len: Len::PerCase }, INDICES];

/// A top-k contract: `in` is `rows x cols` row-major, `values` and `indices` hold `rows * k`
/// each, compared exactly.
const fn contract(
    name: &'static str,
    summary: &'static str,
    (inputs, outputs): (&'static [Buffer], &'static [Buffer]),
) -> Contract {
    Contract { name, summary, inputs, params: &SHAPE, outputs, rule: Rule::Exact, what: "top-k values" }
}

/// The top-k contracts: for each row r, `values[r*k + t]` and `indices[r*k + t]` are the
/// t-th of the row's k largest (or smallest) values in the total order and its column; then
/// the sampler's ([`topk_sample`]).
pub const CONTRACTS: [Contract; 6] = [
    contract(
        "largest.f32",
        "top-k: per row of in (rows x cols, f32), the k largest values by value descending then index ascending \
         (-0.0 = +0.0; no NaN) into values[r*k + t] (f32, the input's bits) and their columns into indices (int64)",
        (&IN_F32, &OUT_F32),
    ),
    contract(
        "smallest.f32",
        "bottom-k: per row of in (rows x cols, f32), the k smallest values by value ascending then index ascending \
         (-0.0 = +0.0; no NaN) into values[r*k + t] (f32, the input's bits) and their columns into indices (int64)",
        (&IN_F32, &OUT_F32),
    ),
    contract(
        "largest.bf16",
        "top-k: per row of in (rows x cols, bfloat16), the k largest values by value descending then index \
         ascending (-0.0 = +0.0; no NaN) into values (bfloat16, the input's bits) and indices (int64)",
        (&IN_BF16, &OUT_BF16),
    ),
    contract(
        "largest.f16",
        "top-k: per row of in (rows x cols, float16), the k largest values by value descending then index \
         ascending (-0.0 = +0.0; no NaN) into values (float16, the input's bits) and indices (int64)",
        (&IN_F16, &OUT_F16),
    ),
    topk_sample::SAMPLE,
    topk_sample::SAMPLE_WITH_PROBABILITY,
];

/// Whole arrays from this size take k = 1 and 2 only: a user's kernel that selects one item a
/// pass (successor selection: O(k n), one block for the one row) would read a 2^24 array 2048
/// times, minutes past the watchdog, though correct; k up to 2048 is checked on rows up to
/// 262,144 wide and arrays up to 2^20.
const LARGE_ARRAY: usize = (1 << 20) + 1;

/// The largest whole array of a user's check: 2^24 (a one-block kernel reads a larger array
/// for seconds per k; our own kernels are swept to 2^28).
const ARRAY_MAX: usize = 1 << 24;

/// The k of a case `cols` wide: 1, 33, 256, 2048, and cols - 1 and cols for rows a few blocks
/// wide; a whole array from [`LARGE_ARRAY`] on, 1 and 2.
fn ks(cols: usize, whole: bool) -> Vec<usize> {
    if whole && cols >= LARGE_ARRAY {
        return vec![1, 2];
    }
    let mut ks: Vec<usize> = [1, 33, 256, 2048].into_iter().filter(|&k| k <= cols).collect();
    if cols <= 4097 {
        ks.extend([cols - 1, cols].into_iter().filter(|&k| k >= 1));
    }
    ks.sort_unstable();
    ks.dedup();
    ks
}

/// Items a case compares past which it is heavy: k x cols, the reads of its row by a user's
/// kernel that selects one item a pass (successor selection, k block-wide passes over the
/// row). On the H100 such a correct kernel (the gallery's control 35) spent 150 of its check's
/// case-seconds, 105 of them at k = 2048 on rows and arrays from 2^17 wide (about 3-4 s a case:
/// every launch the defences make reads the row 2048 times).
const HEAVY_WORK: usize = 1 << 24;

/// Whether the `j`-th family without NaN runs at `(cols, k)`: every family up to
/// [`HEAVY_WORK`]; past it one family a (cols, k), turning with k's place among the row's k
/// and with the width, so that the heavy cases of a plan meet most families between them and
/// a correct kernel of one item a pass is checked within a minute. The choice depends on the
/// shape and k alone, never on the plan's other sizes: a one-size rerun makes the same case.
fn runs_family(j: usize, (cols, k): (usize, usize), whole: bool, plan: &SweepPlan) -> bool {
    if k.saturating_mul(cols) <= HEAVY_WORK {
        return true;
    }
    let count = families(plan, cols, whole).iter().filter(|family| !family.has_nan()).count().max(1);
    let place = ks(cols, whole).iter().position(|&x| x == k).unwrap_or(0);
    j == (place + cols) % count
}

/// The input of a case as the contract's type, and the model's outputs on it.
fn typed_case(
    contract: &Contract,
    values: Vec<f32>,
    (rows, cols, k): (usize, usize, usize),
) -> Result<RawCase, String> {
    let spec = TopkSpec { k, largest: !contract.name.starts_with("smallest"), nan: TopkNan::Reject };
    fn solve<T: TopkValue>(x: &[T], rows: usize, cols: usize, spec: TopkSpec) -> Result<(Vec<T>, Vec<i64>), String> {
        model_topk(x, rows, cols, spec).map(|o| (o.values, o.indices)).map_err(|e| e.to_string())
    }
    let (input, out_values, indices) = match contract.inputs[0].dtype {
        Dtype::Bfloat16 => {
            let x: Vec<bf16> = values.iter().map(|&v| bf16::from_f32(v)).collect();
            let (v, i) = solve(&x, rows, cols, spec)?;
            let bits = |a: &[bf16]| a.iter().map(|b| b.to_bits()).collect();
            (Array::Bfloat16(bits(&x)), Array::Bfloat16(bits(&v)), i)
        }
        Dtype::Float16 => {
            let x: Vec<f16> = values.iter().map(|&v| f16::from_f32(v)).collect();
            let (v, i) = solve(&x, rows, cols, spec)?;
            let bits = |a: &[f16]| a.iter().map(|b| b.to_bits()).collect();
            (Array::Float16(bits(&x)), Array::Float16(bits(&v)), i)
        }
        _ => {
            let (v, i) = solve(&values, rows, cols, spec)?;
            (Array::Float32(values), Array::Float32(v), i)
        }
    };
    Ok(RawCase {
        inputs: vec![input],
        params: vec![Value::Int32(rows as i32), Value::Int32(cols as i32), Value::Int32(k as i32)],
        expected: vec![out_values, Array::Int64(indices)],
    })
}

/// Appends the raw top-k cases of `contract` (the sampler's by [`topk_sample::cases`]).
pub fn cases(plan: &SweepPlan, contract: &Contract, label: &str, out: &mut Vec<RawSpec>) {
    if contract.rule == Rule::TopkSample {
        return topk_sample::cases(plan, contract, label, out);
    }
    let shapes = widths(plan).into_iter().map(|c| (rows_for(c), c, false));
    let arrays = array_sizes(plan).into_iter().filter(|&n| n <= ARRAY_MAX).map(|n| (1, n, true));
    let contract = *contract;
    for (rows, cols, whole) in shapes.chain(arrays) {
        let size = if whole { cols.to_string() } else { format!("{rows}x{cols}") };
        // `f` indexes every family (the seeds); `j` only those without NaN (the turns).
        let without_nan = families(plan, cols, whole).iter().enumerate().filter(|(_, family)| !family.has_nan());
        for (j, (f, &family)) in without_nan.enumerate() {
            let seed = input_seed(plan, cols, whole, f);
            for k in ks(cols, whole).into_iter().filter(|&k| runs_family(j, (cols, k), whole, plan)) {
                let name = format!("{}.k{k}", family.name());
                let case_id = id("topk", variant(label, &contract), size.clone(), rows * cols, &name, seed);
                out.push(RawSpec::new(case_id, move || {
                    let values = topk_rows(family, rows, cols, seed).map_err(|e| e.to_string())?;
                    typed_case(&contract, values, (rows, cols, k))
                }));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cases of `contract` at `sizes` (the sweep's widths, then those whole arrays): (size,
    /// k) -> the families that run there.
    fn families_by_shape_and_k(sizes: &[usize]) -> std::collections::BTreeMap<(String, usize), Vec<String>> {
        let plan = SweepPlan::of_primitive(crate::registry::primitive::Primitive::Topk, sizes, 0x5eed);
        let mut specs = Vec::new();
        cases(&plan, &CONTRACTS[0], "user", &mut specs);
        let mut by = std::collections::BTreeMap::<(String, usize), Vec<String>>::new();
        for spec in specs {
            let (family, k) = spec.id.family.rsplit_once(".k").expect("family.kK");
            let k: usize = k.parse().expect("k");
            by.entry((spec.id.size.clone(), k)).or_default().push(family.to_string());
        }
        by
    }

    fn cols_of(size: &str) -> usize {
        size.rsplit('x').next().and_then(|c| c.parse().ok()).expect("a width")
    }

    /// Up to HEAVY_WORK every family without NaN runs; past it one a (shape, k), and those
    /// heavy cases meet most families between them.
    #[test]
    fn heavy_cases_run_one_family_each() {
        let sizes = crate::sweep::sizes::sweep_sizes(&[], 0x5eed, false, true);
        let by = families_by_shape_and_k(&sizes);
        let mut heavy_families = std::collections::BTreeSet::new();
        let mut heavy = 0;
        for ((size, k), families) in &by {
            let whole = !size.contains('x');
            let light = k * cols_of(size) <= HEAVY_WORK;
            let all = families_for_size(size, whole);
            if light {
                assert_eq!(families.len(), all, "{size} k={k}: {families:?}");
            } else {
                assert_eq!(families.len(), 1, "{size} k={k}: {families:?}");
                heavy += 1;
                heavy_families.insert(families[0].clone());
            }
        }
        assert!(heavy >= 10, "the sweep's sizes hold heavy cases: {heavy}");
        assert!(heavy_families.len() >= 5, "heavy cases meet most families: {heavy_families:?}");
        // 2048 on the widest rows and arrays is among them: k is thinned by family, never dropped.
        assert!(by.contains_key(&("2x262144".to_string(), 2048)) && by.contains_key(&("262145".to_string(), 2048)));
    }

    /// The families without NaN at a size (the sweep's for rows, or whole arrays).
    fn families_for_size(size: &str, whole: bool) -> usize {
        let plan = SweepPlan::of_primitive(crate::registry::primitive::Primitive::Topk, &[1], 0x5eed);
        families(&plan, cols_of(size), whole).iter().filter(|f| !f.has_nan()).count()
    }

    /// A one-size rerun (the rerun line of a failure) makes the heavy case the full plan made.
    #[test]
    fn a_one_size_rerun_picks_the_same_family() {
        let full = families_by_shape_and_k(&crate::sweep::sizes::sweep_sizes(&[], 0x5eed, false, true));
        for n in [262_145, 460_051, 1 << 24] {
            let alone = families_by_shape_and_k(&[n]);
            for ((size, k), families) in alone.iter().filter(|((size, _), _)| *size == n.to_string()) {
                if let Some(in_full) = full.get(&(size.clone(), *k)) {
                    assert_eq!(families, in_full, "{size} k={k}");
                }
            }
        }
    }

    #[test]
    fn ks_fit_the_row() {
        assert_eq!(ks(1, false), vec![1]);
        assert_eq!(ks(33, false), vec![1, 32, 33]);
        assert_eq!(ks(4097, false), vec![1, 33, 256, 2048, 4096, 4097]);
        assert_eq!(ks(32_000, false), vec![1, 33, 256, 2048]);
        assert_eq!(ks(1 << 20, true), vec![1, 33, 256, 2048]);
        assert_eq!(ks(1 << 24, true), vec![1, 2]);
    }

    #[test]
    fn a_case_holds_the_model_s_values_bit_for_bit_and_its_indices() {
        let c = &CONTRACTS[0];
        let case = typed_case(c, vec![1.0, -0.0, 3.0, 3.0, 0.0, -2.0], (2, 3, 2)).expect("a case");
        assert_eq!(case.expected[1], Array::Int64(vec![2, 0, 0, 1]));
        let Array::Float32(values) = &case.expected[0] else { panic!("f32 values") };
        assert_eq!(values.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), [3.0f32, 1.0, 3.0, 0.0].map(f32::to_bits));
        let smallest = typed_case(&CONTRACTS[1], vec![1.0, -0.0, 0.0], (1, 3, 2)).expect("a case");
        assert_eq!(smallest.expected[1], Array::Int64(vec![1, 2]));
        let half = typed_case(&CONTRACTS[3], vec![1.0, 2.0], (1, 2, 1)).expect("a case");
        assert_eq!(half.inputs[0].dtype(), Dtype::Float16);
    }
}
