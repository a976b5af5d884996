//! Raw cases of the top-k sampler for a user's kernel: rows of the GPU catalogue's widths
//! (1 to 262,144 columns) from the spread, tied, equal, descending and masked families, one
//! uniform per row (0 and the largest f32 below 1 among them), k at 1, 33 and the row's
//! width capped at 2048, temperature 1, 0.25 or 4 by family. The model's outputs are its own
//! draws and their exact probabilities; [`Rule::TopkSample`] judges a user's draws at float32
//! precision ([`super::topk_sample_rule`]).

use super::{variant, Array, Buffer, Contract, Dtype, Len, Param, RawCase, RawSpec, Rule, Value};
use crate::sweep::gpu::id;
use crate::sweep::gpu::topk::{rows_for, widths};
use crate::sweep::SweepPlan;
use model::generators::{topk_rows, Rng, TopkFamily};
use model::topk_sample::{distributions, SampleSpec};

const PARAMS: [Param; 4] = [
    Param { name: "rows", dtype: Dtype::Int32 },
    Param { name: "cols", dtype: Dtype::Int32 },
    Param { name: "k", dtype: Dtype::Int32 },
    Param { name: "temperature", dtype: Dtype::Float32 },
];
const INPUTS: [Buffer; 2] = [
    Buffer { role: "in", dtype: Dtype::Float32, len: Len::N },
    Buffer { role: "uniforms", dtype: Dtype::Float32, len: Len::PerCase },
];
const SAMPLES: Buffer = Buffer { role: "samples", dtype: Dtype::Int64, len: Len::PerCase };
const PROBABILITIES: Buffer = Buffer { role: "probabilities", dtype: Dtype::Float32, len: Len::PerCase };

/// The sampler contracts: a draw per row, with or without its probability.
pub const SAMPLE: Contract = Contract {
    name: "sample.f32",
    summary: "top-k sampling: per row r of in (rows x cols, f32 logits), the k largest (value descending, index \
              ascending among equals) weighted exp((v - max) / temperature); samples[r] (int64) is the column of \
              the first of them, in that order, whose running weight exceeds uniforms[r] * total (uniforms[r] in \
              [0, 1)): the inverse CDF",
    inputs: &INPUTS,
    params: &PARAMS,
    outputs: &[SAMPLES],
    rule: Rule::TopkSample,
    what: "draw",
};

/// [`SAMPLE`], and each draw's probability in `probabilities[r]` (f32).
pub const SAMPLE_WITH_PROBABILITY: Contract = Contract {
    name: "sample_with_probability.f32",
    summary: "top-k sampling as sample.f32, and probabilities[r] (f32) the drawn column's probability \
              exp((v - max) / temperature) / total",
    outputs: &[SAMPLES, PROBABILITIES],
    ..SAMPLE
};

/// The families a user's sampler is checked on (no NaN or +inf: the contract refuses them).
const FAMILIES: [TopkFamily; 5] =
    [TopkFamily::Spread, TopkFamily::Ties, TopkFamily::AllEqual, TopkFamily::Descending, TopkFamily::Masked];

/// The temperature of the `f`-th family.
const TEMPERATURES: [f32; 3] = [1.0, 0.25, 4.0];

/// The k of a row `cols` wide: 1, 33 and the width capped at 2048, those that fit.
fn ks(cols: usize) -> Vec<usize> {
    let mut ks: Vec<usize> = [1, 33, cols.min(2048)].into_iter().filter(|&k| k <= cols).collect();
    ks.sort_unstable();
    ks.dedup();
    ks
}

/// A uniform per row: 0 in row 0, the largest f32 below 1 in row 1, the rest drawn.
fn uniforms(rows: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed ^ 0x7561_6e69);
    let below_one = 0.999_999_94f32;
    (0..rows).map(|r| [0.0, below_one].get(r).copied().unwrap_or((rng.unit_f64() as f32).min(below_one))).collect()
}

/// One case: the model's draws and exact probabilities of a block of rows.
fn sample_case(
    contract: &Contract,
    logits: Vec<f32>,
    u: Vec<f32>,
    (rows, cols): (usize, usize),
    spec: SampleSpec,
) -> Result<RawCase, String> {
    let rows_of = distributions(&logits, (rows, cols), spec, &u).map_err(|e| e.to_string())?;
    let draws: Vec<usize> = rows_of.iter().zip(&u).map(|(d, &x)| d.draw(x)).collect();
    let columns = rows_of.iter().zip(&draws).map(|(d, &j)| d.columns[j]).collect();
    let mut expected = vec![Array::Int64(columns)];
    if contract.outputs.len() == 2 {
        expected.push(Array::Float64(rows_of.iter().zip(&draws).map(|(d, &j)| d.probability(j)).collect()));
    }
    Ok(RawCase {
        inputs: vec![Array::Float32(logits), Array::Float32(u)],
        params: vec![
            Value::Int32(rows as i32),
            Value::Int32(cols as i32),
            Value::Int32(spec.k as i32),
            Value::Float32(spec.temperature),
        ],
        expected,
    })
}

/// Appends the raw sampler cases of `contract`.
pub fn cases(plan: &SweepPlan, contract: &Contract, label: &str, out: &mut Vec<RawSpec>) {
    let contract = *contract;
    for cols in widths(plan) {
        let rows = rows_for(cols);
        let families = if plan.one_family { &FAMILIES[1..2] } else { &FAMILIES[..] };
        for (f, &family) in families.iter().enumerate() {
            let seed = crate::sweep::gpu::case_seed(plan.seed, "topk_sample.raw", cols, f);
            let temperature = TEMPERATURES[f % TEMPERATURES.len()];
            for k in ks(cols) {
                let name = format!("{}.k{k}", family.name());
                let case_id = id("topk", variant(label, &contract), format!("{rows}x{cols}"), rows * cols, &name, seed);
                let spec = SampleSpec { k, temperature };
                out.push(RawSpec::new(case_id, move || {
                    let logits = topk_rows(family, rows, cols, seed).map_err(|e| e.to_string())?;
                    sample_case(&contract, logits, uniforms(rows, seed), (rows, cols), spec)
                }));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::case::Verdict;

    fn worked_for(contract: &Contract) -> RawCase {
        let ln2 = std::f32::consts::LN_2;
        let logits: Vec<f32> = [0.0f32, ln2, ln2, f32::NEG_INFINITY, 0.0].iter().copied().cycle().take(15).collect();
        let spec = SampleSpec { k: 3, temperature: 1.0 };
        sample_case(contract, logits, vec![0.0, 0.5, 0.9], (3, 5), spec).expect("a case")
    }

    fn worked() -> RawCase {
        worked_for(&SAMPLE_WITH_PROBABILITY)
    }

    #[test]
    fn a_case_holds_the_model_s_draws_and_probabilities() {
        let case = worked();
        assert_eq!(case.expected[0], Array::Int64(vec![1, 2, 0]));
        let Array::Float64(p) = &case.expected[1] else { panic!("float64 probabilities") };
        assert!((p[0] - 0.4).abs() < 1e-7 && (p[2] - 0.2).abs() < 1e-7);
        assert_eq!(ks(1), vec![1]);
        assert_eq!(ks(4097), vec![1, 33, 2048]);
        let u = uniforms(5, 9);
        assert_eq!((u[0], u[1]), (0.0, 0.999_999_94));
    }

    #[test]
    fn the_rule_passes_right_draws_and_names_a_wrong_row() {
        let case = worked();
        let right = [Array::Int64(vec![1, 2, 0]), Array::Float32(vec![0.4, 0.4, 0.2])];
        assert_eq!(SAMPLE_WITH_PROBABILITY.compare(&case, &right), Verdict::Pass);
        // Without the probability output (sample.f32), the columns alone are judged.
        assert_eq!(SAMPLE.compare(&worked_for(&SAMPLE), &right[..1]), Verdict::Pass);
        let wrong_column = [Array::Int64(vec![1, 1, 0]), Array::Float32(vec![0.4, 0.4, 0.2])];
        let Verdict::Fail(m) = SAMPLE_WITH_PROBABILITY.compare(&case, &wrong_column) else { panic!("fails") };
        assert_eq!(m.index, Some(1));
        assert!(m.what.contains("row 1"), "{}", m.what);
        let wrong_p = [Array::Int64(vec![1, 2, 0]), Array::Float32(vec![0.4, 0.41, 0.2])];
        assert!(!SAMPLE_WITH_PROBABILITY.compare(&case, &wrong_p).passed());
        let masked = [Array::Int64(vec![1, 2, 3]), Array::Float32(vec![0.4, 0.4, 0.0])];
        assert!(!SAMPLE_WITH_PROBABILITY.compare(&case, &masked).passed());
        let short = [Array::Int64(vec![1, 2])];
        assert!(!SAMPLE.compare(&worked_for(&SAMPLE), &short).passed());
        let flags = topk_sample_rule_rows(&case, &wrong_column);
        assert_eq!(flags, vec![false, true, false]);
    }

    fn topk_sample_rule_rows(case: &RawCase, got: &[Array]) -> Vec<bool> {
        super::super::topk_sample_rule::failing_rows(&SAMPLE_WITH_PROBABILITY, case, got).expect("sampler data")
    }
}
