//! GPU cases of the even-bin histogram: int32 and f32 samples, every
//! variant, uniform and skewed (all samples in one bin) data, 1 to 4096
//! bins, ranges narrower than the data (out-of-range samples not counted).
//! Every case has a `.windows` twin that counts the same samples into u64
//! in three windows ([`wide_window`]), the path an input past 2^32 samples
//! takes (`histogram_streamed`), so the windows' edges and their adding are
//! proved at every size the sweep and the sanitizers visit.

use super::pieces::{pieced, Part};
use super::streamed::STREAMED_FROM;
use super::{case_seed, gpu_error, sized_id, wide_window, GpuCase, Inputs, Keep, Pieced};
use crate::sweep::case::Verdict;
use crate::sweep::compare;
use crate::sweep::digest::Fingerprint;
use crate::sweep::SweepPlan;
use kernels::{HistogramSpec, HistogramVariant};
use model::generators::{int_pieces, ints, uniform_f32_pieces, DataFamily, PIECE};
use model::pieces::{histogram_piece_f32, histogram_piece_i32};

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

/// The int32 samples of `shape`, a piece at a time.
fn int_sample_pieces(
    shape: &str,
    family: DataFamily,
    n: usize,
    seed: u64,
) -> Result<Box<dyn Iterator<Item = Vec<i32>> + Send>, String> {
    if shape == "skewed" {
        let mut left = n;
        return Ok(Box::new(std::iter::from_fn(move || {
            let k = PIECE.min(left);
            left -= k;
            (k > 0).then(|| vec![3; k])
        })));
    }
    Ok(Box::new(int_pieces(family, n, seed).map_err(|e| e.to_string())?))
}

/// Adds the counts of one piece of samples to the counts so far (the model's).
type CountPiece<T> = fn(&[T], &HistogramSpec<T>, &mut [u64]) -> Result<(), model::ModelError>;

/// Samples from `pieces` and their counts under `spec` (added up piece by
/// piece by `count`: counts of disjoint pieces add up to the whole's),
/// digested as they are made.
fn histogram_pieced<T>(
    pieces: impl Iterator<Item = Vec<T>>,
    n: usize,
    (spec, spec_text): (&HistogramSpec<T>, &str),
    count: CountPiece<T>,
    keep: Keep,
) -> Result<Pieced<HistogramCase<T>>, String>
where
    T: model::digest::DigestElement,
{
    let mut samples = Part::<T>::new(keep, n);
    let mut counts = vec![0u64; spec.bins as usize];
    for piece in pieces {
        count(&piece, spec, &mut counts).map_err(|e| e.to_string())?;
        samples.push(&piece);
    }
    let (fingerprint, samples) = samples.end()?;
    let digest = fingerprint.text(spec_text).finish();
    let counts_digest = Fingerprint::new().u64s(counts.iter().copied()).finish();
    Ok(pieced(digest, vec![("counts", counts_digest)], || Some(HistogramCase { samples: samples?, counts })))
}

fn check(expected: &[u64], got: &[u32]) -> Verdict {
    let widened: Vec<u64> = got.iter().map(|&c| c as u64).collect();
    compare::exact(expected, &widened, "bin counts")
}

/// Runs one u32 case and its `.windows` twin (u64 counts in windows of
/// [`wide_window`]) on the same samples.
fn run<T: kernels::HistogramSample>(
    gpu: &kernels::Gpu,
    variant: HistogramVariant,
    windows: bool,
    c: &HistogramCase<T>,
    spec: HistogramSpec<T>,
    u32_counts: impl Fn(&kernels::Gpu, HistogramVariant, &[T], HistogramSpec<T>) -> kernels::GpuResult<Vec<u32>>,
) -> Verdict {
    if windows {
        let window = Some(wide_window(c.samples.len()));
        return match gpu.histogram_even_wide(variant, &c.samples, spec, window) {
            Ok(got) => compare::exact(&c.counts, &got, "bin counts (u64, in windows)"),
            Err(e) => gpu_error(&e),
        };
    }
    match u32_counts(gpu, variant, &c.samples, spec) {
        Ok(got) => check(&c.counts, &got),
        Err(e) => gpu_error(&e),
    }
}

/// The case-id suffixes: the u32 case, then its twin.
const PATHS: [(bool, &str); 2] = [(false, ""), (true, ".windows")];

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

/// Appends every histogram case of `plan`: on host-held samples below 2^32,
/// streamed to the device past it (`histogram_streamed`).
pub fn cases(plan: &SweepPlan, out: &mut Vec<GpuCase>) {
    let int_inputs: Inputs<HistogramCase<i32>> = Inputs::default();
    let float_inputs: Inputs<HistogramCase<f32>> = Inputs::default();
    for &n in &plan.sizes {
        if n >= STREAMED_FROM {
            super::histogram_streamed::cases(plan, n, out);
            continue;
        }
        for (s, &(shape, family, bins, lower, upper)) in int_shapes(plan, n).iter().enumerate() {
            let seed = case_seed(plan.seed, "histogram", n, s);
            let input = int_inputs.pieced(format!("{n}/{shape}/{seed}"), move |keep| {
                let spec = HistogramSpec { bins: bins as u32, lower, upper };
                let text = format!("bins={bins} lower={lower} upper={upper}");
                histogram_pieced(
                    int_sample_pieces(shape, family, n, seed)?,
                    n,
                    (&spec, &text),
                    histogram_piece_i32,
                    keep,
                )
            });
            for variant in HistogramVariant::ALL {
                for (windows, suffix) in PATHS {
                    let name = format!("{}.i32.{shape}{suffix}", variant.name());
                    let case_id = sized_id("histogram", name, n, &family.name(), seed);
                    let spec = HistogramSpec { bins: bins as u32, lower, upper };
                    out.push(input.case(case_id, "counts", counts_digest, move |gpu, c| {
                        run(gpu, variant, windows, c, spec, kernels::Gpu::histogram_even_i32)
                    }));
                }
            }
        }
        if !visits_f32(plan, n) {
            continue;
        }
        let seed = case_seed(plan.seed, "histogram.f32", n, 0);
        let input = float_inputs.pieced(format!("{n}/f32/{seed}"), move |keep| {
            let spec = (&F32_SPEC, "bins=100 lower=-0.5 upper=0.5");
            histogram_pieced(uniform_f32_pieces(n, seed), n, spec, histogram_piece_f32, keep)
        });
        for variant in HistogramVariant::ALL {
            for (windows, suffix) in PATHS {
                let name = format!("{}.f32.bins100{suffix}", variant.name());
                let case_id = sized_id("histogram", name, n, &DataFamily::UniformFloat.name(), seed);
                out.push(input.case(case_id, "counts", counts_digest, move |gpu, c| {
                    run(gpu, variant, windows, c, F32_SPEC, kernels::Gpu::histogram_even_f32)
                }));
            }
        }
    }
}
