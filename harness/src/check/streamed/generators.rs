//! The catalogue's large inputs made side by side: the very values of
//! [`model::generators`]' piece streams (small and many-tie integers, full
//! range int32, uniform f32, compaction flags), made on every core instead
//! of one.
//!
//! The model's generators draw from one xoshiro256** stream, one value after
//! another. xoshiro's state update is linear over GF(2), so the state k draws
//! ahead is the state times the update matrix to the k-th power ([`jump`]):
//! each piece of a window starts from its own jumped state and is made on
//! its own core. Two rules keep the values exact:
//!
//! * **A draw that might be rejected.** `below(bound)` redraws when the low
//!   half of `draw * bound` is under `2^64 mod bound`, which is under
//!   `bound`. A piece is made assuming one draw per value and is kept only if
//!   no low half is under `bound` (for the catalogue's bounds of 19 and 5, a
//!   chance of about 2^-59 a value); otherwise its window is made again one
//!   draw after another, rejections included, and later windows start where
//!   that left the stream.
//! * **Values of several draws** (a compaction flag takes a second draw
//!   after a 3): the stream is cut into chunks of draws, each decoded twice
//!   side by side (starting at a value, and starting on the second draw of
//!   one), and the chunks are chained in order, each taking the decoding its
//!   predecessor's end selects.
//!
//! The whole-input rules are decided first, as the model does: "never all
//! zeros" by a sequential probe (it stops at the first nonzero value), and
//! the full-range family's planted `i32::MIN` and `i32::MAX` from the state
//! n draws ahead. Tests prove every piece equal to the model's, the window
//! that is remade and the chained chunks included.

use model::generators::{splitmix64, DataFamily};
use rayon::prelude::*;
use std::collections::VecDeque;
use std::sync::OnceLock;

/// Pieces made side by side at a time.
const WINDOW: usize = 16;

/// xoshiro256** as [`model::generators::Rng`] (seeded through splitmix64),
/// its state open so that it can jump.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Xoshiro([u64; 4]);

impl Xoshiro {
    fn new(seed: u64) -> Xoshiro {
        let mut state = seed;
        Xoshiro([splitmix64(&mut state), splitmix64(&mut state), splitmix64(&mut state), splitmix64(&mut state)])
    }

    /// The state update of one draw (linear over GF(2)).
    fn advance(s: &mut [u64; 4]) {
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
    }

    fn next_u64(&mut self) -> u64 {
        let result = self.0[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        Self::advance(&mut self.0);
        result
    }

    /// `Rng::below`: uniform in `0..bound` by multiply-and-reject.
    fn below(&mut self, bound: u64) -> u64 {
        if bound == 0 {
            return 0;
        }
        let threshold = bound.wrapping_neg() % bound;
        loop {
            let m = u128::from(self.next_u64()) * u128::from(bound);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }
}

/// A 256 x 256 matrix over GF(2) acting on xoshiro states: column i is the
/// image of the state whose only set bit is bit i.
struct Gf2(Vec<[u64; 4]>);

impl Gf2 {
    /// The update of one draw.
    fn step() -> Gf2 {
        Gf2((0..256)
            .map(|i| {
                let mut s = [0u64; 4];
                s[i / 64] = 1 << (i % 64);
                Xoshiro::advance(&mut s);
                s
            })
            .collect())
    }

    fn apply(&self, s: &[u64; 4]) -> [u64; 4] {
        let mut out = [0u64; 4];
        for (i, column) in self.0.iter().enumerate() {
            if s[i / 64] >> (i % 64) & 1 == 1 {
                out.iter_mut().zip(column).for_each(|(o, c)| *o ^= c);
            }
        }
        out
    }

    /// This update done twice.
    fn squared(&self) -> Gf2 {
        Gf2(self.0.iter().map(|column| self.apply(column)).collect())
    }
}

/// The updates of 2^i draws, i < 48 (an input of up to 2^47 draws).
fn powers() -> &'static [Gf2] {
    static POWERS: OnceLock<Vec<Gf2>> = OnceLock::new();
    POWERS.get_or_init(|| {
        let mut powers = vec![Gf2::step()];
        while powers.len() < 48 {
            let next = powers[powers.len() - 1].squared();
            powers.push(next);
        }
        powers
    })
}

/// The state `k` draws after `x`.
fn jump(x: Xoshiro, k: u64) -> Xoshiro {
    let mut s = x.0;
    for (i, power) in powers().iter().enumerate() {
        if k >> i & 1 == 1 {
            s = power.apply(&s);
        }
    }
    debug_assert!(k >> powers().len() == 0, "a jump past 2^48 draws");
    Xoshiro(s)
}

/// How one value is made from the stream.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Draw {
    /// `range_i64(lo, lo + bound - 1)`: `lo + below(bound)`.
    Range { lo: i64, bound: u64 },
    /// `next_u64() as i32`.
    Raw32,
    /// `signed_unit_f64() as f32`.
    SignedUnit,
}

/// A value of `T` as its generator makes it.
pub trait Value: Copy + PartialEq + Send + Sync + 'static {
    /// The value of one draw `x` by `draw`, or `None` when `below` might
    /// have rejected it (its low half is under the bound).
    fn of(draw: Draw, x: u64, suspicious: u64) -> Option<Self>;
    /// The next value made one draw after another, rejections included.
    fn sequential(draw: Draw, rng: &mut Xoshiro) -> Self;
}

/// `range_i64(lo, lo + bound - 1)` of one draw, unless it might be rejected.
fn range_of(lo: i64, bound: u64, x: u64, suspicious: u64) -> Option<i64> {
    let m = u128::from(x) * u128::from(bound);
    ((m as u64) >= suspicious).then(|| lo.wrapping_add((m >> 64) as i64))
}

/// `signed_unit_f64` of one draw.
fn signed_unit(x: u64) -> f64 {
    2.0 * ((x >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)) - 1.0
}

impl Value for i32 {
    fn of(draw: Draw, x: u64, suspicious: u64) -> Option<i32> {
        match draw {
            Draw::Range { lo, bound } => range_of(lo, bound, x, suspicious.max(bound)).map(|v| v as i32),
            Draw::Raw32 => Some(x as i32),
            Draw::SignedUnit => None,
        }
    }

    fn sequential(draw: Draw, rng: &mut Xoshiro) -> i32 {
        match draw {
            Draw::Range { lo, bound } => lo.wrapping_add(rng.below(bound) as i64) as i32,
            Draw::Raw32 | Draw::SignedUnit => rng.next_u64() as i32,
        }
    }
}

impl Value for f32 {
    fn of(draw: Draw, x: u64, _: u64) -> Option<f32> {
        (draw == Draw::SignedUnit).then(|| signed_unit(x) as f32)
    }

    fn sequential(_: Draw, rng: &mut Xoshiro) -> f32 {
        signed_unit(rng.next_u64()) as f32
    }
}

/// One input of one draw per value, made a window of pieces at a time.
pub struct OneDraw<T: Value> {
    draw: Draw,
    n: usize,
    piece: usize,
    made: usize,
    rng: Xoshiro,
    /// Values set over the drawn ones: "never all zeros", planted extremes.
    fixed: Vec<(usize, T)>,
    ready: VecDeque<Vec<T>>,
    /// The low half under which a draw is remade one after another (the
    /// bound; tests raise it to exercise the remade windows).
    suspicious: u64,
}

impl<T: Value> OneDraw<T> {
    fn new(draw: Draw, n: usize, seed: u64, piece: usize) -> OneDraw<T> {
        let rng = Xoshiro::new(seed);
        OneDraw { draw, n, piece: piece.max(1), made: 0, rng, fixed: Vec::new(), ready: VecDeque::new(), suspicious: 0 }
    }

    /// Element 0 becomes `instead` when every value is `zero` (the model's
    /// probe: one draw after another, up to the first nonzero value).
    fn never_all_zeros(mut self, zero: T, instead: T) -> OneDraw<T> {
        let mut probe = self.rng;
        if self.n > 0 && (0..self.n).all(|_| T::sequential(self.draw, &mut probe) == zero) {
            self.fixed.push((0, instead));
        }
        self
    }

    /// The next window of pieces, each from its own jumped state; a window
    /// with a draw that might be rejected is made again one draw after another.
    fn window(&mut self) {
        let ranges: Vec<(usize, usize)> = (0..WINDOW)
            .map(|w| self.made + w * self.piece)
            .take_while(|&start| start < self.n)
            .map(|start| (start, self.piece.min(self.n - start)))
            .collect();
        let items: usize = ranges.iter().map(|r| r.1).sum();
        let (draw, rng, suspicious) = (self.draw, self.rng, self.suspicious);
        let pieces: Option<Vec<Vec<T>>> = ranges
            .par_iter()
            .map(|&(start, len)| {
                let mut r = jump(rng, (start - self.made) as u64);
                (0..len).map(|_| T::of(draw, r.next_u64(), suspicious)).collect::<Option<Vec<T>>>()
            })
            .collect();
        let mut pieces = match pieces {
            Some(pieces) => {
                self.rng = jump(rng, items as u64);
                pieces
            }
            None => {
                ranges.iter().map(|&(_, len)| (0..len).map(|_| T::sequential(draw, &mut self.rng)).collect()).collect()
            }
        };
        for (piece, &(start, len)) in pieces.iter_mut().zip(&ranges) {
            for &(at, value) in self.fixed.iter().filter(|(at, _)| (start..start + len).contains(at)) {
                piece[at - start] = value;
            }
        }
        self.made += items;
        self.ready.extend(pieces);
    }
}

impl<T: Value> Iterator for OneDraw<T> {
    type Item = Vec<T>;

    fn next(&mut self) -> Option<Vec<T>> {
        if self.ready.is_empty() && self.made < self.n {
            self.window();
        }
        self.ready.pop_front()
    }
}

/// The values of `int_pieces(family, n, seed)` in pieces of `piece` items,
/// made side by side; `None` for a family made whole (the sorted ones).
pub fn int_pieces(family: DataFamily, n: usize, seed: u64, piece: usize) -> Option<OneDraw<i32>> {
    Some(match family {
        DataFamily::SmallInts => OneDraw::new(Draw::Range { lo: -9, bound: 19 }, n, seed, piece).never_all_zeros(0, 1),
        DataFamily::ManyTies => OneDraw::new(Draw::Range { lo: -2, bound: 5 }, n, seed, piece).never_all_zeros(0, 1),
        DataFamily::FullRangeI32 => full_range(n, seed, piece),
        _ => return None,
    })
}

/// The full-range family: one raw draw a value, then `i32::MIN` and
/// `i32::MAX` planted at two distinct positions drawn n draws ahead.
fn full_range(n: usize, seed: u64, piece: usize) -> OneDraw<i32> {
    let mut values = OneDraw::new(Draw::Raw32, n, seed, piece);
    let mut probe = jump(values.rng, n as u64);
    values.fixed = if n >= 2 {
        let i = probe.below(n as u64) as usize;
        let mut j = probe.below(n as u64 - 1) as usize;
        if j >= i {
            j += 1;
        }
        vec![(i, i32::MIN), (j, i32::MAX)]
    } else if n == 1 {
        vec![(0, if probe.next_u64() & 1 == 0 { i32::MIN } else { i32::MAX })]
    } else {
        vec![]
    };
    values
}

/// The values of `uniform_f32_pieces(n, seed)` in pieces of `piece` items, made side by side.
pub fn uniform_f32_pieces(n: usize, seed: u64, piece: usize) -> OneDraw<f32> {
    OneDraw::new(Draw::SignedUnit, n, seed, piece).never_all_zeros(0.0, 0.5)
}

/// The flags of `compaction_flag_pieces(n, seed)` in pieces of `piece`
/// items, made side by side: a draw's top two bits give 0 or 1 (flag 0), 2
/// (flag 1) or 3 (then the next draw's top bit picks 7 or 255).
pub struct Flags {
    n: usize,
    piece: usize,
    made: usize,
    rng: Xoshiro,
    /// Whether the next draw is the second draw of a value.
    second: bool,
    ready: VecDeque<u8>,
}

/// The flags completed by one chunk of draws, entered on a value's second
/// draw or not, and whether it ends between a value's two draws.
fn decode_flags(draws: &[u64], second: bool) -> (Vec<u8>, bool) {
    let mut flags = Vec::with_capacity(draws.len());
    let mut second = second;
    for &x in draws {
        if second {
            flags.push([7u8, 255][(x >> 63) as usize]);
            second = false;
            continue;
        }
        match x >> 62 {
            0 | 1 => flags.push(0),
            2 => flags.push(1),
            _ => second = true,
        }
    }
    (flags, second)
}

impl Flags {
    /// The next window of chunks of draws, each decoded both ways side by side, then chained.
    fn window(&mut self) {
        let chunk = self.piece;
        let rng = self.rng;
        let decoded: Vec<[(Vec<u8>, bool); 2]> = (0..WINDOW)
            .into_par_iter()
            .map(|c| {
                let mut r = jump(rng, (c * chunk) as u64);
                let draws: Vec<u64> = (0..chunk).map(|_| r.next_u64()).collect();
                [decode_flags(&draws, false), decode_flags(&draws, true)]
            })
            .collect();
        self.rng = jump(rng, (WINDOW * chunk) as u64);
        for [at_value, at_second] in decoded {
            let (flags, second) = if self.second { at_second } else { at_value };
            let wanted = (self.n - self.made).min(flags.len());
            self.ready.extend(&flags[..wanted]);
            self.made += wanted;
            self.second = second;
        }
    }
}

impl Iterator for Flags {
    type Item = Vec<u8>;

    fn next(&mut self) -> Option<Vec<u8>> {
        while self.ready.len() < self.piece && self.made < self.n {
            self.window();
        }
        let k = self.piece.min(self.ready.len());
        (k > 0).then(|| self.ready.drain(..k).collect())
    }
}

/// The flags of `compaction_flag_pieces(n, seed)`, made side by side.
pub fn compaction_flag_pieces(n: usize, seed: u64, piece: usize) -> Flags {
    let piece = piece.max(1);
    Flags { n, piece, made: 0, rng: Xoshiro::new(seed ^ 0x0f1a_6500), second: false, ready: VecDeque::new() }
}

#[cfg(test)]
#[path = "generators_tests.rs"]
mod tests;
