//! The edge-value generators: inputs made of the values where a kernel that compares bit
//! patterns instead of values, flushes subnormals, overflows a 32-bit accumulator or negates
//! `i32::MIN` disagrees with IEEE and two's-complement arithmetic and the model. Every float
//! value here is finite (no NaN, no ±inf), so each family serves the contracts that reject
//! nonfinite inputs; the histogram's bin edges, whose contract counts neither NaN nor ±inf,
//! are in [`super::bins`]. Each generator is a function of `(n, seed)` only (a rerun with the
//! same size and seed sees the same input), built on the model's seeded [`Rng`].

use model::generators::Rng;

/// The smallest positive subnormal f32 (2^-149).
pub const MIN_SUBNORMAL: f32 = f32::from_bits(1);
/// The largest subnormal f32 (2^-126 - 2^-149).
pub const MAX_SUBNORMAL: f32 = f32::from_bits(0x007f_ffff);

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

/// The longest run of one repeated value.
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

/// `n` items in runs of values drawn by `draw`.
pub(super) fn runs<T: Copy>(n: usize, rng: &mut Rng, mut draw: impl FnMut(&mut Rng) -> T) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    while v.len() < n {
        let value = draw(rng);
        let len = run_length(rng).min(n - v.len());
        v.extend(std::iter::repeat_n(value, len));
    }
    v
}

/// Writes each of `values` once at distinct seeded positions, when `v` holds them all.
pub(super) fn plant<T: Copy>(v: &mut [T], values: &[T], rng: &mut Rng) {
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

/// `n` finite f32 values in runs of the [`FLOAT_EDGE_VALUES`]: ±0.0 side by side,
/// subnormals, ±smallest normal, ±1, ±largest finite. For `n >= 12` every edge value appears
/// at least once. Not for f32 sums held to a bound (two largest finite values overflow in
/// some orders); see [`sum_edges`].
pub fn float_edges(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    let mut v = runs(n, &mut rng, |r| FLOAT_EDGE_VALUES[r.index(FLOAT_EDGE_VALUES.len())]);
    plant(&mut v, &FLOAT_EDGE_VALUES, &mut rng);
    v
}

/// `n` values, each `-0.0` or `+0.0` (random signs, in runs), element 0's sign from the
/// seed's lowest bit (`-0.0` when it is 0) and, for `n >= 2`, element 1 of the other sign:
/// every element ties (`-0.0 == 0.0`), so argmax and argmin are both index 0, while a
/// comparison of bit patterns picks a later index for argmax when element 0 is `-0.0` and
/// for argmin when it is `+0.0`. All zeros on purpose: the outputs are indices and sums, and
/// the poisons show an output left unwritten.
pub fn signed_zero_ties(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    let mut v = runs(n, &mut rng, |r| if r.next_u64() & 1 == 0 { 0.0f32 } else { -0.0 });
    if let Some(first) = v.first_mut() {
        *first = if seed & 1 == 0 { -0.0 } else { 0.0 };
    }
    if n >= 2 {
        v[1] = -v[0];
    }
    v
}

/// `n` values alternating `f32::MAX` and `f32::MIN` (`-f32::MAX`), `f32::MAX` first when the
/// seed's lowest bit is 0. Finite, but two same-signed items overflow: not for bounded sums.
pub fn alternating_extremes(n: usize, seed: u64) -> Vec<f32> {
    let start = seed & 1;
    (0..n).map(|i| if (i as u64 + start) % 2 == 0 { f32::MAX } else { f32::MIN }).collect()
}

/// The largest magnitude in [`sum_edges`]: 2^105. A sum of at most 2^20 items (the largest
/// size of the edge families) of magnitude at most 2^105 stays below 2^125 < `f32::MAX` in
/// every order, so every order is finite and the order-free bound applies.
pub const SUM_EDGE_MAX: f32 = 4.056_482e31;

/// The values [`sum_edges`] mixes: [`FLOAT_EDGE_VALUES`] with ±largest finite replaced by
/// ±[`SUM_EDGE_MAX`].
pub const SUM_EDGE_VALUES: [f32; 12] = [
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
    SUM_EDGE_MAX,
    -SUM_EDGE_MAX,
];

/// `n` finite f32 values for sums: runs of [`SUM_EDGE_VALUES`] (±0.0, ±subnormals, ±smallest
/// normal, ±1, ±2^105), a stretch of about a quarter of the input of `+2^105, -2^105` pairs
/// (which cancel exactly), and at least one value of magnitude 1 or more. No order of up to
/// 2^20 items overflows (see [`SUM_EDGE_MAX`]).
///
/// The value of magnitude at least 1 keeps the family within the f32 sum's contract for
/// kernels whose additions flush subnormals to zero (float atomics flush subnormal inputs and
/// results, and so does code compiled with flush-to-zero): each of the n - 1 additions loses
/// less than 3 * 2^-126 that way, far inside the order-free bound (n-1) u/(1+u) sum|x| once
/// sum|x| >= 1, and at n = 1 the lone value is not subnormal.
pub fn sum_edges(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    let mut v = runs(n, &mut rng, |r| SUM_EDGE_VALUES[r.index(SUM_EDGE_VALUES.len())]);
    let start = rng.index(n.max(1));
    for (k, x) in v.iter_mut().skip(start).take(n / 4).enumerate() {
        *x = if k % 2 == 0 { SUM_EDGE_MAX } else { -SUM_EDGE_MAX };
    }
    plant(&mut v, &SUM_EDGE_VALUES, &mut rng);
    if n > 0 && !v.iter().any(|x| x.abs() >= 1.0) {
        let at = rng.index(n);
        v[at] = if rng.next_u64() & 1 == 0 { 1.0 } else { -1.0 };
    }
    v
}

/// The logits [`softmax_edge_rows`] mixes: both zeros, subnormals of both signs, ±smallest
/// normal, ±1 and -1e30 (a probability of exactly 0 beside a logit of 0). Not ±largest
/// finite, so that every row's shifted logits `x - max` stay finite.
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

/// `len` softmax logits (rows laid end to end) in runs of the [`SOFTMAX_EDGE_VALUES`]: -0.0
/// beside +0.0, subnormal logits, all-equal stretches. Finite, never masked; for
/// `len >= 11` every edge value appears.
pub fn softmax_edge_rows(len: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    let mut v = runs(len, &mut rng, |r| SOFTMAX_EDGE_VALUES[r.index(SOFTMAX_EDGE_VALUES.len())]);
    plant(&mut v, &SOFTMAX_EDGE_VALUES, &mut rng);
    v
}

/// `n` integers alternating `i32::MIN` and `i32::MAX`, `i32::MIN` first when the seed's
/// lowest bit is 0: any 32-bit running sum of three or more of them wraps, and so does
/// negating `i32::MIN`.
pub fn alternating_min_max(n: usize, seed: u64) -> Vec<i32> {
    let start = seed & 1;
    (0..n).map(|i| if (i as u64 + start) % 2 == 0 { i32::MIN } else { i32::MAX }).collect()
}

/// The values [`long_runs`] repeats besides full-range draws.
pub const INT_EDGE_VALUES: [i32; 5] = [i32::MIN, -1, 0, 1, i32::MAX];

/// `n` integers in runs of one value (mostly 1..=16 long, one run in eight up to
/// [`LONG_RUN`]), half of the runs of one of [`INT_EDGE_VALUES`] and half of a full-range
/// draw; for `n >= 5` each of the [`INT_EDGE_VALUES`] appears.
pub fn long_runs(n: usize, seed: u64) -> Vec<i32> {
    let mut rng = Rng::new(seed);
    let mut v = runs(n, &mut rng, |r| {
        if r.chance(0.5) {
            INT_EDGE_VALUES[r.index(INT_EDGE_VALUES.len())]
        } else {
            r.next_u64() as i32
        }
    });
    plant(&mut v, &INT_EDGE_VALUES, &mut rng);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn bits(v: &[f32]) -> BTreeSet<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn the_edge_constants_are_the_values_their_names_say() {
        assert_eq!(MIN_SUBNORMAL, 2f32.powi(-149));
        assert_eq!(MAX_SUBNORMAL, 2f32.powi(-126) - 2f32.powi(-149));
        assert!(MIN_SUBNORMAL.is_subnormal() && MAX_SUBNORMAL.is_subnormal());
        assert!(!(MAX_SUBNORMAL + MIN_SUBNORMAL).is_subnormal(), "the largest subnormal");
        assert_eq!(SUM_EDGE_MAX, 2f32.powi(105));
        assert_eq!(bits(&FLOAT_EDGE_VALUES).len(), 12, "twelve distinct bit patterns, -0.0 apart from +0.0");
    }

    #[test]
    fn float_edges_hold_every_edge_value_in_runs_and_stay_finite() {
        for n in [12usize, 33, 4099] {
            let v = float_edges(n, n as u64);
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|x| x.is_finite()));
            let seen = bits(&v);
            assert!(FLOAT_EDGE_VALUES.iter().all(|x| seen.contains(&x.to_bits())), "n={n}");
        }
        let v = float_edges(100_000, 3);
        assert!(v.windows(2).filter(|w| w[0].to_bits() == w[1].to_bits()).count() > 50_000, "runs");
        assert!(v.chunk_by(|a, b| a.to_bits() == b.to_bits()).any(|run| run.len() > 256), "a long run");
        assert_eq!(float_edges(5, 1), float_edges(5, 1));
        assert!(float_edges(0, 1).is_empty());
    }

    #[test]
    fn signed_zeros_are_all_zero_with_both_signs_side_by_side() {
        for seed in 0..4u64 {
            let v = signed_zero_ties(257, seed);
            assert!(v.iter().all(|&x| x == 0.0));
            assert!(v.iter().any(|x| x.is_sign_negative()) && v.iter().any(|x| x.is_sign_positive()));
            assert_eq!(v[0].is_sign_negative(), seed % 2 == 0, "element 0's sign from the seed");
            assert_ne!(v[0].to_bits(), v[1].to_bits(), "element 1 of the other sign");
        }
        assert_eq!(signed_zero_ties(1, 0)[0].to_bits(), (-0.0f32).to_bits());
        assert_eq!(signed_zero_ties(1, 1)[0].to_bits(), 0.0f32.to_bits());
        assert_eq!(bits(&signed_zero_ties(2, 2)), BTreeSet::from([0x8000_0000, 0]));
    }

    #[test]
    fn alternating_values_alternate_from_the_seeds_side() {
        assert_eq!(alternating_extremes(5, 0), vec![f32::MAX, f32::MIN, f32::MAX, f32::MIN, f32::MAX]);
        assert_eq!(alternating_extremes(2, 1), vec![f32::MIN, f32::MAX]);
        assert_eq!(alternating_min_max(3, 0), vec![i32::MIN, i32::MAX, i32::MIN]);
        assert_eq!(alternating_min_max(3, 1), vec![i32::MAX, i32::MIN, i32::MAX]);
    }

    #[test]
    fn sum_edges_hold_subnormals_and_cancelling_pairs_and_never_overflow() {
        let v = sum_edges(1 << 16, 9);
        let total_abs: f64 = v.iter().map(|&x| (x as f64).abs()).sum();
        assert!(total_abs <= 65_536.0 * 2f64.powi(105), "no magnitude above 2^105");
        assert!(v.contains(&SUM_EDGE_MAX) && v.contains(&-SUM_EDGE_MAX));
        assert!(v.windows(2).any(|w| w == [SUM_EDGE_MAX, -SUM_EDGE_MAX]), "a cancelling pair side by side");
        assert!(v.iter().any(|x| x.is_subnormal()));
        assert!(v.iter().any(|x| *x == 0.0 && x.is_sign_negative()));
        assert!(v.iter().all(|x| x.is_finite() && x.abs() <= SUM_EDGE_MAX));
    }

    #[test]
    fn every_sum_edges_input_holds_a_value_of_magnitude_one_or_more() {
        for n in 1..=40usize {
            for seed in 0..20u64 {
                let v = sum_edges(n, seed);
                assert_eq!(v.len(), n);
                assert!(v.iter().any(|x| x.abs() >= 1.0), "n={n} seed={seed}: {v:?}");
            }
        }
    }

    #[test]
    fn softmax_edge_rows_are_finite_and_hold_every_edge_logit() {
        let v = softmax_edge_rows(61 * 33, 4);
        assert!(v.iter().all(|x| x.is_finite()));
        let seen = bits(&v);
        assert!(SOFTMAX_EDGE_VALUES.iter().all(|x| seen.contains(&x.to_bits())));
    }

    #[test]
    fn long_runs_repeat_the_int_edges() {
        let v = long_runs(10_000, 2);
        assert_eq!(v.len(), 10_000);
        let longest = v.chunk_by(|a, b| a == b).map(<[i32]>::len).max().unwrap_or(0);
        assert!(longest > 64, "a long run: {longest}");
        assert!(INT_EDGE_VALUES.iter().all(|x| v.contains(x)));
        let small = long_runs(5, 7);
        assert_eq!(small.iter().copied().collect::<BTreeSet<_>>(), INT_EDGE_VALUES.into_iter().collect());
    }
}
