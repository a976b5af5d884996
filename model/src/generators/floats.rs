//! Uniform floats, affine maps and segment offsets.

use half::bf16;

use super::pieces::{affine_map_pieces, uniform_f32_pieces};
use super::rng::Rng;
use crate::operator::AffineMap;

/// `n` f32 values uniform in `[-1, 1)` (a 53-bit draw rounded to f32); never all zeros
/// (element 0 becomes 0.5). The pieces of [`uniform_f32_pieces`] collected.
pub fn uniform_f32(n: usize, seed: u64) -> Vec<f32> {
    uniform_f32_pieces(n, seed).collect_all()
}

/// `n` f64 values uniform in `[-1, 1)`.
pub fn uniform_f64(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng::new(seed);
    let mut v: Vec<f64> = (0..n).map(|_| rng.signed_unit_f64()).collect();
    if let Some(first) = v.first().copied() {
        if first == 0.0 && v.iter().all(|&x| x == 0.0) {
            v[0] = 0.5;
        }
    }
    v
}

/// `n` bf16 values: [`uniform_f32`]'s values rounded to bf16 (nearest even).
pub fn uniform_bf16(n: usize, seed: u64) -> Vec<bf16> {
    uniform_f32(n, seed).into_iter().map(bf16::from_f32).collect()
}

/// `n` affine maps with `a` odd (so compositions never collapse to the constant map) and `b`
/// uniform over u64.
pub fn affine_maps(n: usize, seed: u64) -> Vec<AffineMap> {
    affine_map_pieces(n, seed).collect_all()
}

/// Offsets for segmenting an `n`-item input: starts at 0, ends at `n`, non-decreasing, about
/// one segment per 37 items (at least one segment), with roughly one empty segment in ten.
pub fn segment_offsets(n: usize, seed: u64) -> Vec<usize> {
    let mut rng = Rng::new(seed);
    let segments = 1 + n / 37;
    let mut cuts: Vec<usize> = Vec::with_capacity(segments + 1);
    for _ in 1..segments {
        if !cuts.is_empty() && rng.chance(0.1) {
            let last = cuts[cuts.len() - 1];
            cuts.push(last);
        } else {
            cuts.push(rng.index(n + 1));
        }
    }
    cuts.sort_unstable();
    let mut offsets = Vec::with_capacity(segments + 1);
    offsets.push(0);
    offsets.extend(cuts);
    offsets.push(n);
    offsets
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segmented_reduce::validate_offsets;

    #[test]
    fn shapes() {
        assert!(uniform_f32(1000, 1).iter().all(|x| (-1.0..1.0).contains(x)));
        assert!(affine_maps(100, 2).iter().all(|m| m.a % 2 == 1));
        for n in [0usize, 1, 37, 38, 4099, 262_145] {
            let o = segment_offsets(n, 3);
            assert_eq!(o[0], 0);
            assert_eq!(o[o.len() - 1], n);
            assert!(validate_offsets(&o, n).is_ok());
        }
        let o = segment_offsets(4099, 3);
        assert!(o.windows(2).any(|w| w[0] == w[1]), "some empty segment");
        assert_eq!(uniform_bf16(3, 9).len(), 3);
    }
}
