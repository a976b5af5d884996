//! The correctly rounded sums ([`ExactSumVariant`]) timed beside the float
//! sums: same report group (`float_reduce`) and op names, so each table puts
//! `correctly_rounded` next to the f32-accumulating variants and CUB's
//! `DeviceReduce::Sum`. Checked bit for bit against the model's binned-limb
//! sum (equal to the rug reference by the model's tests). Logical bytes:
//! n x element size. There is one schedule ([`ExactSumVariant::best_for`]
//! always answers it), so its record is also its default entry's: no
//! separate `default` record (the op's `default` is the float sum's).

use super::float_reduce::{OP_BF16, OP_F32};
use super::host_value::HostValue;
use super::{Described, EntryId, Registry};
use crate::bench::config::BenchConfig;
use crate::bench::pool::FetchInput;
use crate::bench::record::BenchSize;
use kernels::exact_sum::EXACT_RECORD_WORDS;
use kernels::{ExactSumGrid, ExactSumPlan, ExactSumVariant, FloatElement};
use model::exact::BinnedAccumulator;
use rayon::prelude::*;

/// The correctly rounded sum of `host` by the model's binned accumulator,
/// over parallel chunks merged exactly.
fn expected_sum<T: HostValue>(host: &[T]) -> f32 {
    host.par_chunks(1 << 16)
        .map(|chunk| {
            let mut acc = BinnedAccumulator::new();
            chunk.iter().for_each(|&v| acc.add(v.value_f32()));
            acc
        })
        .reduce(BinnedAccumulator::new, |mut a, b| {
            a.merge(&b);
            a
        })
        .round()
}

fn add<T>(registry: &mut Registry, op: &'static str, dtype: &'static str, n: usize, input: FetchInput<T>)
where
    T: FloatElement + HostValue,
{
    let variant = ExactSumVariant::CorrectlyRounded;
    let id = EntryId::primlab("float_reduce", op, variant.name(), BenchSize::Elements(n), dtype);
    let records_bytes = 8 * EXACT_RECORD_WORDS as u64 * kernels::exact_sum::EXACT_MAX_BLOCKS as u64;
    registry.add(id, records_bytes + (1 << 16), move |ctx| {
        let gpu = ctx.gpu;
        let inputs = input(&mut ctx.pool, n)?;
        let mut plan = ExactSumPlan::<T>::new(gpu, variant, n, ExactSumGrid::Auto)?;
        plan.enqueue(inputs.device.next())?;
        let got = plan.finish()?;
        let expected = expected_sum(&inputs.host);
        let element = std::mem::size_of::<T>() as u64;
        let params = serde_json::json!({ "grid": plan.grid(), "record_bytes": 8 * EXACT_RECORD_WORDS as u64 * plan.grid() as u64 });
        let described = Described::of_plan(&plan.describe(), element * n as u64, inputs.device.policy(), params);
        let what = "bits equal to the model's correctly rounded sum (binned limbs = rug reference)";
        if got.to_bits() != expected.to_bits() {
            let mismatch =
                format!("expected {expected:e} ({:#010x}), got {got:e} ({:#010x})", expected.to_bits(), got.to_bits());
            return Ok(described.wrong(what, mismatch));
        }
        let timing = ctx.measure(n, || plan.enqueue(inputs.device.next()))?;
        Ok(described.timed(what, timing))
    });
}

/// Registers `correctly_rounded` at every size, float32 and bf16.
pub fn register(config: &BenchConfig, registry: &mut Registry) {
    for n in config.sizes() {
        add::<f32>(registry, OP_F32, "f32", n, |pool, n| pool.floats(n));
        add::<half::bf16>(registry, OP_BF16, "bf16", n, |pool, n| pool.floats_bf16(n));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::inputs;

    #[test]
    fn expected_sums_match_the_rug_reference() {
        let x = inputs::uniform_floats(1 << 17);
        assert_eq!(expected_sum(&x).to_bits(), model::exact::correctly_rounded_sum_f32(&x).to_bits());
        let b = inputs::to_bf16(&x);
        let widened: Vec<f32> = b.iter().map(|&v| v.value_f32()).collect();
        assert_eq!(expected_sum(&b).to_bits(), model::exact::correctly_rounded_sum_f32(&widened).to_bits());
    }
}
