//! The block-per-row top-k schedule of `topk.cu` (`block_radix_select`), step for step: the
//! radix passes over the selection key (a 256-bin histogram of the digit of every key that
//! matches the prefix so far, the digit picked by 32 lanes of 8 bins each with an inclusive
//! lane scan), the gather (keys above the k-th into the first slots, ties in column order,
//! `threads` columns a round, into the rest), and the bitonic network over the ranks padded to
//! a power of two. Also the grid schedule (`grid_threshold_select`): the bin of the k-th key
//! narrowed a level of bits at a time until the keys from it up fit a bound, the candidates
//! from it up in any order, the k-th of their unique ranks.
//! Checked against the direct definition ([`crate::topk`]) on tie-heavy rows, which is what
//! the GPU sweep then checks the kernels against.

use crate::topk::{rank, selection_key, TopkSpec, TopkValue};

/// Bits of one radix digit and the bins of its histogram.
const RADIX_BITS: u32 = 8;
const BINS: usize = 1 << RADIX_BITS;
/// Lanes of the warp that picks a digit, 8 bins each.
const LANES: usize = 32;

/// The digit whose bin holds the `remaining`-th key from the top, and what is left of
/// `remaining` inside that bin, as the warp computes it (lane `l` owns the bins
/// `255 - 8l ..= 248 - 8l`); `None` when no lane holds it (`remaining == 0`).
pub fn pick_digit(hist: &[u32; BINS], remaining: u32) -> Option<(u32, u32)> {
    let totals: Vec<u32> = (0..LANES).map(|l| (0..8).map(|j| hist[BINS - 1 - (l * 8 + j)]).sum()).collect();
    let mut inclusive = 0u32;
    for (lane, &total) in totals.iter().enumerate() {
        let above = inclusive;
        inclusive += total;
        if above < remaining && remaining <= inclusive {
            let mut above = above;
            for j in 0..8 {
                let count = hist[BINS - 1 - (lane * 8 + j)];
                if remaining <= above + count {
                    return Some(((BINS - 1 - (lane * 8 + j)) as u32, remaining - above));
                }
                above += count;
            }
        }
    }
    None
}

/// The k-th largest selection key of `keys` and how many keys equal to it belong to the top
/// k, by `width / 8` radix passes from the top digit.
pub fn radix_select(keys: &[u32], width: u32, k: u32) -> (u32, u32) {
    let (mut prefix, mut remaining, mut mask) = (0u32, k, 0u32);
    let mut shift = width as i32 - RADIX_BITS as i32;
    while shift >= 0 {
        let mut hist = [0u32; BINS];
        for &key in keys.iter().filter(|&&key| key & mask == prefix) {
            hist[((key >> shift) as usize) & (BINS - 1)] += 1;
        }
        if let Some((digit, left)) = pick_digit(&hist, remaining) {
            prefix |= digit << shift;
            remaining = left;
        }
        mask |= ((BINS - 1) as u32) << shift;
        shift -= RADIX_BITS as i32;
    }
    (prefix, remaining)
}

/// The slots of the top k after the gather: keys above the k-th in `[0, k - remaining)` (in
/// the order the kernel's shared counter hands them out: any; here column order), ties in
/// `[k - remaining, k)` by column, `threads` columns a round.
pub fn gather(keys: &[u32], k: u32, (kth, remaining): (u32, u32), threads: usize) -> Vec<u64> {
    let above_count = (k - remaining) as usize;
    let mut slots = vec![0u64; k as usize];
    let (mut above, mut ties_before) = (0usize, 0u32);
    for round in keys.chunks(threads).enumerate() {
        let (first, chunk) = (round.0 * threads, round.1);
        let mut rank_in_round = 0u32;
        for (t, &key) in chunk.iter().enumerate() {
            let column = (first + t) as u32;
            if key > kth && above < above_count {
                slots[above] = rank(key, column);
                above += 1;
            }
            if key == kth {
                let r = ties_before + rank_in_round;
                if r < remaining {
                    slots[above_count + r as usize] = rank(key, column);
                }
                rank_in_round += 1;
            }
        }
        ties_before += rank_in_round;
    }
    slots
}

/// The kernel's bitonic network over `ranks` padded with 0 to a power of two, descending.
pub fn bitonic_descending(ranks: &[u64]) -> Vec<u64> {
    let padded = ranks.len().next_power_of_two().max(1);
    let mut s = ranks.to_vec();
    s.resize(padded, 0);
    let mut size = 2;
    while size <= padded {
        let mut stride = size / 2;
        while stride > 0 {
            for i in 0..padded {
                let j = i ^ stride;
                if j > i {
                    let descending = i & size == 0;
                    if (descending && s[i] < s[j]) || (!descending && s[i] > s[j]) {
                        s.swap(i, j);
                    }
                }
            }
            stride /= 2;
        }
        size *= 2;
    }
    s.truncate(ranks.len());
    s
}

/// One row's top-k columns through the whole schedule (`1 <= k <= cols`).
pub fn block_radix_select<T: TopkValue>(row: &[T], spec: TopkSpec, width: u32, threads: usize) -> Vec<u32> {
    let keys: Vec<u32> = row.iter().map(|&v| selection_key(v, spec) >> (32 - width)).collect();
    let k = spec.k as u32;
    let selected = radix_select(&keys, width, k);
    let sorted = bitonic_descending(&gather(&keys, k, selected, threads));
    sorted.into_iter().map(|r| !(r as u32)).collect()
}

/// The bin holding the `k`-th key from the top of `hist` (bins counted from the last), as the
/// grid schedule's warp finds it: lane `l` owns `hist.len() / 32` bins from the top, an
/// inclusive lane scan, then the owning lane's bins in order; `None` when `k` is 0 or above
/// the total.
pub fn threshold_bin(hist: &[u32], k: u32) -> Option<usize> {
    let per_lane = hist.len() / LANES;
    let bin = |lane: usize, j: usize| hist.len() - 1 - (lane * per_lane + j);
    let mut inclusive = 0u32;
    for lane in 0..LANES {
        let above = inclusive;
        inclusive += (0..per_lane).map(|j| hist[bin(lane, j)]).sum::<u32>();
        if above < k && k <= inclusive {
            let mut seen = above;
            for j in 0..per_lane {
                seen += hist[bin(lane, j)];
                if k <= seen {
                    return Some(bin(lane, j));
                }
            }
        }
    }
    None
}

/// The k-th largest of the unique `ranks` by 8-bit radix passes over all 64 bits (the grid
/// schedule's select), with `pick_digit`'s lane scan.
pub fn kth_rank(ranks: &[u64], k: u32) -> u64 {
    let (mut prefix, mut mask, mut remaining) = (0u64, 0u64, k);
    let mut shift = 64 - RADIX_BITS as i32;
    while shift >= 0 {
        let mut hist = [0u32; BINS];
        for &r in ranks.iter().filter(|&&r| r & mask == prefix) {
            hist[((r >> shift) as usize) & (BINS - 1)] += 1;
        }
        if let Some((digit, left)) = pick_digit(&hist, remaining) {
            prefix |= (digit as u64) << shift;
            remaining = left;
        }
        mask |= ((BINS - 1) as u64) << shift;
        shift -= RADIX_BITS as i32;
    }
    prefix
}

/// How the grid schedule narrows the k-th key: `bin_bits` bits a level from the top of a
/// `width`-bit key, until the keys from the chosen bin up are at most `candidates`, or after
/// `levels` levels, or once the key is whole.
#[derive(Debug, Clone, Copy)]
pub struct GridShape {
    /// Bits of the selection key (32 for float32, 16 for bfloat16 and float16).
    pub width: u32,
    /// Bits a level narrows (`TOPK.grid_bin_bits`; the last level takes what is left).
    pub bin_bits: u32,
    /// The most candidates one block sorts out (`TOPK.grid_candidates`).
    pub candidates: u64,
    /// The most levels (the host launches one for rows under `TOPK.grid_narrow_min_cols`).
    pub levels: usize,
}

/// The grid schedule's narrowing of one row's keys (`1 <= k <= keys.len()`): level by level,
/// the histogram of the digit (`bin_bits` bits below the prefix) of every key matching the
/// prefix, the bin holding the `remaining`-th key from the top ([`threshold_bin`]), the prefix
/// extended by it; it stops once `k - remaining` plus the bin's count is at most
/// `shape.candidates`, after `shape.levels` levels, or when no bits are left. Returns the prefix (lower bits 0) and the levels it
/// took; `None` when k is 0 or above the keys.
pub fn grid_threshold(keys: &[u32], k: u32, shape: GridShape) -> Option<(u32, usize)> {
    let all = if shape.width == 32 { u32::MAX } else { (1u32 << shape.width) - 1 };
    let (mut prefix, mut remaining, mut top, mut levels) = (0u32, k, shape.width, 0);
    while top > 0 {
        let shift = top.saturating_sub(shape.bin_bits);
        let above = if top >= shape.width { 0 } else { (all << top) & all };
        let mut hist = vec![0u32; 1 << shape.bin_bits];
        for &key in keys.iter().filter(|&&key| key & above == prefix) {
            hist[((key >> shift) & ((1u32 << (top - shift)) - 1)) as usize] += 1;
        }
        let bin = threshold_bin(&hist, remaining)?;
        remaining -= hist[bin + 1..].iter().sum::<u32>();
        prefix |= (bin as u32) << shift;
        levels += 1;
        top = shift;
        if (k - remaining) as u64 + hist[bin] as u64 <= shape.candidates || levels == shape.levels {
            break;
        }
    }
    Some((prefix, levels))
}

/// One row's top-k columns through the grid schedule (`1 <= k <= cols`): the prefix of
/// [`grid_threshold`], the candidates (every key at or above it, as ranks, in the order `order`
/// gives: the kernel's atomics hand out any), the k-th largest rank, the ranks at or above
/// it, the bitonic network.
pub fn grid_threshold_select<T: TopkValue>(
    row: &[T],
    spec: TopkSpec,
    shape: GridShape,
    order: impl Fn(&mut Vec<u64>),
) -> Vec<u32> {
    let keys: Vec<u32> = row.iter().map(|&v| selection_key(v, spec) >> (32 - shape.width)).collect();
    let k = spec.k as u32;
    let Some((threshold, _)) = grid_threshold(&keys, k, shape) else { return Vec::new() };
    let mut candidates: Vec<u64> =
        keys.iter().enumerate().filter(|(_, &key)| key >= threshold).map(|(c, &key)| rank(key, c as u32)).collect();
    order(&mut candidates);
    let kth = kth_rank(&candidates, k);
    let chosen: Vec<u64> = candidates.into_iter().filter(|&r| r >= kth).collect();
    bitonic_descending(&chosen).into_iter().map(|r| !(r as u32)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generators::{topk_rows, TopkFamily};
    use crate::topk::{topk_rows as direct, TopkNan};
    use half::{bf16, f16};

    fn check<T: TopkValue>(row: &[T], width: u32, nan: TopkNan, what: &str) {
        let cols = row.len();
        let mut ks: Vec<usize> = vec![1, 2, 31, 32, 33, 256, cols / 2, cols.saturating_sub(1), cols];
        ks.retain(|&k| (1..=cols).contains(&k));
        for k in ks {
            for largest in [true, false] {
                let spec = TopkSpec { k, largest, nan };
                let want = direct(row, 1, cols, spec).expect("valid row").indices;
                for threads in [32, 512] {
                    let got: Vec<i64> =
                        block_radix_select(row, spec, width, threads).into_iter().map(|c| c as i64).collect();
                    assert_eq!(got, want, "{what} cols={cols} k={k} largest={largest} threads={threads}");
                }
            }
        }
    }

    #[test]
    fn the_schedule_gives_the_direct_definition_s_answer_on_every_family() {
        for (f, family) in TopkFamily::ALL.into_iter().enumerate() {
            let nan = if family.has_nan() { TopkNan::AboveAll } else { TopkNan::Reject };
            for cols in [1, 2, 31, 33, 257, 1000, 4097] {
                let wide = topk_rows(family, 1, cols, 17 + f as u64).expect("a row");
                check(&wide, 32, nan, family.name());
                let b: Vec<bf16> = wide.iter().map(|&v| bf16::from_f32(v)).collect();
                check(&b, 16, nan, family.name());
                let h: Vec<f16> = wide.iter().map(|&v| f16::from_f32(v)).collect();
                check(&h, 16, nan, family.name());
            }
        }
    }

    #[test]
    fn the_grid_schedule_gives_the_direct_definition_s_answer_in_any_candidate_order() {
        for (f, family) in TopkFamily::ALL.into_iter().enumerate() {
            let nan = if family.has_nan() { TopkNan::AboveAll } else { TopkNan::Reject };
            for cols in [1, 2, 33, 257, 4097, 9000] {
                let wide = topk_rows(family, 1, cols, 29 + f as u64).expect("a row");
                let b: Vec<bf16> = wide.iter().map(|&v| bf16::from_f32(v)).collect();
                for k in [1, 2, 33, 256, cols / 2, cols].into_iter().filter(|&k| (1..=cols).contains(&k)) {
                    // A bound of k narrows to the last level unless a bin holds exactly the
                    // rest; 8192 stops at the first level on these rows.
                    for bound in [k as u64, 64.max(k as u64), 8192] {
                        for largest in [true, false] {
                            let spec = TopkSpec { k, largest, nan };
                            let what = format!("{family:?} cols={cols} k={k} bound={bound} largest={largest}");
                            let want = direct(&wide, 1, cols, spec).expect("valid").indices;
                            let reversed = |c: &mut Vec<u64>| c.reverse();
                            let shape = GridShape { width: 32, bin_bits: 11, candidates: bound, levels: 3 };
                            let got = grid_threshold_select(&wide, spec, shape, reversed);
                            assert_eq!(got.iter().map(|&c| c as i64).collect::<Vec<_>>(), want, "{what}");
                            let want = direct(&b, 1, cols, spec).expect("valid").indices;
                            let rotated = |c: &mut Vec<u64>| {
                                let third = c.len() / 3;
                                c.rotate_left(third)
                            };
                            let shape = GridShape { width: 16, bin_bits: 11, candidates: bound, levels: 2 };
                            let got = grid_threshold_select(&b, spec, shape, rotated);
                            assert_eq!(got.iter().map(|&c| c as i64).collect::<Vec<_>>(), want, "bf16 {what}");
                            // One level (narrow rows): the first level's bin and all above it.
                            let shape = GridShape { width: 16, bin_bits: 11, candidates: bound, levels: 1 };
                            let got = grid_threshold_select(&b, spec, shape, |c: &mut Vec<u64>| c.reverse());
                            assert_eq!(
                                got.iter().map(|&c| c as i64).collect::<Vec<_>>(),
                                want,
                                "bf16 one level {what}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn narrowing_stops_at_the_first_level_whose_candidates_fit_the_bound() {
        // 4096 keys of one top-11-bit bin (0x7fe0_0000 | j << 10: the second level tells them
        // apart) and 3 above it: k = 4 leaves 1 to take in the big bin.
        let mut keys: Vec<u32> = (0..4096u32).map(|j| 0x7fe0_0000 | (j % 2048) << 10).collect();
        keys.extend([0xffff_0000, 0xfff0_0000, 0xff00_0000]);
        let shape = |candidates| GridShape { width: 32, bin_bits: 11, candidates, levels: 3 };
        // 3 above + 4096 in the bin: a bound of 4099 stops at the first level.
        assert_eq!(grid_threshold(&keys, 4, shape(4099)), Some((0x7fe0_0000, 1)));
        // One less: the second level's top bin (2047) holds 2 keys, 3 + 2 fit 5.
        assert_eq!(grid_threshold(&keys, 4, shape(5)), Some((0x7fe0_0000 | 2047 << 10, 2)));
        // Below the 5 keys of that bin: the third level (10 bits, all 0 here) cannot narrow
        // further, and the key is whole.
        assert_eq!(grid_threshold(&keys, 4, shape(4)), Some((0x7fe0_0000 | 2047 << 10, 3)));
        // k = 3 is the third key above the bin: the first level's bin of 0xff00_0000.
        assert_eq!(grid_threshold(&keys, 3, shape(8192)), Some((0xff00_0000 & !((1 << 21) - 1), 1)));
        assert_eq!(grid_threshold(&keys, 0, shape(8192)), None);
        // One level launched: the first level's bin, however many it holds.
        let one = GridShape { width: 32, bin_bits: 11, candidates: 4, levels: 1 };
        assert_eq!(grid_threshold(&keys, 4, one), Some((0x7fe0_0000, 1)));
    }

    #[test]
    fn the_threshold_is_the_bin_of_the_k_th_key_from_the_top() {
        let mut hist = vec![0u32; 2048];
        hist[2047] = 3;
        hist[1000] = 5;
        hist[3] = 2;
        assert_eq!(threshold_bin(&hist, 1), Some(2047));
        assert_eq!(threshold_bin(&hist, 3), Some(2047));
        assert_eq!(threshold_bin(&hist, 4), Some(1000));
        assert_eq!(threshold_bin(&hist, 10), Some(3));
        assert_eq!(threshold_bin(&hist, 11), None);
    }

    #[test]
    fn the_pick_counts_from_the_top_bin() {
        let mut hist = [0u32; BINS];
        hist[255] = 2;
        hist[7] = 5;
        hist[0] = 1;
        assert_eq!(pick_digit(&hist, 1), Some((255, 1)));
        assert_eq!(pick_digit(&hist, 2), Some((255, 2)));
        assert_eq!(pick_digit(&hist, 3), Some((7, 1)));
        assert_eq!(pick_digit(&hist, 8), Some((0, 1)));
        assert_eq!(pick_digit(&hist, 9), None);
        assert_eq!(pick_digit(&hist, 0), None);
    }
}
