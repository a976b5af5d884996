//! Benchmark inputs, generated on the host with the very hash `cub_bench`
//! uses on the device, so that primlab and CUB read identical data: int32
//! `mix64(i ^ (seed << 40) ^ seed) % 19 - 9` in [-9, 9], float32
//! `(mix64(...) >> 40) * 2^-24 - 0.5` uniform in [-0.5, 0.5) (exact), and
//! softmax logits `4 * N(0, 1)`-like values from the same hash.

use rayon::prelude::*;

/// Seed of the int32 inputs (`kSeedI32` in cub_bench.cu).
pub const SEED_I32: u64 = 0x5eed_0001;
/// Seed of the float32 inputs (`kSeedF32` in cub_bench.cu).
pub const SEED_F32: u64 = 0x5eed_0002;
/// Seed of the softmax logits.
pub const SEED_LOGITS: u64 = 0x5eed_0003;

/// How the int32 inputs are made, for receipts.
pub const INPUT_I32_TEXT: &str =
    "int32 in [-9, 9]: splitmix64(i ^ (seed << 40) ^ seed) % 19 - 9, seed 0x5eed0001 (cub_bench's inputs, bit for bit)";
/// How the float32 inputs are made, for receipts.
pub const INPUT_F32_TEXT: &str = "float32 in [-0.5, 0.5): (splitmix64(i ^ (seed << 40) ^ seed) >> 40) * 2^-24 - 0.5, \
     seed 0x5eed0002 (cub_bench's inputs, bit for bit)";
/// How the softmax logits are made, for receipts.
pub const INPUT_LOGITS_TEXT: &str = "logits 4 * (sum of 4 uniforms in [-0.5, 0.5) scaled to unit variance), \
     from splitmix64 with seed 0x5eed0003; bf16 inputs are their round-to-nearest cast";

/// The splitmix64 finaliser (`mix64` in cub_bench.cu).
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn hash(i: u64, seed: u64) -> u64 {
    mix64(i ^ (seed << 40) ^ seed)
}

/// Element `i` of the int32 input (`hash_i32`).
pub fn small_int(i: u64) -> i32 {
    (hash(i, SEED_I32) % 19) as i32 - 9
}

/// Element `i` of the float32 input (`hash_f32`).
pub fn uniform_float(i: u64) -> f32 {
    (hash(i, SEED_F32) >> 40) as f32 * (1.0 / 16_777_216.0) - 0.5
}

/// Element `i` of the softmax logits: four 24-bit uniforms summed (variance
/// 1/3), scaled to standard deviation 4 like the torch baseline's
/// `randn * 4`.
pub fn logit(i: u64) -> f32 {
    let mut sum = 0.0f64;
    for k in 0..4u64 {
        sum += (hash(i.wrapping_mul(4).wrapping_add(k), SEED_LOGITS) >> 40) as f64 / 16_777_216.0 - 0.5;
    }
    (sum * 3f64.sqrt() * 4.0) as f32
}

/// The first `n` int32 inputs.
pub fn small_ints(n: usize) -> Vec<i32> {
    (0..n as u64).into_par_iter().map(small_int).collect()
}

/// The first `n` float32 inputs.
pub fn uniform_floats(n: usize) -> Vec<f32> {
    (0..n as u64).into_par_iter().map(uniform_float).collect()
}

/// The first `n` logits.
pub fn logits(n: usize) -> Vec<f32> {
    (0..n as u64).into_par_iter().map(logit).collect()
}

/// `x` rounded to the nearest bf16.
pub fn to_bf16(x: &[f32]) -> Vec<half::bf16> {
    x.par_iter().map(|&v| half::bf16::from_f32(v)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_the_reference_values() {
        // splitmix64 with state 0 yields 0xe220a8397b1dcdaf first: mix64(0).
        assert_eq!(mix64(0), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn ints_cover_minus_nine_to_nine_roughly_evenly() {
        let x = small_ints(19 * 10_000);
        let mut counts = [0usize; 19];
        for &v in &x {
            assert!((-9..=9).contains(&v));
            counts[(v + 9) as usize] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn floats_are_exact_multiples_of_two_to_the_minus_24_in_range() {
        for v in uniform_floats(10_000) {
            assert!((-0.5..0.5).contains(&v));
            let scaled = (v as f64 + 0.5) * 16_777_216.0;
            assert_eq!(scaled, scaled.trunc());
        }
    }

    #[test]
    fn logits_have_a_standard_deviation_near_four() {
        let x = logits(100_000);
        let mean = x.iter().map(|&v| v as f64).sum::<f64>() / x.len() as f64;
        let var = x.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / x.len() as f64;
        assert!(mean.abs() < 0.1 && (var.sqrt() - 4.0).abs() < 0.1, "mean {mean} sd {}", var.sqrt());
        assert!(x.iter().all(|v| v.is_finite()));
    }
}
