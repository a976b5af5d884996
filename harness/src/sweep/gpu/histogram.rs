//! GPU cases of the even-bin histogram: int32 and f32 samples, every
//! variant, uniform and skewed (all samples in one bin) data, 1 to 4096
//! bins, ranges narrower than the data (out-of-range samples not counted).

use super::{case_seed, gpu_error, sized_id, GpuCase, Inputs};
use crate::sweep::case::Verdict;
use crate::sweep::compare;
use crate::sweep::digest::Fingerprint;
use crate::sweep::SweepPlan;
use kernels::{HistogramSpec, HistogramVariant};
use model::generators::{ints, uniform_f32, DataFamily};
use model::histogram::histogram_even;

/// (name, family, bins, lower, upper) of an int32 shape.
pub(crate) type IntShape = (&'static str, DataFamily, usize, i32, i32);

/// The int32 shapes.
const INT_SHAPES: [IntShape; 6] = [
    ("bins19", DataFamily::SmallInts, 19, -9, 10),
    ("bins1", DataFamily::SmallInts, 1, -9, 10),
    ("narrow7", DataFamily::SmallInts, 7, -3, 4),
    ("skewed", DataFamily::SmallInts, 19, -9, 10),
    ("bins4096_full_range", DataFamily::FullRangeI32, 4096, i32::MIN, i32::MAX),
    ("bins33_wide", DataFamily::FullRangeI32, 33, -1_000_000_000, 1_000_000_000),
];

/// The int32 samples of `shape`.
pub(crate) fn int_input(shape: &str, family: DataFamily, n: usize, seed: u64) -> Result<Vec<i32>, String> {
    if shape == "skewed" {
        // Every sample in one bin: the contention case of the privatized kernel.
        return Ok(vec![3; n]);
    }
    ints(family, n, seed).map_err(|e| e.to_string())
}

fn check(expected: &[u64], got: &[u32]) -> Verdict {
    let widened: Vec<u64> = got.iter().map(|&c| c as u64).collect();
    compare::exact(expected, &widened, "bin counts")
}

/// Samples and the model's bin counts.
struct HistogramCase<T> {
    samples: Vec<T>,
    counts: Vec<u64>,
}

fn counts_digest<T>(c: &HistogramCase<T>) -> String {
    Fingerprint::new().u64s(c.counts.iter().copied()).finish()
}

/// The int32 shapes visited at `n`; shape `s`'s seed is
/// `case_seed(plan.seed, "histogram", n, s)`. The largest sizes keep the
/// benchmark shape and the skewed one.
pub(crate) fn int_shapes(plan: &SweepPlan, n: usize) -> &'static [IntShape] {
    const LARGE: [IntShape; 2] = [INT_SHAPES[0], INT_SHAPES[3]];
    if plan.one_family {
        &INT_SHAPES[..1]
    } else if n >= 1 << 24 {
        &LARGE
    } else {
        &INT_SHAPES
    }
}

/// The f32 shape: samples uniform in [-1, 1) over [-0.5, 0.5) (half are
/// out of range); its seed is `case_seed(plan.seed, "histogram.f32", n, 0)`.
pub(crate) const F32_SPEC: HistogramSpec<f32> = HistogramSpec { bins: 100, lower: -0.5, upper: 0.5 };

/// Whether the f32 shape is visited at `n`.
pub(crate) fn visits_f32(plan: &SweepPlan, n: usize) -> bool {
    !(plan.one_family && n > 4099)
}

/// Appends every histogram case of `plan`.
pub fn cases(plan: &SweepPlan, out: &mut Vec<GpuCase>) {
    let int_inputs: Inputs<HistogramCase<i32>> = Inputs::default();
    let float_inputs: Inputs<HistogramCase<f32>> = Inputs::default();
    for &n in &plan.sizes {
        for (s, &(shape, family, bins, lower, upper)) in int_shapes(plan, n).iter().enumerate() {
            let seed = case_seed(plan.seed, "histogram", n, s);
            let input = int_inputs.input(
                format!("{n}/{shape}/{seed}"),
                move || {
                    let samples = int_input(shape, family, n, seed)?;
                    let spec = HistogramSpec { bins: bins as u32, lower, upper };
                    let counts = histogram_even(&samples, &spec).map_err(|e| e.to_string())?;
                    Ok(HistogramCase { samples, counts })
                },
                move |c| {
                    Fingerprint::new()
                        .i32s(&c.samples)
                        .text(&format!("bins={bins} lower={lower} upper={upper}"))
                        .finish()
                },
            );
            for variant in HistogramVariant::ALL {
                let case_id = sized_id("histogram", format!("{}.i32.{shape}", variant.name()), n, &family.name(), seed);
                out.push(input.case(case_id, "counts", counts_digest, move |gpu, c| {
                    match gpu.histogram_even_i32(variant, &c.samples, HistogramSpec { bins: bins as u32, lower, upper })
                    {
                        Ok(got) => check(&c.counts, &got),
                        Err(e) => gpu_error(&e),
                    }
                }));
            }
        }
        if !visits_f32(plan, n) {
            continue;
        }
        let seed = case_seed(plan.seed, "histogram.f32", n, 0);
        let input = float_inputs.input(
            format!("{n}/f32/{seed}"),
            move || {
                let samples = uniform_f32(n, seed);
                let counts = histogram_even(&samples, &F32_SPEC).map_err(|e| e.to_string())?;
                Ok(HistogramCase { samples, counts })
            },
            |c| Fingerprint::new().f32s(&c.samples).text("bins=100 lower=-0.5 upper=0.5").finish(),
        );
        for variant in HistogramVariant::ALL {
            let case_id = sized_id(
                "histogram",
                format!("{}.f32.bins100", variant.name()),
                n,
                &DataFamily::UniformFloat.name(),
                seed,
            );
            out.push(input.case(case_id, "counts", counts_digest, move |gpu, c| {
                match gpu.histogram_even_f32(variant, &c.samples, F32_SPEC) {
                    Ok(got) => check(&c.counts, &got),
                    Err(e) => gpu_error(&e),
                }
            }));
        }
    }
}
