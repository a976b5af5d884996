//! Edge-value families: inputs made of the values where a kernel that compares bit patterns
//! instead of values, flushes subnormals, overflows, or bins by hand disagrees with IEEE
//! arithmetic and the model. Every value here is finite (no NaN, no ±inf), so each family
//! serves every contract that rejects nonfinite inputs, except the histogram samples
//! ([`bin_edges_f32`]), whose contract defines NaN and ±inf (not counted).

use super::rng::Rng;
use primlab_types::HistogramSpec;

/// The smallest positive subnormal f32 (2^-149).
const MIN_SUBNORMAL: f32 = f32::from_bits(1);
/// The largest subnormal f32 (2^-126 - 2^-149).
const MAX_SUBNORMAL: f32 = f32::from_bits(0x007f_ffff);

/// The values [`float_edges`] mixes: both zeros, the subnormal range's ends, the smallest
/// normal, ±1 and the largest finite magnitudes, each with both signs.
pub const FLOAT_EDGE_VALUES: [f32; 12] = [
    0.0,
    -0.0,
    MIN_SUBNORMAL,
    -MIN_SUBNORMAL,
    MAX_SUBNORMAL,
    -MAX_SUBNORMAL,
    f32::MIN_POSITIVE,
    -f32::MIN_POSITIVE,
    1.0,
    -1.0,
    f32::MAX,
    f32::MIN,
];

/// The longest run of one repeated value in [`float_edges`] and [`long_runs`].
pub const LONG_RUN: usize = 4096;

/// A run length: mostly short (1..=16), one run in eight long (up to [`LONG_RUN`]), so
/// all-equal stretches cross warp, block and tile boundaries.
fn run_length(rng: &mut Rng) -> usize {
    if rng.chance(0.125) {
        1 + rng.index(LONG_RUN)
    } else {
        1 + rng.index(16)
    }
}

/// Fills `n` items with runs of values drawn by `draw`.
fn runs<T: Copy>(n: usize, rng: &mut Rng, mut draw: impl FnMut(&mut Rng) -> T) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    while v.len() < n {
        let value = draw(rng);
        let len = run_length(rng).min(n - v.len());
        v.extend(std::iter::repeat_n(value, len));
    }
    v
}

/// Writes each of `values` once at distinct seeded positions (the first `values.len()`
/// positions of a seeded shuffle), when `n` holds them all.
fn plant<T: Copy>(v: &mut [T], values: &[T], rng: &mut Rng) {
    if v.len() < values.len() {
        return;
    }
    let mut taken = std::collections::BTreeSet::new();
    for &value in values {
        let mut at = rng.index(v.len());
        while !taken.insert(at) {
            at = (at + 1) % v.len();
        }
        v[at] = value;
    }
}

/// `n` finite f32 values in runs (mostly 1..=16 long, some up to [`LONG_RUN`]) of the
/// [`FLOAT_EDGE_VALUES`]: ±0.0 side by side, subnormals, ±smallest normal, ±1, ±largest
/// finite. For `n >= 12` every edge value appears at least once. Not for sums (±largest
/// finite overflow in any order); see [`sum_edges`].
pub fn float_edges(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    let mut v = runs(n, &mut rng, |r| FLOAT_EDGE_VALUES[r.index(FLOAT_EDGE_VALUES.len())]);
    plant(&mut v, &FLOAT_EDGE_VALUES, &mut rng);
    v
}

/// `n` values, each `-0.0` or `+0.0` (random signs, in runs), with element 0's sign taken from
/// the seed and, for `n >= 2`, element 1 of the other sign: every element ties (`-0.0 == 0.0`),
/// so argmax and argmin are both index 0, and a comparison of bit patterns picks element 1 (or a
/// later one) for argmax when element 0 is `-0.0` and for argmin when it is `+0.0`. The one
/// family that is all zeros on purpose (its outputs are indices and counts, not sums).
pub fn signed_zero_ties(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    let sign = |r: &mut Rng| if r.next_u64() & 1 == 0 { 0.0f32 } else { -0.0 };
    let mut v = runs(n, &mut rng, sign);
    if let Some(first) = v.first_mut() {
        *first = if seed & 1 == 0 { -0.0 } else { 0.0 };
    }
    if n >= 2 {
        v[1] = -v[0];
    }
    v
}

/// `n` values alternating `+f32::MAX` and `-f32::MAX` (`f32::MIN`), the first sign from the
/// seed. Finite, but any sum of two same-signed items overflows: not for sums.
pub fn alternating_extremes(n: usize, seed: u64) -> Vec<f32> {
    let start = seed & 1;
    (0..n).map(|i| if (i as u64 + start) % 2 == 0 { f32::MAX } else { f32::MIN }).collect()
}

/// The largest magnitude in [`sum_edges`]: 2^105, so that no partial sum of up to 2^21 items
/// (in any order) passes 2^126 < `f32::MAX`: every order stays finite and the order-free bound
/// holds.
pub const SUM_EDGE_MAX: f32 = 4.056_482e31;

/// `n` finite f32 values for sums: runs of ±0.0, ±subnormals, ±smallest normal, ±1 and
/// ±[`SUM_EDGE_MAX`], with stretches of `+SUM_EDGE_MAX, -SUM_EDGE_MAX` pairs (which cancel
/// exactly) between them. No order of up to 2^21 items overflows (see [`SUM_EDGE_MAX`]).
pub fn sum_edges(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    let values: Vec<f32> =
        FLOAT_EDGE_VALUES.map(|x| if x.abs() == f32::MAX { SUM_EDGE_MAX.copysign(x) } else { x }).to_vec();
    let mut v = runs(n, &mut rng, |r| values[r.index(values.len())]);
    // Alternating pairs over a seeded stretch of about a quarter of the input.
    let start = rng.index(n.max(1));
    for (k, x) in v.iter_mut().skip(start).take(n / 4).enumerate() {
        *x = if k % 2 == 0 { SUM_EDGE_MAX } else { -SUM_EDGE_MAX };
    }
    plant(&mut v, &values, &mut rng);
    v
}

/// The logits [`softmax_edge_rows`] mixes: both zeros, subnormals of both signs, ±smallest
/// normal, ±1 and -1e30 (probability exactly 0 next to a 0 logit). Not ±largest finite: it
/// rounds to ±inf in bf16 (a masked or rejected logit).
pub const SOFTMAX_EDGE_VALUES: [f32; 11] = [
    0.0,
    -0.0,
    MIN_SUBNORMAL,
    -MIN_SUBNORMAL,
    MAX_SUBNORMAL,
    -MAX_SUBNORMAL,
    f32::MIN_POSITIVE,
    -f32::MIN_POSITIVE,
    1.0,
    -1.0,
    -1e30,
];

/// `len` softmax logits (rows laid end to end) in runs of the [`SOFTMAX_EDGE_VALUES`]: rows with
/// -0.0 beside +0.0, subnormal logits, all-equal stretches. Finite, never masked.
pub fn softmax_edge_rows(len: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    let mut v = runs(len, &mut rng, |r| SOFTMAX_EDGE_VALUES[r.index(SOFTMAX_EDGE_VALUES.len())]);
    plant(&mut v, &SOFTMAX_EDGE_VALUES, &mut rng);
    v
}

/// The least f32 above `x` (`x` itself for NaN and +inf), as `f32::next_up`, which is newer
/// than the workspace's MSRV (1.85): for `x > 0` the next bit pattern up, for `x < 0` the next
/// one down (the bit order of negative floats is reversed), from ±0.0 the least subnormal.
fn next_up(x: f32) -> f32 {
    if x.is_nan() || x == f32::INFINITY {
        x
    } else if x == 0.0 {
        MIN_SUBNORMAL
    } else if x > 0.0 {
        f32::from_bits(x.to_bits() + 1)
    } else {
        f32::from_bits(x.to_bits() - 1)
    }
}

/// The greatest f32 below `x`, as `f32::next_down`: `-next_up(-x)`.
fn next_down(x: f32) -> f32 {
    -next_up(-x)
}

/// The smallest f32 that `spec`'s f32 bin formula ([`HistogramSpec::bin_of`]) puts in bin `b`
/// or above: the lower edge of bin `b` as the model computes it (for `b = 0`, `spec.lower`).
/// Starts at the rounded mathematical edge and steps one ulp at a time (the f32 formula is
/// monotone in `x` and differs from the exact edge by a few ulps at most).
pub fn f32_bin_edge(spec: &HistogramSpec<f32>, b: u32) -> f32 {
    if b == 0 {
        return spec.lower;
    }
    let at_or_above = |x: f32| spec.bin_of(x).is_some_and(|k| k >= b as usize);
    let width = (spec.upper as f64 - spec.lower as f64) / spec.bins as f64;
    let mut x = (spec.lower as f64 + width * b as f64) as f32;
    while !at_or_above(x) && x < spec.upper {
        x = next_up(x);
    }
    while x > spec.lower && at_or_above(next_down(x)) {
        x = next_down(x);
    }
    x
}

/// The samples at `spec`'s edges: each bin's lower edge by the model's formula
/// ([`f32_bin_edge`]) with the f32 value one ulp below and one above it, `upper` and its
/// neighbours (the first value out of range and the last in range), both zeros, and NaN and
/// ±inf (the f32 histogram contract counts neither: NaN fails both range compares, ±inf is
/// out of range).
pub fn f32_bin_edge_values(spec: &HistogramSpec<f32>) -> Vec<f32> {
    let mut values = Vec::with_capacity(3 * spec.bins as usize + 8);
    values.extend([f32::NAN, f32::INFINITY, f32::NEG_INFINITY]);
    for b in 0..spec.bins {
        let edge = f32_bin_edge(spec, b);
        values.extend([next_down(edge), edge, next_up(edge)]);
    }
    values.extend([next_down(spec.upper), spec.upper, next_up(spec.upper), 0.0, -0.0]);
    values
}

/// `n` histogram samples for `spec` in runs of its edge values ([`f32_bin_edge_values`]): every
/// bin's lower edge exactly, one ulp either side, the range's ends, ±0.0, NaN and ±inf. For `n` at least the
/// number of edge values, every one appears.
pub fn bin_edges_f32(spec: &HistogramSpec<f32>, n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    let values = f32_bin_edge_values(spec);
    let mut v = runs(n, &mut rng, |r| values[r.index(values.len())]);
    plant(&mut v, &values, &mut rng);
    v
}

/// `n` integers alternating `i32::MIN` and `i32::MAX`, the first from the seed.
pub fn alternating_min_max(n: usize, seed: u64) -> Vec<i32> {
    let start = seed & 1;
    (0..n).map(|i| if (i as u64 + start) % 2 == 0 { i32::MIN } else { i32::MAX }).collect()
}

/// `n` integers in runs of one value (mostly 1..=16 long, one run in eight up to
/// [`LONG_RUN`]), values drawn from `{i32::MIN, -1, 0, 1, i32::MAX}` and full-range draws; for
/// `n >= 5` each of those five appears.
pub fn long_runs(n: usize, seed: u64) -> Vec<i32> {
    let mut rng = Rng::new(seed);
    const EDGES: [i32; 5] = [i32::MIN, -1, 0, 1, i32::MAX];
    let mut v = runs(n, &mut rng, |r| if r.chance(0.5) { EDGES[r.index(EDGES.len())] } else { r.next_u64() as i32 });
    plant(&mut v, &EDGES, &mut rng);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(v: &[f32]) -> std::collections::BTreeSet<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn float_edges_hold_every_edge_value_and_stay_finite() {
        for n in [12usize, 33, 4099] {
            let v = float_edges(n, n as u64);
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|x| x.is_finite()));
            let seen = bits(&v);
            assert!(FLOAT_EDGE_VALUES.iter().all(|x| seen.contains(&x.to_bits())), "n={n}");
        }
        let v = float_edges(100_000, 3);
        assert!(v.windows(2).filter(|w| w[0].to_bits() == w[1].to_bits()).count() > 50_000, "runs");
        assert_eq!(float_edges(5, 1), float_edges(5, 1));
    }

    #[test]
    fn signed_zeros_tie_with_both_signs_side_by_side() {
        for seed in 0..4u64 {
            let v = signed_zero_ties(257, seed);
            assert!(v.iter().all(|&x| x == 0.0));
            assert!(v.iter().any(|x| x.is_sign_negative()) && v.iter().any(|x| x.is_sign_positive()));
            assert_ne!(v[0].to_bits(), v[1].to_bits());
            assert_eq!(model_index(&v), (0, 0), "argmax and argmin are index 0");
        }
        assert!(signed_zero_ties(1, 0)[0].is_sign_negative());
        assert!(signed_zero_ties(1, 1)[0].is_sign_positive());
    }

    fn model_index(v: &[f32]) -> (usize, usize) {
        (crate::arg_reduce::argmax(v).unwrap().1, crate::arg_reduce::argmin(v).unwrap().1)
    }

    #[test]
    fn alternating_extremes_alternate() {
        let v = alternating_extremes(5, 0);
        assert_eq!(v, vec![f32::MAX, f32::MIN, f32::MAX, f32::MIN, f32::MAX]);
        assert_eq!(alternating_extremes(2, 1), vec![f32::MIN, f32::MAX]);
        assert_eq!(alternating_min_max(3, 1), vec![i32::MAX, i32::MIN, i32::MAX]);
        assert_eq!(model_index(&v), (0, 1));
    }

    #[test]
    fn sum_edges_cannot_overflow_in_any_order() {
        assert_eq!(SUM_EDGE_MAX, 2f32.powi(105));
        let v = sum_edges(1 << 16, 9);
        let total_abs: f64 = v.iter().map(|&x| (x as f64).abs()).sum();
        assert!(total_abs * 32.0 < f32::MAX as f64, "2^21 items of at most 2^105 stay below 2^126");
        assert!(v.contains(&SUM_EDGE_MAX) && v.contains(&-SUM_EDGE_MAX));
        assert!(v.iter().any(|x| x.is_subnormal()));
        assert!(v.iter().any(|x| *x == 0.0 && x.is_sign_negative()));
    }

    #[test]
    fn bin_edges_are_exactly_on_and_one_ulp_beside_the_model_edges() {
        let specs = [
            HistogramSpec { bins: 100, lower: -0.5f32, upper: 0.5 },
            HistogramSpec { bins: 7, lower: -1.0f32, upper: 3.3 },
            HistogramSpec { bins: 1, lower: 0.1f32, upper: 0.2 },
        ];
        for spec in specs {
            for b in 0..spec.bins {
                let edge = f32_bin_edge(&spec, b);
                assert_eq!(spec.bin_of(edge), Some(b as usize), "bin {b} of {spec:?}");
                let below = spec.bin_of(next_down(edge));
                assert!(below.is_none_or(|k| k + 1 == b as usize), "below bin {b}: {below:?}");
            }
            let v = bin_edges_f32(&spec, 4099, 5);
            let seen = bits(&v);
            assert!(f32_bin_edge_values(&spec).iter().all(|x| seen.contains(&x.to_bits())));
            assert!(v.contains(&spec.upper) && v.iter().any(|&x| x < spec.lower));
            assert!(v.iter().any(|x| x.is_nan()) && v.contains(&f32::INFINITY) && v.contains(&f32::NEG_INFINITY));
            let counted: u64 = crate::histogram::histogram_even(&v, &spec).unwrap().iter().sum();
            let in_range = v.iter().filter(|&&x| spec.lower <= x && x < spec.upper).count() as u64;
            assert_eq!(counted, in_range, "NaN and ±inf are not counted");
        }
    }

    #[test]
    fn softmax_edge_rows_are_valid_logits() {
        let v = softmax_edge_rows(61 * 33, 4);
        assert!(v.iter().all(|x| x.is_finite()));
        let seen = bits(&v);
        assert!(SOFTMAX_EDGE_VALUES.iter().all(|x| seen.contains(&x.to_bits())));
        assert!(crate::softmax::softmax_rows(&v, 61, 33).is_ok());
    }

    #[test]
    fn next_up_and_down_step_one_value() {
        assert_eq!(next_up(0.0), MIN_SUBNORMAL);
        assert_eq!(next_up(-0.0), MIN_SUBNORMAL);
        assert_eq!(next_up(-MIN_SUBNORMAL).to_bits(), (-0.0f32).to_bits());
        assert_eq!(next_up(1.0), 1.0 + f32::EPSILON);
        assert_eq!(next_down(1.0), 1.0 - f32::EPSILON / 2.0);
        assert_eq!(next_up(f32::MAX), f32::INFINITY);
        assert_eq!(next_up(f32::NEG_INFINITY), f32::MIN);
        assert_eq!(next_down(-1.0), -1.0 - f32::EPSILON);
        assert!(next_up(f32::NAN).is_nan());
    }

    #[test]
    fn long_runs_repeat() {
        let v = long_runs(10_000, 2);
        assert_eq!(v.len(), 10_000);
        let longest = v.chunk_by(|a, b| a == b).map(<[i32]>::len).max().unwrap();
        assert!(longest > 64, "a long run: {longest}");
        assert!(v.contains(&i32::MIN) && v.contains(&i32::MAX));
    }
}
