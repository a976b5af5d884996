//! The model's answers for the catalogue's inputs, a piece at a time: the
//! direct definitions ([`crate::scan`], [`crate::reduce`],
//! [`crate::arg_reduce`], [`crate::compact`], [`crate::histogram`],
//! [`crate::segmented_reduce`], [`crate::exact`]) folded over consecutive pieces
//! of one input, so that an input of 2^28 items is answered (and digested)
//! while holding one piece. Each is concrete (int32 or f32 items, no type
//! parameter), so that it is compiled here, in this crate's optimised
//! build, whatever the profile of the caller: the receipt gate runs these
//! over gigabytes in a test-profile build.

use crate::arg_reduce::PieceArg;
use crate::exact::FixedSum;
use crate::histogram::histogram_even;
use crate::segmented_reduce::{SegmentEvent, SegmentWalk};
use crate::ModelError;
use primlab_types::HistogramSpec;

/// ((value, index) of the max, (value, index) of the min).
pub type Extremes<T> = ((T, usize), (T, usize));

/// Per segment: the exact sum rounded to nearest and Σ|x| rounded up (two
/// f64 a segment, flattened), and the arg max (value, global index).
pub type FloatSegmentAnswers = (Vec<f64>, Vec<(f32, u64)>);

/// The exclusive and inclusive int64 sum scans of int32 pieces, the
/// kernels' contract: each prefix added modulo 2^64, so each
/// output is the exact prefix whenever that fits int64 and the exact prefix
/// wrapped to int64 otherwise. A prefix of at most 2^32 int32 items has
/// magnitude at most 2^31 · 2^32 = 2^63 (and -2^63 fits), so below 2^32 + 1
/// items every output is exact and no add wraps: the answers are those of
/// the checked [`crate::scan::exclusive_scan_i64`]. Past 2^32 a prefix can
/// leave int64 (2^32 + 1 copies of `i32::MIN`), and the wrapped value is
/// the answer, as CUB's and `torch.cumsum`'s int64 scans give; the later
/// outputs go on from it (they are the exact prefixes modulo 2^64).
pub struct SumScansI32 {
    running: i64,
}

impl SumScansI32 {
    /// The scans of an input of `len` items (any `len`: the adds wrap).
    pub fn new(len: usize) -> SumScansI32 {
        let _ = len;
        SumScansI32 { running: 0 }
    }

    /// The scans of the rest of an input whose earlier items sum to `carry`
    /// (modulo 2^64): a scan resumed at a piece boundary, e.g. by a check
    /// that starts at the piece holding a mismatch.
    pub fn after(carry: i64) -> SumScansI32 {
        SumScansI32 { running: carry }
    }

    /// The (exclusive, inclusive) outputs of the next piece.
    pub fn piece(&mut self, items: &[i32]) -> Result<(Vec<i64>, Vec<i64>), ModelError> {
        let mut exclusive = Vec::with_capacity(items.len());
        let mut inclusive = Vec::with_capacity(items.len());
        for &x in items {
            exclusive.push(self.running);
            self.running = self.running.wrapping_add(i64::from(x));
            inclusive.push(self.running);
        }
        Ok((exclusive, inclusive))
    }

    /// The sum (modulo 2^64) of every item so far: the next piece's carry.
    pub fn carry(&self) -> i64 {
        self.running
    }
}

/// The int64 sum of int32 pieces, added modulo 2^64 as the kernels add
/// (the rule of [`SumScansI32`]): the exact sum whenever it fits int64,
/// always so for at most 2^32 items ([`crate::reduce::reduce_i64`]'s
/// answer), else the exact sum wrapped to int64.
pub struct SumI32 {
    running: i64,
}

impl SumI32 {
    /// The sum of an input of `len` items (any `len`: the adds wrap).
    pub fn new(len: usize) -> SumI32 {
        let _ = len;
        SumI32 { running: 0 }
    }

    /// Adds the next piece.
    pub fn piece(&mut self, items: &[i32]) -> Result<(), ModelError> {
        self.running = items.iter().fold(self.running, |s, &x| s.wrapping_add(i64::from(x)));
        Ok(())
    }

    /// The sum so far.
    pub fn value(&self) -> i64 {
        self.running
    }
}

/// Arg max and arg min of int32 pieces.
pub struct ArgsI32 {
    max: PieceArg<i32>,
    min: PieceArg<i32>,
}

impl Default for ArgsI32 {
    fn default() -> Self {
        ArgsI32 { max: PieceArg::max(), min: PieceArg::min() }
    }
}

impl ArgsI32 {
    /// Takes the next piece.
    pub fn piece(&mut self, items: &[i32]) -> Result<(), ModelError> {
        self.max.piece(items)?;
        self.min.piece(items)
    }

    /// ((value, index) of the max, of the min).
    pub fn finish(&self) -> Result<Extremes<i32>, ModelError> {
        Ok((self.max.finish()?, self.min.finish()?))
    }
}

/// Arg max and arg min of f32 pieces.
pub struct ArgsF32 {
    max: PieceArg<f32>,
    min: PieceArg<f32>,
}

impl Default for ArgsF32 {
    fn default() -> Self {
        ArgsF32 { max: PieceArg::max(), min: PieceArg::min() }
    }
}

impl ArgsF32 {
    /// Takes the next piece.
    pub fn piece(&mut self, items: &[f32]) -> Result<(), ModelError> {
        self.max.piece(items)?;
        self.min.piece(items)
    }

    /// ((value, index) of the max, of the min).
    pub fn finish(&self) -> Result<Extremes<f32>, ModelError> {
        Ok((self.max.finish()?, self.min.finish()?))
    }
}

/// The kept items of one piece of a compaction: by the predicate x > 0
/// ([`crate::compact::compact_positive`]'s output) and by `flags` (a nonzero
/// flag keeps: [`crate::compact::compact_flags`]'s output for the 0/1
/// flags). Items are kept independently and in order, so the kept items of
/// the whole are the pieces' kept items in order. Error: flags of another
/// length than the items.
pub fn compact_piece(items: &[i32], flags: &[u8]) -> Result<(Vec<i32>, Vec<i32>), ModelError> {
    if items.len() != flags.len() {
        return Err(ModelError::BadShape {
            primitive: "compact",
            detail: format!("{} items but {} flags", items.len(), flags.len()),
        });
    }
    let positive = items.iter().copied().filter(|&x| x > 0).collect();
    let flagged = items.iter().zip(flags).filter(|(_, &f)| f != 0).map(|(&x, _)| x).collect();
    Ok((positive, flagged))
}

/// Adds the bin counts of one piece of int32 samples to `counts` (counts
/// of disjoint pieces add up to the whole's [`histogram_even`]).
pub fn histogram_piece_i32(samples: &[i32], spec: &HistogramSpec<i32>, counts: &mut [u64]) -> Result<(), ModelError> {
    add_counts(histogram_even(samples, spec)?, counts)
}

/// [`histogram_piece_i32`] for f32 samples.
pub fn histogram_piece_f32(samples: &[f32], spec: &HistogramSpec<f32>, counts: &mut [u64]) -> Result<(), ModelError> {
    add_counts(histogram_even(samples, spec)?, counts)
}

fn add_counts(piece: Vec<u64>, counts: &mut [u64]) -> Result<(), ModelError> {
    if piece.len() != counts.len() {
        return Err(ModelError::BadShape {
            primitive: "histogram",
            detail: format!("{} counts for {} bins", piece.len(), counts.len()),
        });
    }
    counts.iter_mut().zip(piece).for_each(|(c, p)| *c += p);
    Ok(())
}

/// Per-segment int64 sums and maxima of int32 pieces over half-open
/// offsets ([`crate::segmented_reduce::segmented_sum`], [`crate::segmented_reduce::segmented_max`]):
/// an empty segment sums to 0 and has the maximum `i64::MIN`. The sums are
/// plain `i64` additions: fewer than 2^32 terms of magnitude at most 2^31
/// stay below 2^63.
pub struct SegmentsI32 {
    walk: SegmentWalk,
    sums: Vec<i64>,
    maxima: Vec<i64>,
}

impl SegmentsI32 {
    /// The segments of an input of `n` items. Errors: bad offsets.
    pub fn new(offsets: &[usize], n: usize) -> Result<SegmentsI32, ModelError> {
        let segments = offsets.len().saturating_sub(1);
        Ok(SegmentsI32 {
            walk: SegmentWalk::new(offsets, n)?,
            sums: vec![0; segments],
            maxima: vec![i64::MIN; segments],
        })
    }

    /// Takes the next piece.
    pub fn piece(&mut self, items: &[i32]) {
        let (sums, maxima) = (&mut self.sums, &mut self.maxima);
        self.walk.piece(items, |event| {
            if let SegmentEvent::Items(s, items) = event {
                for &x in items {
                    sums[s] += i64::from(x);
                    maxima[s] = maxima[s].max(i64::from(x));
                }
            }
        });
    }

    /// (sums, maxima), one per segment.
    pub fn finish(self) -> (Vec<i64>, Vec<i64>) {
        (self.sums, self.maxima)
    }
}

/// Per segment of f32 pieces: the exact sum rounded to nearest f64 and
/// Σ|x| rounded up (the digest of [`crate::exact::exact_sum_f32`]'s
/// `rounded_f64` and `sum_abs`), and the arg max with its global index
/// ([`crate::segmented_reduce::segmented_argmax`]: the first of equal values;
/// `(-inf, u64::MAX)` for an empty segment). One segment's accumulators
/// are held at a time. Errors: a NaN or ±inf inside a segment.
pub struct SegmentsF32 {
    walk: SegmentWalk,
    state: FloatSegmentState,
}

/// What [`SegmentsF32`] holds besides its walk.
struct FloatSegmentState {
    offsets: Vec<usize>,
    sum: FixedSum,
    sum_abs: FixedSum,
    best: (f32, u64),
    exact: Vec<f64>,
    argmax: Vec<(f32, u64)>,
    at: usize,
    failure: Option<ModelError>,
}

impl FloatSegmentState {
    /// Takes one event of a piece that starts at item `start`.
    fn on(&mut self, event: SegmentEvent<'_, f32>, start: usize) {
        match event {
            SegmentEvent::Items(s, items) => {
                let first = self.offsets[s].max(start);
                for (k, &x) in items.iter().enumerate() {
                    if !x.is_finite() {
                        let index = first + k;
                        let error = ModelError::NonFinite { primitive: "segmented_argmax", index, value: f64::from(x) };
                        self.failure.get_or_insert(error);
                        return;
                    }
                    self.sum.add(f64::from(x));
                    self.sum_abs.add(f64::from(x.abs()));
                    if x > self.best.0 {
                        self.best = (x, (first + k) as u64);
                    }
                }
            }
            SegmentEvent::End(_) => {
                self.exact.extend([self.sum.to_f64(), self.sum_abs.to_f64_up()]);
                self.argmax.push(self.best);
                (self.sum, self.sum_abs, self.best) = (FixedSum::new(), FixedSum::new(), (f32::NEG_INFINITY, u64::MAX));
            }
        }
    }
}

impl SegmentsF32 {
    /// The segments of an input of `n` items. Errors: bad offsets.
    pub fn new(offsets: &[usize], n: usize) -> Result<SegmentsF32, ModelError> {
        let segments = offsets.len().saturating_sub(1);
        let state = FloatSegmentState {
            offsets: offsets.to_vec(),
            sum: FixedSum::new(),
            sum_abs: FixedSum::new(),
            best: (f32::NEG_INFINITY, u64::MAX),
            exact: Vec::with_capacity(2 * segments),
            argmax: Vec::with_capacity(segments),
            at: 0,
            failure: None,
        };
        Ok(SegmentsF32 { walk: SegmentWalk::new(offsets, n)?, state })
    }

    /// Takes the next piece.
    pub fn piece(&mut self, items: &[f32]) -> Result<(), ModelError> {
        let start = self.state.at;
        let state = &mut self.state;
        self.walk.piece(items, |event| state.on(event, start));
        state.at += items.len();
        state.failure.take().map_or(Ok(()), Err)
    }

    /// (exact sums as [rounded, Σ|x| up] pairs flattened, arg max pairs), one per segment.
    pub fn finish(mut self) -> Result<FloatSegmentAnswers, ModelError> {
        let at = self.state.at;
        let state = &mut self.state;
        self.walk.finish(|event| state.on(event, at));
        match self.state.failure {
            Some(e) => Err(e),
            None => Ok((self.state.exact, self.state.argmax)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Past 2^32 items a prefix can leave int64: the scans and the sum wrap
    /// modulo 2^64 (resumed here at the carry of 2^32 items of i32::MIN,
    /// -2^63, the last prefix that fits), and the later outputs are the
    /// exact prefixes modulo 2^64; exclusive[i] + x[i] = inclusive[i] holds
    /// in wrapping arithmetic throughout.
    #[test]
    fn the_int32_scans_and_sum_wrap_modulo_2_64_past_2_32() {
        let at_2_32 = (1i128 << 32) * i128::from(i32::MIN);
        assert_eq!(at_2_32, i128::from(i64::MIN), "2^32 items of i32::MIN sum to exactly -2^63");
        let mut scans = SumScansI32::after(i64::MIN);
        let x = [i32::MIN, 5, i32::MAX, -7];
        let (e, i) = scans.piece(&x).unwrap();
        let mut exact = at_2_32;
        for k in 0..x.len() {
            assert_eq!(e[k], exact as i64, "exclusive {k}: the exact prefix wrapped");
            exact += i128::from(x[k]);
            assert_eq!(i[k], exact as i64, "inclusive {k}");
            assert_eq!(e[k].wrapping_add(i64::from(x[k])), i[k]);
        }
        assert_eq!(e[1], i64::MAX - (1 << 31) + 1, "-2^63 - 2^31 wraps to 2^63 - 2^31");
        assert_eq!(scans.carry(), exact as i64);
        let mut sum = SumI32::new(usize::MAX);
        sum.piece(&[i32::MIN; 4]).unwrap();
        assert_eq!(sum.value(), 4 * i64::from(i32::MIN));
        sum.running = i64::MIN;
        sum.piece(&[-1]).unwrap();
        assert_eq!(sum.value(), i64::MAX, "the sum wraps as the kernels' SumI64 adds");
    }

    #[test]
    fn every_fold_in_pieces_is_its_direct_definition() {
        let x: Vec<i32> = (0..3001).map(|i| ((i * 7919) % 41) - 20).collect();
        let f: Vec<f32> = x.iter().map(|&v| v as f32 * 0.37).collect();
        let flags: Vec<u8> = (0..x.len()).map(|i| [0u8, 1, 7, 255][i % 4]).collect();
        let offsets = vec![0, 0, 5, 1000, 1000, 2999, 3001];
        let spec = HistogramSpec { bins: 7, lower: -10, upper: 11 };
        for piece in [1usize, 64, 1000, 3001] {
            let (mut scans, mut sum, mut args, mut fargs) =
                (SumScansI32::new(x.len()), SumI32::new(x.len()), ArgsI32::default(), ArgsF32::default());
            let (mut ints, mut floats) =
                (SegmentsI32::new(&offsets, x.len()).unwrap(), SegmentsF32::new(&offsets, x.len()).unwrap());
            let (mut ex, mut inc, mut positive, mut flagged) = (vec![], vec![], vec![], vec![]);
            let mut counts = vec![0u64; 7];
            for ((xs, fs), gs) in x.chunks(piece).zip(f.chunks(piece)).zip(flags.chunks(piece)) {
                let (e, i) = scans.piece(xs).unwrap();
                ex.extend(e);
                inc.extend(i);
                sum.piece(xs).unwrap();
                args.piece(xs).unwrap();
                fargs.piece(fs).unwrap();
                ints.piece(xs);
                floats.piece(fs).unwrap();
                let (p, g) = compact_piece(xs, gs).unwrap();
                positive.extend(p);
                flagged.extend(g);
                histogram_piece_i32(xs, &spec, &mut counts).unwrap();
            }
            assert_eq!(ex, crate::scan::exclusive_scan_i64(&x).unwrap());
            assert_eq!(inc, crate::scan::inclusive_scan_i64(&x).unwrap());
            assert_eq!(sum.value(), crate::reduce::reduce_i64(&x).unwrap());
            let argmax = crate::arg_reduce::argmax(&x).unwrap();
            assert_eq!(args.finish().unwrap(), (argmax, crate::arg_reduce::argmin(&x).unwrap()));
            let float_args = fargs.finish().unwrap();
            assert_eq!(float_args, (crate::arg_reduce::argmax(&f).unwrap(), crate::arg_reduce::argmin(&f).unwrap()));
            assert_eq!(positive, crate::compact::compact_positive(&x).output);
            let binary: Vec<u8> = flags.iter().map(|&g| u8::from(g != 0)).collect();
            assert_eq!(flagged, crate::compact::compact_flags(&x, &binary).unwrap().output);
            assert_eq!(counts, histogram_even(&x, &spec).unwrap());
            let (sums, maxima) = ints.finish();
            assert_eq!(sums, crate::segmented_reduce::segmented_sum(&x, &offsets).unwrap());
            assert_eq!(maxima, crate::segmented_reduce::segmented_max(&x, &offsets).unwrap());
            let (exact, argmax) = floats.finish().unwrap();
            let want: Vec<f64> = offsets
                .windows(2)
                .flat_map(|w| {
                    let e = crate::exact::exact_sum_f32(&f[w[0]..w[1]]).unwrap();
                    [e.rounded_f64, e.sum_abs]
                })
                .collect();
            assert_eq!(exact, want, "piece {piece}");
            assert_eq!(argmax, crate::segmented_reduce::segmented_argmax(&f, &offsets).unwrap(), "piece {piece}");
        }
    }
}
