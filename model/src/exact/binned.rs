//! The binned-limb superaccumulator of `kernels/cuda/exact_sum.cu`, on the
//! CPU: the same integer algorithm (binning, per-thread accumulation, carry
//! normalisation every 256 adds, block records, one final rounding) and, in
//! [`replay_launch`], the kernel's schedule with its register windows, so that
//! the algorithm is proved against the rug reference
//! ([`super::correctly_rounded_sum_f32`]) before any GPU runs, and so that
//! the sweep can compute expected values of 2^28 inputs quickly.
//!
//! A finite f32 is `±m << e` in units of 2^-150 (`m < 2^24`, `1 <= e <=
//! 254`); it adds `±m << (e & 31)` to bin `e >> 5`. Words 0..7 are the bins
//! (weight `2^(32 b)` units), word 8 is the carry word (weight 2^256). The
//! overflow bounds are proved in the header of `exact_sum.cu`; arithmetic
//! here is plain `i64`, so a debug build (the tests) would panic on any
//! overflow the proof missed.

use half::bf16;

use super::correctly_rounded::NonFiniteSeen;

/// Exponent bins of 32 exponent values each (`e >> 5` for `1 <= e <= 254`).
pub const BINS: usize = 8;
/// The bins plus the carry word.
pub const WORDS: usize = BINS + 1;
/// Adds a bin takes between normalisations (each `< 2^55`).
pub const FLUSH_ADDS: usize = 256;
/// Threads per block of the kernel (`kBlockThreads`).
pub const BLOCK_THREADS: usize = 256;
/// Items per thread per tile (`kExactItemsPerThread`).
pub const ITEMS_PER_THREAD: usize = 16;
/// Inputs per tile (`kExactTileItems`).
pub const TILE_ITEMS: usize = BLOCK_THREADS * ITEMS_PER_THREAD;
/// Tiles a kernel thread adds between normalisations (`kExactFlushTiles`).
pub const FLUSH_TILES: usize = FLUSH_ADDS / ITEMS_PER_THREAD;

const WORD_MASK: i64 = 0xffff_ffff;

/// A superaccumulator: nine signed words and the non-finite flags.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BinnedAccumulator {
    words: [i64; WORDS],
    seen: NonFiniteSeen,
    adds_since_flush: usize,
}

/// The bin and signed term of one f32 (as bits); non-finite values give 0.
fn term(bits: u32) -> (usize, i64) {
    let biased = (bits >> 23) & 0xff;
    let fraction = bits & 0x7f_ffff;
    let e = biased.max(1);
    let m: u64 = match biased {
        0xff => 0,
        0 => u64::from(fraction),
        _ => u64::from(fraction | 0x80_0000),
    };
    let magnitude = (m << (e & 31)) as i64;
    ((e >> 5) as usize, if bits >> 31 != 0 { -magnitude } else { magnitude })
}

impl BinnedAccumulator {
    /// The zero sum.
    pub fn new() -> BinnedAccumulator {
        BinnedAccumulator::default()
    }

    /// Adds one f32 given as bits to its bin, without normalising (the
    /// kernel's per-item step; the caller normalises at least every
    /// [`FLUSH_ADDS`] adds).
    pub fn add_bits_unflushed(&mut self, bits: u32) {
        let x = f32::from_bits(bits);
        if !x.is_finite() {
            self.seen.see(x);
        }
        let (bin, v) = term(bits);
        self.words[bin] += v;
    }

    /// Adds `x`, normalising after every [`FLUSH_ADDS`] adds.
    pub fn add(&mut self, x: f32) {
        self.add_bits_unflushed(x.to_bits());
        self.adds_since_flush += 1;
        if self.adds_since_flush == FLUSH_ADDS {
            self.normalise();
        }
    }

    /// Carry propagation: words 0..7 into `[0, 2^32)`, the carries into
    /// word 8; the value is unchanged (`>>` is a floor division by 2^32).
    pub fn normalise(&mut self) {
        let mut carry = 0i64;
        for word in &mut self.words[..BINS] {
            let t = *word + carry;
            *word = t & WORD_MASK;
            carry = t >> 32;
        }
        self.words[BINS] += carry;
        self.adds_since_flush = 0;
    }

    /// Adds `other`'s words (both normalised first) and flags.
    pub fn merge(&mut self, other: &BinnedAccumulator) {
        let mut other = other.clone();
        other.normalise();
        self.normalise();
        self.add_words(&other.words);
        self.seen = self.seen.merge(other.seen);
        self.normalise();
    }

    /// The words, as the kernel's block records hold them.
    pub fn words(&self) -> [i64; WORDS] {
        self.words
    }

    /// Word-wise addition without normalising (the kernel's block sums).
    fn add_words(&mut self, words: &[i64; WORDS]) {
        for (mine, theirs) in self.words.iter_mut().zip(words) {
            *mine += theirs;
        }
    }

    /// The value rounded once to nearest-even f32, under the contract of
    /// [`super::correctly_rounded_sum_f32`].
    pub fn round(&self) -> f32 {
        if let Some(forced) = self.seen.forced_result() {
            return forced;
        }
        let mut v = self.clone();
        v.normalise();
        round_words(&v.words)
    }
}

/// Rounds a normalised superaccumulator, as the kernel's `finish` does: the
/// two's complement limbs, the magnitude, then [`round_magnitude`].
fn round_words(words: &[i64; WORDS]) -> f32 {
    let negative = words[BINS] < 0;
    let mut limbs = [0u32; 2 * WORDS - 7];
    let mut carry = u64::from(negative);
    for (k, limb_out) in limbs.iter_mut().take(2 * WORDS - 8).enumerate() {
        let limb = if k < BINS { words[k] as u32 } else { ((words[BINS] as u64) >> (32 * (k - BINS))) as u32 };
        let flipped = u64::from(if negative { !limb } else { limb }) + carry;
        *limb_out = flipped as u32;
        carry = flipped >> 32;
    }
    f32::from_bits(round_magnitude(&limbs) | if negative { 0x8000_0000 } else { 0 })
}

/// Nearest-even f32 bits of the magnitude in `limbs` (units of 2^-150,
/// little-endian 32-bit limbs, the last one 0), `+inf` on overflow. In these
/// units an f32 is `m << e` and its bit pattern is `((e - 1) << 23) + m`.
fn round_magnitude(limbs: &[u32; 2 * WORDS - 7]) -> u32 {
    let mut top = 9;
    while top > 0 && limbs[top] == 0 {
        top -= 1;
    }
    if limbs[top] == 0 {
        return 0;
    }
    let msb = 32 * top + 31 - limbs[top].leading_zeros() as usize;
    let shift = if msb > 24 { msb - 23 } else { 1 };
    if shift > 255 {
        return 0x7f80_0000;
    }
    let window = u64::from(limbs[shift >> 5]) | (u64::from(limbs[(shift >> 5) + 1]) << 32);
    let kept = ((window >> (shift & 31)) as u32) & 0xff_ffff;
    let round_at = shift - 1;
    let round_bit = (limbs[round_at >> 5] >> (round_at & 31)) & 1;
    let below = limbs[round_at >> 5] & ((1u32 << (round_at & 31)) - 1);
    let sticky = below != 0 || limbs[..round_at >> 5].iter().any(|&l| l != 0);
    let up = round_bit & (u32::from(sticky) | (kept & 1));
    let bits = ((shift as u64 - 1) << 23) + u64::from(kept) + u64::from(up);
    bits.min(0x7f80_0000) as u32
}

/// The correctly rounded sum of `values` by one binned accumulator.
pub fn binned_sum_f32(values: &[f32]) -> f32 {
    let mut acc = BinnedAccumulator::new();
    for &x in values {
        acc.add(x);
    }
    acc.round()
}

/// The correctly rounded f32 sum of bf16 `values` by one binned accumulator.
pub fn binned_sum_bf16(values: &[bf16]) -> f32 {
    let mut acc = BinnedAccumulator::new();
    for x in values {
        acc.add(x.to_f32());
    }
    acc.round()
}

/// The input element layout of the kernel's loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Four 16-byte loads of 4 f32: item `4j + k` is `base + 4(256 j + t) + k`.
    F32,
    /// Two 16-byte loads of 8 bf16: item `8j + k` is `base + 8(256 j + t) + k`.
    Bf16,
}

/// The element index of `item` of thread `t` in the tile at `base`.
fn element(layout: Layout, base: usize, t: usize, item: usize) -> usize {
    let width = match layout {
        Layout::F32 => 4,
        Layout::Bf16 => 8,
    };
    base + width * ((item / width) * BLOCK_THREADS + t) + item % width
}

/// Window bases of the kernel's register window (exponents `base ..= base +
/// 21`): `kWindowFirstBase`, `kWindowMaxBase`, `kWindowSpan`.
const WINDOW_SPAN: u32 = 22;
const WINDOW_FIRST_BASE: u32 = 128 - WINDOW_SPAN;
/// The highest base: a flush writes words `base >> 5` and the next, and in
/// the kernel both must be rows of the shared bins (word 8 is a register).
const WINDOW_MAX_BASE: u32 = 32 * (BINS as u32 - 1) - 1;
/// Threads of a warp (one window base each).
const WARP_THREADS: usize = 32;
/// Values per thread between two warp votes on the window (`kExactVoteItems`).
const VOTE_ITEMS: usize = 4;
/// `kMissesBeforeDirect` and `kDirectGroups`: after this many vote groups in
/// a row with inputs outside the window, a warp adds that many groups
/// straight to the bins.
const MISSES_BEFORE_DIRECT: u32 = 2;
const DIRECT_GROUPS: u32 = 32;
/// The f64 window is exact while its sum stays below 2^53 units of
/// 2^(base - 150).
const WINDOW_EXACT_UNITS: u64 = 1 << 53;

/// One warp's window state (`Window::base`, `direct`, `misses`).
struct WarpWindow {
    base: u32,
    direct: u32,
    misses: u32,
}

/// `e - base` of the f32 `bits`, wrapping as the kernel's `window_offset`:
/// below [`WINDOW_SPAN`] exactly when the input lies in the window.
fn window_offset(bits: u32, base: u32) -> u32 {
    (bits << 1).wrapping_sub(base << 24) >> 24
}

/// One kernel thread: its bins and its register window, both as the kernel
/// keeps it (`window`, an f64 adding the f32 inputs) and as the exact
/// integer it must equal (`units`, in units of 2^(base - 150)). Plain
/// `i64` arithmetic: a debug build panics on any overflow the kernel's
/// bound proof missed, and a flush panics if the f64 ever rounded.
#[derive(Default)]
struct KernelThread {
    bins: BinnedAccumulator,
    window: f64,
    units: i64,
}

impl KernelThread {
    /// `window_add` for an input inside the window.
    fn window_add(&mut self, bits: u32, offset: u32) {
        let term = i64::from((bits & 0x7f_ffff) | 0x80_0000) << offset;
        self.units += if bits >> 31 != 0 { -term } else { term };
        assert!(self.units.unsigned_abs() < WINDOW_EXACT_UNITS, "the f64 window left its exact range");
        self.window += f64::from(f32::from_bits(bits));
    }

    /// `window_flush`: the window's value k = window * 2^(150 - base) into
    /// words `base >> 5` and the next.
    fn window_flush(&mut self, base: u32) {
        let scale = f64::from_bits(u64::from(1023 + 150 - base) << 52);
        let value = (self.window * scale) as i64;
        assert_eq!(value, self.units, "the f64 window rounded (base {base})");
        let (q, r) = ((base >> 5) as usize, base & 31);
        assert!(q + 1 < BINS, "a flush from base {base} would write past the kernel's shared bins");
        self.bins.words[q] += (((value as u64) << r) & WORD_MASK as u64) as i64;
        self.bins.words[q + 1] += value >> (32 - r);
        self.window = 0.0;
        self.units = 0;
    }
}

/// One vote group of a warp (`values[lane][item]`), as `add_values` adds
/// it: straight to the bins while `direct` lasts; else the window first,
/// then, if any nonzero input of the warp fell outside, the base moved to
/// the largest finite exponent - 21 and the outside inputs added to the
/// window or the bins (zeros add nothing).
fn add_warp_group(threads: &mut [KernelThread], values: &[[u32; VOTE_ITEMS]], warp: &mut WarpWindow) {
    if warp.direct > 0 {
        for (thread, v) in threads.iter_mut().zip(values) {
            v.iter().filter(|&&bits| bits << 1 != 0).for_each(|&bits| thread.bins.add_bits_unflushed(bits));
        }
        warp.direct -= 1;
        return;
    }
    let old_base = warp.base;
    let mut outside = false;
    for (thread, v) in threads.iter_mut().zip(values) {
        for &bits in v {
            let offset = window_offset(bits, old_base);
            if offset < WINDOW_SPAN {
                thread.window_add(bits, offset);
            }
            outside |= offset >= WINDOW_SPAN && bits << 1 != 0;
        }
    }
    if !outside {
        warp.misses = 0;
        return;
    }
    warp.misses += 1;
    if warp.misses == MISSES_BEFORE_DIRECT {
        warp.direct = DIRECT_GROUPS;
        warp.misses = 0;
    }
    let exponent = |bits: &u32| match (bits >> 23) & 0xff {
        0xff => 0,
        e => e,
    };
    let top = values.iter().flatten().map(exponent).max().unwrap_or(0);
    let new_base = (top.max(WINDOW_SPAN) - (WINDOW_SPAN - 1)).min(WINDOW_MAX_BASE);
    if new_base != old_base {
        threads.iter_mut().for_each(|t| t.window_flush(old_base));
        warp.base = new_base;
    }
    for (thread, v) in threads.iter_mut().zip(values) {
        for &bits in v.iter().filter(|&&bits| window_offset(bits, old_base) >= WINDOW_SPAN && bits << 1 != 0) {
            let offset = window_offset(bits, new_base);
            if offset < WINDOW_SPAN {
                thread.window_add(bits, offset);
            } else {
                thread.bins.add_bits_unflushed(bits);
            }
        }
    }
}

/// One launch of the kernels on `grid` blocks, replayed: every thread's
/// tiles and items in the kernel's layout, each warp's register window
/// (base moves, flushes) and bins, the flush and normalisation every
/// [`FLUSH_TILES`] tiles, the block records (word sums of normalised
/// threads), the one-block finish (per-thread record sums, normalise, block
/// sum, normalise) and the rounding. `bits` are f32 bit patterns (bf16
/// widened). Cost `O(n + grid * 256)`.
pub fn replay_launch(bits: &[u32], grid: usize, layout: Layout) -> f32 {
    let n = bits.len();
    let tiles = n.div_ceil(TILE_ITEMS).max(1);
    let mut records = Vec::with_capacity(grid);
    for block in 0..grid {
        let mut record = BinnedAccumulator::new();
        for warp in 0..BLOCK_THREADS / WARP_THREADS {
            let lanes = warp * WARP_THREADS..(warp + 1) * WARP_THREADS;
            let mut threads: Vec<KernelThread> = lanes.clone().map(|_| KernelThread::default()).collect();
            let mut window = WarpWindow { base: WINDOW_FIRST_BASE, direct: 0, misses: 0 };
            let mut since_flush = 0;
            for tile in (block..tiles).step_by(grid.max(1)) {
                for group in (0..ITEMS_PER_THREAD).step_by(VOTE_ITEMS) {
                    let values: Vec<[u32; VOTE_ITEMS]> = lanes
                        .clone()
                        .map(|t| {
                            std::array::from_fn(|k| {
                                let i = element(layout, tile * TILE_ITEMS, t, group + k);
                                if i < n {
                                    bits[i]
                                } else {
                                    0
                                }
                            })
                        })
                        .collect();
                    add_warp_group(&mut threads, &values, &mut window);
                }
                since_flush += 1;
                if since_flush == FLUSH_TILES {
                    for thread in &mut threads {
                        thread.window_flush(window.base);
                        thread.bins.normalise();
                    }
                    since_flush = 0;
                }
            }
            for mut thread in threads {
                thread.window_flush(window.base);
                thread.bins.normalise();
                record.add_words(&thread.bins.words);
                record.seen = record.seen.merge(thread.bins.seen);
            }
        }
        records.push(record);
    }
    let mut total = BinnedAccumulator::new();
    for t in 0..BLOCK_THREADS {
        let mut thread = BinnedAccumulator::new();
        for record in records.iter().skip(t).step_by(BLOCK_THREADS) {
            thread.add_words(&record.words);
            thread.seen = thread.seen.merge(record.seen);
        }
        thread.normalise();
        total.add_words(&thread.words);
        total.seen = total.seen.merge(thread.seen);
    }
    total.round()
}

#[cfg(test)]
mod tests {
    use super::super::correctly_rounded::correctly_rounded_sum_f32;
    use super::*;
    use proptest::prelude::*;

    fn bits(x: &[f32]) -> Vec<u32> {
        x.iter().map(|v| v.to_bits()).collect()
    }

    #[test]
    fn the_hard_cases_agree_with_the_reference() {
        let p2 = |k: i32| 2f32.powi(k);
        let cases: Vec<Vec<f32>> = vec![
            vec![],
            vec![p2(127), p2(127), -p2(127), -p2(127), 0.0, 0.0],
            vec![f32::MAX, f32::MAX],
            vec![-f32::MAX, -f32::MAX],
            vec![f32::MAX, p2(102)],
            vec![f32::MAX, p2(102), p2(102)],
            vec![f32::from_bits(1); 5000],
            vec![f32::MIN_POSITIVE, -f32::from_bits(1)],
            vec![1.0, p2(-24)],
            vec![1.0, p2(-24), p2(-23)],
            vec![1.0, p2(-24), -p2(-100)],
            vec![p2(100), -f32::from_bits(1)],
            vec![-0.0, -0.0],
            vec![f32::NAN, 1.0],
            vec![f32::INFINITY, f32::NEG_INFINITY],
            vec![f32::NEG_INFINITY, f32::MAX],
        ];
        for x in cases {
            let expected = correctly_rounded_sum_f32(&x).to_bits();
            assert_eq!(binned_sum_f32(&x).to_bits(), expected, "{x:?}");
            for grid in [1, 2, 3] {
                assert_eq!(replay_launch(&bits(&x), grid, Layout::F32).to_bits(), expected, "{x:?} grid {grid}");
            }
        }
    }

    /// The largest term of every bin, 2^17 times with one sign: the bins
    /// carry often and nothing overflows (debug arithmetic would panic).
    #[test]
    fn maximal_terms_carry_without_overflow() {
        for e in [31u32, 63, 95, 127, 159, 191, 223, 254] {
            let x = f32::from_bits((e << 23) | 0x7f_ffff);
            let values = vec![x; 1 << 17];
            let expected = correctly_rounded_sum_f32(&values);
            assert_eq!(binned_sum_f32(&values).to_bits(), expected.to_bits(), "e = {e}");
            assert_eq!(replay_launch(&bits(&values), 1, Layout::F32).to_bits(), expected.to_bits());
        }
    }

    /// Tiles that alternate between exponent bands move every warp's window
    /// base at each tile; zeros, subnormals and infinities stay outside it.
    #[test]
    fn window_bases_that_move_every_tile_keep_the_sum_exact() {
        let band = |tile: usize, i: usize| -> f32 {
            let r = ((i * 2654435761) % 1000) as f32 / 1000.0 - 0.5;
            match tile % 4 {
                0 => r * 2f32.powi(100),
                1 => r * 2f32.powi(-120),
                2 if i % 7 == 0 => 0.0,
                2 => f32::from_bits((i % 5000) as u32),
                _ => r * 2f32.powi((i % 60) as i32),
            }
        };
        let mut x: Vec<f32> = (0..9 * TILE_ITEMS + 77).map(|i| band(i / TILE_ITEMS, i)).collect();
        let expected = correctly_rounded_sum_f32(&x).to_bits();
        for grid in [1, 2, 5] {
            assert_eq!(replay_launch(&bits(&x), grid, Layout::F32).to_bits(), expected, "grid {grid}");
        }
        x[5 * TILE_ITEMS + 3] = f32::INFINITY;
        assert_eq!(replay_launch(&bits(&x), 2, Layout::F32), f32::INFINITY);
        // Spread over 120 exponents: warps switch to direct bin adds and back.
        let wide: Vec<f32> = (0..20 * TILE_ITEMS)
            .map(|i| if i % 3 == 0 { -1.0 } else { 1.0 } * 2f32.powi((i % 120) as i32 - 60))
            .collect();
        let expected = correctly_rounded_sum_f32(&wide).to_bits();
        assert_eq!(replay_launch(&bits(&wide), 3, Layout::F32).to_bits(), expected);
    }

    #[test]
    fn ill_conditioned_sums_agree() {
        for condition in [1e10, 1e30, 1e38, 1e50] {
            let (x, _) = crate::generators::ill_conditioned_f32(5000, condition, 3).unwrap();
            let expected = correctly_rounded_sum_f32(&x).to_bits();
            assert_eq!(binned_sum_f32(&x).to_bits(), expected);
            assert_eq!(replay_launch(&bits(&x), 2, Layout::F32).to_bits(), expected);
        }
    }

    #[test]
    fn bf16_layout_replays_the_same_sum() {
        let x = crate::generators::uniform_bf16(9000, 5);
        let widened: Vec<u32> = x.iter().map(|v| v.to_f32().to_bits()).collect();
        let expected = crate::exact::correctly_rounded_sum_bf16(&x).to_bits();
        assert_eq!(binned_sum_bf16(&x).to_bits(), expected);
        assert_eq!(replay_launch(&widened, 2, Layout::Bf16).to_bits(), expected);
    }

    fn finite_f32() -> impl Strategy<Value = f32> {
        prop_oneof![
            any::<u32>().prop_map(f32::from_bits).prop_filter("finite", |x| x.is_finite()),
            (-1.0f32..1.0f32),
            (0u32..(1 << 23)).prop_map(f32::from_bits),
            (0u32..8, any::<bool>()).prop_map(|(k, neg)| {
                let x = 2f32.powi(127) * (1.0 + k as f32 / 8.0);
                if neg {
                    -x
                } else {
                    x
                }
            }),
        ]
    }

    /// Values of one exponent band: `r * 2^k`, `r` in (-1, 1), one `k` per
    /// input, so no single huge term hides the low bins after rounding.
    fn banded_f32s() -> impl Strategy<Value = Vec<f32>> {
        (-150i32..128, prop::collection::vec(-1.0f64..1.0, 0..3000))
            .prop_map(|(k, r)| r.into_iter().map(|v| (v * 2f64.powi(k)) as f32).collect())
    }

    /// The binned sum of `x`, on one accumulator and replayed on a grid of `grid` blocks, has
    /// the bits of the rug reference.
    fn equals_the_rug_reference(x: &[f32], grid: usize) -> Result<(), TestCaseError> {
        let expected = correctly_rounded_sum_f32(x).to_bits();
        prop_assert_eq!(binned_sum_f32(x).to_bits(), expected);
        prop_assert_eq!(replay_launch(&bits(x), grid, Layout::F32).to_bits(), expected);
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// The same on inputs of one exponent band (every bin's carries matter).
        #[test]
        fn banded_sums_equal_the_rug_reference(x in banded_f32s(), grid in 1usize..4) {
            equals_the_rug_reference(&x, grid)?;
        }

        /// The binned algorithm equals the rug reference bit for bit for
        /// arbitrary finite inputs, on one accumulator and on replayed grids.
        #[test]
        fn binned_sums_equal_the_rug_reference(
            x in prop::collection::vec(finite_f32(), 0..3000),
            grid in 1usize..4,
        ) {
            equals_the_rug_reference(&x, grid)?;
        }

        /// Cancelling pairs plus a small remainder: the exact sum is the remainder.
        #[test]
        fn cancellation_leaves_the_remainder(
            big in prop::collection::vec(finite_f32(), 1..500),
            rest in prop::collection::vec(finite_f32(), 0..5),
        ) {
            let mut x: Vec<f32> = big.iter().flat_map(|&v| [v, -v]).chain(rest.iter().copied()).collect();
            x.reverse();
            let expected = correctly_rounded_sum_f32(&x).to_bits();
            prop_assert_eq!(binned_sum_f32(&x).to_bits(), expected);
            prop_assert_eq!(correctly_rounded_sum_f32(&rest).to_bits(), expected);
        }
    }
}
