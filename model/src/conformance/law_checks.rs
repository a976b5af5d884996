//! Laws of compaction, segmented reduction and histograms.

use super::compare::{holds, ok, same, same_slices};
use super::data::{wrong_data, Data};
use super::{Check, CheckOutcome, Mismatch};
use crate::arg_reduce::argmax;
use crate::compact::{compact_flags, compact_positive, scatter_into};
use crate::fixtures::histogram::{F32_SPECS, I32_SPECS};
use crate::generators::segment_offsets;
use crate::histogram::{histogram_even, mathematical_bin_f32, HistogramSample, HistogramSpec};
use crate::reduce::reduce_i64;
use crate::scan::exclusive_scan_i64;
use crate::segmented_reduce::{segmented_argmax, segmented_max, segmented_sum};

/// Samples whose f32 bin is compared with the exact rational bin (rug is slow per sample).
const F32_EXACT_BIN_SAMPLES: usize = 5000;

pub(super) fn compact(check: &Check, data: &Data) -> Result<CheckOutcome, Mismatch> {
    let Data::Ints(x) = data else {
        return Err(wrong_data(check));
    };
    let r = compact_positive(x);
    let mut n = same(check, "count = sum of flags", &r.flags.iter().map(|&f| usize::from(f)).sum::<usize>(), &r.count)?;
    let scanned = ok(
        check,
        "exclusive_scan of flags",
        exclusive_scan_i64(&r.flags.iter().map(|&f| i64::from(f)).collect::<Vec<_>>()),
    )?;
    let destinations: Vec<i64> = r.destinations.iter().map(|&d| d as i64).collect();
    n += same_slices(check, "destinations = exclusive scan of flags", &scanned, &destinations)?;
    let kept: Vec<i32> = x.iter().copied().filter(|&v| v > 0).collect();
    n += same_slices(check, "stable output", &kept, &r.output)?;
    n += same(check, "compact_flags agrees", &r, &ok(check, "compact_flags", compact_flags(x, &r.flags))?)?;
    let poison = i32::MIN;
    let mut out = vec![poison; x.len()];
    let count = ok(check, "scatter_into", scatter_into(x, &r.flags, &mut out))?;
    n += same_slices(check, "scattered prefix", &r.output, &out[..count])?;
    let untouched = out[count..].iter().all(|&v| v == poison);
    n += holds(check, "rejected items write nothing (tail keeps its poison)", untouched, || {
        format!("{:?}", &out[count..])
    })?;
    Ok(CheckOutcome { comparisons: n, note: format!("kept {}", r.count) })
}

pub(super) fn segmented(check: &Check, data: &Data) -> Result<CheckOutcome, Mismatch> {
    let Data::Ints(x) = data else {
        return Err(wrong_data(check));
    };
    let offsets = segment_offsets(x.len(), check.seed.rotate_left(17));
    let sums = ok(check, "segmented_sum", segmented_sum(x, &offsets))?;
    let maxes = ok(check, "segmented_max", segmented_max(x, &offsets))?;
    let args = ok(check, "segmented_argmax", segmented_argmax(x, &offsets))?;
    let total = ok(check, "reduce_i64", reduce_i64(x))?;
    let mut n = same(check, "segment sums add up to the total", &total, &sums.iter().sum::<i64>())?;
    for (s, w) in offsets.windows(2).enumerate() {
        let slice = &x[w[0]..w[1]];
        n += same(check, &format!("segment {s} sum"), &ok(check, "reduce_i64", reduce_i64(slice))?, &sums[s])?;
        let expected_max = slice.iter().map(|&v| i64::from(v)).max().unwrap_or(i64::MIN);
        n += same(check, &format!("segment {s} max"), &expected_max, &maxes[s])?;
        let expected_arg = match argmax(slice) {
            Ok((v, i)) => (v, (w[0] + i) as u64),
            Err(_) => (i32::MIN, u64::MAX),
        };
        n += same(check, &format!("segment {s} argmax"), &expected_arg, &args[s])?;
    }
    Ok(CheckOutcome { comparisons: n, note: format!("{} segments", offsets.len() - 1) })
}

fn histogram_law<T: HistogramSample + PartialOrd + Copy>(
    check: &Check,
    samples: &[T],
    spec: &HistogramSpec<T>,
    exact_bin: impl Fn(T) -> Option<usize>,
    tolerance: usize,
    exact_samples: usize,
) -> Result<usize, Mismatch> {
    let counts = ok(check, "histogram_even", histogram_even(samples, spec))?;
    let in_range = samples.iter().filter(|&&x| spec.lower <= x && x < spec.upper).count() as u64;
    let mut n = same(check, "counts add up to the in-range samples", &in_range, &counts.iter().sum::<u64>())?;
    let mut recount = vec![0u64; spec.bins as usize];
    for (i, &x) in samples.iter().enumerate() {
        if let Some(b) = T::bin(spec, x) {
            recount[b] += 1;
            if i < exact_samples {
                if let Some(e) = exact_bin(x) {
                    if b.abs_diff(e) > tolerance {
                        return Err(Mismatch {
                            check: check.describe(),
                            index: Some(i),
                            expected: format!("bin {e} (exact) within {tolerance}"),
                            got: format!("bin {b}"),
                        });
                    }
                }
            }
        }
    }
    n += same_slices(check, "counts = per-sample bins", &recount, &counts)?;
    Ok(n)
}

pub(super) fn histogram(check: &Check, data: &Data) -> Result<CheckOutcome, Mismatch> {
    let mut n = 0;
    match data {
        Data::Ints(x) => {
            for &(bins, lower, upper) in &I32_SPECS {
                let spec = HistogramSpec { bins, lower, upper };
                let exact = |v: i32| {
                    let offset = i128::from(v) - i128::from(lower);
                    let width = i128::from(upper) - i128::from(lower);
                    (0..width).contains(&offset).then(|| (offset * i128::from(bins) / width) as usize)
                };
                n += histogram_law(check, x, &spec, exact, 0, usize::MAX)?;
            }
        }
        Data::Floats(x, _) => {
            for &(bins, lower, upper) in &F32_SPECS {
                let spec = HistogramSpec { bins, lower, upper };
                n += histogram_law(check, x, &spec, |v| mathematical_bin_f32(&spec, v), 1, F32_EXACT_BIN_SAMPLES)?;
            }
        }
        _ => return Err(wrong_data(check)),
    }
    Ok(CheckOutcome { comparisons: n, note: "all specs".into() })
}
