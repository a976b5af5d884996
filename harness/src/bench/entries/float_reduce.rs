//! float32 and bf16 sums with float32 accumulation, every
//! [`FloatReduceVariant`] (its atomic-per-element, atomic-per-block and
//! two-pass f32 records are the crossover study's), against CUB's
//! `DeviceReduce::Sum` (float) and `torch.sum`. Logical bytes: n x element size.
//! Checked against the exact sum within the kernels' declared bound.

use super::host_value::HostValue;
use super::{check, variants_and_default, Described, EntryId, Registry, Role};
use crate::bench::config::BenchConfig;
use crate::bench::pool::FetchInput;
use crate::bench::record::BenchSize;
use kernels::float_reduce::FLOAT_TILE_ITEMS;
use kernels::{FloatElement, FloatReducePlan, FloatReduceVariant};
use rayon::prelude::*;

/// The op name of the float32 sum (shared with the baselines and the crossover study).
pub const OP_F32: &str = "float_reduce_sum_f32";
/// The op name of the bf16 sum.
pub const OP_BF16: &str = "float_reduce_sum_bf16";

/// (exact sum, sum of magnitudes). Every input is a multiple of 2^-24 with
/// magnitude below 2^-1, so `x * 2^24` is an integer below 2^23 and the
/// int64 sum of 2^28 of them is exact.
fn exact_sum<T: HostValue>(host: &[T]) -> (f64, f64) {
    let scale = 16_777_216.0;
    let (sum, abs) = host
        .par_chunks(1 << 18)
        .map(|c| {
            c.iter().fold((0i64, 0i64), |(s, a), &x| {
                let v = (x.value() * scale) as i64;
                (s + v, a + v.abs())
            })
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    (sum as f64 / scale, abs as f64 / scale)
}

/// Atomic adds one enqueue issues: one per block, one per element, or none.
fn atomics(variant: FloatReduceVariant, n: usize, grids: &[u32]) -> u64 {
    match variant {
        FloatReduceVariant::AtomicPerBlock => grids.first().copied().unwrap_or(1) as u64,
        FloatReduceVariant::AtomicPerElement => n as u64,
        FloatReduceVariant::FixedTree | FloatReduceVariant::Compensated | FloatReduceVariant::TwoPass => 0,
    }
}

fn add<T>(
    registry: &mut Registry,
    op: &'static str,
    dtype: &'static str,
    n: usize,
    (variant, role): (FloatReduceVariant, Role),
    input: FetchInput<T>,
) where
    T: FloatElement + HostValue,
{
    let id = EntryId::primlab("float_reduce", op, variant.name(), BenchSize::Elements(n), dtype);
    registry.add_as(role, id, 8 * (n / FLOAT_TILE_ITEMS) as u64 + (1 << 16), move |ctx| {
        let gpu = ctx.gpu;
        let inputs = input(&mut ctx.pool, n)?;
        let mut plan = FloatReducePlan::<T>::new(gpu, variant, n)?;
        plan.enqueue(inputs.device.next())?;
        let got = plan.finish()?;
        let (exact, sum_abs) = exact_sum(&inputs.host);
        let bound = variant.error_bound(n, sum_abs, exact.abs());
        let element = std::mem::size_of::<T>() as u64;
        let params = serde_json::json!({
            "grids": plan.grids(),
            "atomics": atomics(variant, n, plan.grids()),
            "elements_per_block": FLOAT_TILE_ITEMS,
            "bound": bound,
            "tree_depth": variant.tree_depth(n),
        });
        let described = Described::of_plan(&plan.describe(), element * n as u64, inputs.device.policy(), params);
        let what = "|sum - exact| within the variant's declared bound (FloatReduceVariant::error_bound)";
        if let Err(mismatch) = check::float_within("sum", exact, got, bound) {
            return Ok(described.wrong(what, mismatch));
        }
        let timing = ctx.measure(n, || plan.enqueue(inputs.device.next()))?;
        Ok(described.timed(what, timing))
    });
}

/// Registers every variant at every size, float32 and bf16, each followed
/// by the default (deterministic) entry ([`FloatReduceVariant::best_for`]).
pub fn register(config: &BenchConfig, registry: &mut Registry) {
    for n in config.sizes() {
        let entries = variants_and_default(&FloatReduceVariant::ALL, FloatReduceVariant::best_for(n));
        for &entry in &entries {
            add::<f32>(registry, OP_F32, "f32", n, entry, |pool, n| pool.floats(n));
        }
        for &entry in &entries {
            add::<half::bf16>(registry, OP_BF16, "bf16", n, entry, |pool, n| pool.floats_bf16(n));
        }
    }
}

/// Registers the crossover study's f32 variants only (when float_reduce
/// itself is not selected).
pub fn register_crossover(config: &BenchConfig, registry: &mut Registry) {
    for n in config.sizes() {
        for variant in
            [FloatReduceVariant::AtomicPerElement, FloatReduceVariant::AtomicPerBlock, FloatReduceVariant::TwoPass]
        {
            add::<f32>(registry, OP_F32, "f32", n, (variant, Role::Variant), |pool, n| pool.floats(n));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::inputs;

    #[test]
    fn exact_sums_of_f32_and_bf16_inputs() {
        let x = inputs::uniform_floats(1 << 16);
        let (sum, abs) = exact_sum(&x);
        let reference: f64 = x.iter().map(|&v| v as f64).sum();
        assert_eq!(sum, reference);
        assert!(abs > 0.0);
        let b = inputs::to_bf16(&x);
        let (bsum, _) = exact_sum(&b);
        let breference: f64 = b.iter().map(|&v| v.to_f64()).sum();
        assert!((bsum - breference).abs() < 1e-9);
    }

    #[test]
    fn atomics_are_counted_per_variant() {
        assert_eq!(atomics(FloatReduceVariant::AtomicPerElement, 1 << 20, &[256]), 1 << 20);
        assert_eq!(atomics(FloatReduceVariant::AtomicPerBlock, 1 << 20, &[256]), 256);
        assert_eq!(atomics(FloatReduceVariant::TwoPass, 1 << 20, &[256, 1]), 0);
    }
}
