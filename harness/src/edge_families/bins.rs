//! Histogram samples on the bin edges of an f32 even-bin histogram: each bin's lower edge as
//! the model's bin formula places it ([`HistogramSpec::bin_of`]: `(x - lower) * scale`, two
//! f32 roundings, truncated), the f32 values one ulp either side, the range's ends and their
//! neighbours, both zeros, NaN and ±inf (the contract counts neither: NaN fails both range
//! comparisons, ±inf is out of range).

use super::values::{plant, runs, MIN_SUBNORMAL};
use kernels::HistogramSpec;
use model::generators::Rng;

/// The least f32 above `x` (`x` itself for NaN and +inf): for `x > 0` the next bit pattern
/// up, for `x < 0` the next one down (negative floats order their bit patterns backwards),
/// from ±0.0 the least subnormal. As `f32::next_up`, which is newer than the workspace's
/// minimum Rust (1.85).
pub fn next_up(x: f32) -> f32 {
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

/// The greatest f32 below `x`: `-next_up(-x)`.
pub fn next_down(x: f32) -> f32 {
    -next_up(-x)
}

/// The position of `x` on the line of f32 values in order (-0.0 just below +0.0): the
/// sign-magnitude bits mapped so that a greater float has a greater key.
fn order_key(x: f32) -> u32 {
    let bits = x.to_bits();
    if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

/// The f32 at `key` on the line of [`order_key`].
fn from_order_key(key: u32) -> f32 {
    if key & 0x8000_0000 != 0 {
        f32::from_bits(key & 0x7fff_ffff)
    } else {
        f32::from_bits(!key)
    }
}

/// The least f32 that `spec`'s bin formula puts in bin `b` or above: the lower edge of bin
/// `b` as the model computes it (`spec.lower` for `b = 0`; `spec.upper` when no value in
/// range reaches bin `b`). Within `[lower, upper)` the formula is monotone in `x` (each f32
/// rounding and the truncation are), so a bisection over the ordered f32 values between
/// `lower` and the last value below `upper` finds it in at most 32 steps (stepping one ulp
/// at a time would cross some 2^30 values around an edge at 0.0).
pub fn f32_bin_edge(spec: &HistogramSpec<f32>, b: u32) -> f32 {
    if b == 0 {
        return spec.lower;
    }
    let at_or_above = |x: f32| spec.bin_of(x).is_some_and(|k| k >= b as usize);
    // Invariant: the value at `below` is under bin b, the value at `reached` in it or above.
    let (mut below, mut reached) = (order_key(spec.lower), order_key(next_down(spec.upper)));
    if !at_or_above(from_order_key(reached)) {
        return spec.upper;
    }
    while reached - below > 1 {
        let mid = below + (reached - below) / 2;
        if at_or_above(from_order_key(mid)) {
            reached = mid;
        } else {
            below = mid;
        }
    }
    from_order_key(reached)
}

/// The edge samples of `spec`: NaN and ±inf, each bin's lower edge ([`f32_bin_edge`]) with
/// the f32 one ulp below and one above, `upper` with its neighbours (the last value in range
/// and the first out of it), and both zeros.
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

/// `n` samples for `spec` in runs of its edge values ([`f32_bin_edge_values`]); when `n` is
/// at least their number, every one of them appears.
pub fn bin_edges_f32(spec: &HistogramSpec<f32>, n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    let values = f32_bin_edge_values(spec);
    let mut v = runs(n, &mut rng, |r| values[r.index(values.len())]);
    plant(&mut v, &values, &mut rng);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The specs the tests walk: the catalogue's (100 bins over [-0.5, 0.5)), a width that is
    /// not a power of two, and a single bin.
    const SPECS: [HistogramSpec<f32>; 3] = [
        HistogramSpec { bins: 100, lower: -0.5, upper: 0.5 },
        HistogramSpec { bins: 7, lower: -1.0, upper: 3.3 },
        HistogramSpec { bins: 1, lower: 0.1, upper: 0.2 },
    ];

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
    fn the_order_key_orders_floats_and_round_trips() {
        let line = [f32::NEG_INFINITY, f32::MIN, -1.0, -MIN_SUBNORMAL, -0.0, 0.0, MIN_SUBNORMAL, 1.0, f32::MAX];
        for w in line.windows(2) {
            assert!(order_key(w[0]) < order_key(w[1]), "{:e} < {:e}", w[0], w[1]);
        }
        assert_eq!(order_key(-0.0) + 1, order_key(0.0), "the zeros are neighbours");
        assert_eq!(order_key(1.0) + 1, order_key(next_up(1.0)));
        for x in line {
            assert_eq!(from_order_key(order_key(x)).to_bits(), x.to_bits());
        }
    }

    #[test]
    fn each_edge_is_the_first_value_of_its_bin() {
        for spec in SPECS {
            for b in 0..spec.bins {
                let edge = f32_bin_edge(&spec, b);
                assert_eq!(spec.bin_of(edge), Some(b as usize), "bin {b} of {spec:?}");
                let below = spec.bin_of(next_down(edge));
                let want = if b == 0 { None } else { Some(b as usize - 1) };
                assert_eq!(below, want, "one ulp below bin {b}'s edge of {spec:?}");
            }
        }
        // By hand: with scale 100 the edge of bin 1 over [-0.5, 0.5) is near -0.49.
        let edge = f32_bin_edge(&SPECS[0], 1);
        assert!((edge - -0.49).abs() < 1e-6, "{edge}");
        // By hand: bin 50's edge is at 0 in real numbers, but x - lower = x + 0.5 rounds to
        // 0.5 from x = -2^-26 on (a tie, to the even 0.5), and (0.5 - 2^-25) * 100 rounds
        // below 50: the edge is -2^-26.
        assert_eq!(f32_bin_edge(&SPECS[0], 50), -2f32.powi(-26));
    }

    #[test]
    fn the_samples_hold_every_edge_and_one_ulp_either_side() {
        for spec in SPECS {
            let v = bin_edges_f32(&spec, 4099, 5);
            assert_eq!(v.len(), 4099);
            let seen: BTreeSet<u32> = v.iter().map(|x| x.to_bits()).collect();
            for b in 0..spec.bins {
                let edge = f32_bin_edge(&spec, b);
                for x in [next_down(edge), edge, next_up(edge)] {
                    assert!(seen.contains(&x.to_bits()), "{x:e} beside bin {b} of {spec:?}");
                }
            }
            for x in [spec.upper, next_down(spec.upper), next_up(spec.upper), 0.0, -0.0, f32::INFINITY] {
                assert!(seen.contains(&x.to_bits()), "{x:e} of {spec:?}");
            }
            assert!(v.iter().any(|x| x.is_nan()) && v.contains(&f32::NEG_INFINITY));
            let counted: u64 = model::histogram::histogram_even(&v, &spec).expect("a valid spec").iter().sum();
            let in_range = v.iter().filter(|&&x| spec.lower <= x && x < spec.upper).count() as u64;
            assert_eq!(counted, in_range, "NaN, ±inf and upper are not counted");
        }
    }
}
