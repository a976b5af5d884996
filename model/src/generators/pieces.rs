//! The generators a piece at a time: the very values of [`super::ints`],
//! [`super::uniform_f32`] and [`super::affine_maps`], in order, in pieces of
//! at most [`PIECE`] items, so that an input of 2^28 items (and whatever is
//! derived from it) can be digested and folded without being held. The
//! whole-input generators are these pieces collected, so the two can never
//! disagree.
//!
//! Two rules of the whole generators look at every value before fixing
//! one: "never all zeros" (element 0 becomes nonzero when every value is
//! zero) and the full-range family's planted `i32::MIN` and `i32::MAX`,
//! whose positions are drawn after the values. A piece stream decides both
//! before its first piece with a copy of the generator run ahead (the
//! values are a function of the seed), so the pieces are exactly the whole.

use super::family::{DataFamily, SPARSE_STRIDE, SPARSE_WINDOW};
use super::rng::Rng;
use crate::operator::AffineMap;
use crate::ModelError;

/// Items per piece.
pub const PIECE: usize = 1 << 20;

/// One generated input, a piece at a time (`Iterator` of pieces, in order,
/// whose lengths add up to [`Pieces::len`]).
pub struct Pieces<T> {
    len: usize,
    piece: usize,
    made: usize,
    next: Box<dyn FnMut(usize, usize) -> Vec<T> + Send>,
}

impl<T> Pieces<T> {
    /// Items in all.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no item.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The same stream in pieces of `piece` items (tests use small pieces
    /// to cross piece boundaries at small sizes).
    pub fn with_piece(mut self, piece: usize) -> Pieces<T> {
        self.piece = piece.max(1);
        self
    }

    /// Every piece collected: the whole input.
    pub fn collect_all(self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.len);
        for piece in self {
            out.extend(piece);
        }
        out
    }

    fn new(len: usize, next: impl FnMut(usize, usize) -> Vec<T> + Send + 'static) -> Pieces<T> {
        Pieces { len, piece: PIECE, made: 0, next: Box::new(next) }
    }
}

impl<T> Iterator for Pieces<T> {
    type Item = Vec<T>;

    /// The next piece (items `made..made + k`), or `None` after the last.
    fn next(&mut self) -> Option<Vec<T>> {
        if self.made >= self.len {
            return None;
        }
        let k = self.piece.min(self.len - self.made);
        let piece = (self.next)(self.made, k);
        self.made += k;
        Some(piece)
    }
}

/// Values drawn one per item by `draw`, with "never all zeros": when every
/// value is `zero`, element 0 is `instead`.
fn drawn<T: Copy + PartialEq + Send + 'static>(
    n: usize,
    rng: Rng,
    zero: T,
    instead: T,
    draw: impl Fn(&mut Rng) -> T + Copy + Send + 'static,
) -> Pieces<T> {
    // Whether every value is zero, decided by a copy run ahead (it stops at
    // the first nonzero value: at once, but for the tiniest inputs).
    let mut probe = rng.clone();
    let all_zero = n > 0 && (0..n).all(|_| draw(&mut probe) == zero);
    let mut rng = rng;
    Pieces::new(n, move |start, k| {
        let mut piece: Vec<T> = (0..k).map(|_| draw(&mut rng)).collect();
        if start == 0 && all_zero {
            piece[0] = instead;
        }
        piece
    })
}

/// The full-range family: one `next_u64` per value, then `i32::MIN` and
/// `i32::MAX` planted at two distinct positions drawn after the values (a
/// single value is one of the two).
fn full_range(n: usize, rng: Rng) -> Pieces<i32> {
    let mut probe = rng.clone();
    for _ in 0..n {
        probe.next_u64();
    }
    let planted: Vec<(usize, i32)> = if n >= 2 {
        let i = probe.index(n);
        let mut j = probe.index(n - 1);
        if j >= i {
            j += 1;
        }
        vec![(i, i32::MIN), (j, i32::MAX)]
    } else if n == 1 {
        vec![(0, if probe.next_u64() & 1 == 0 { i32::MIN } else { i32::MAX })]
    } else {
        vec![]
    };
    let mut rng = rng;
    Pieces::new(n, move |start, k| {
        let mut piece: Vec<i32> = (0..k).map(|_| rng.next_u64() as i32).collect();
        for &(at, value) in &planted {
            if (start..start + k).contains(&at) {
                piece[at - start] = value;
            }
        }
        piece
    })
}

/// The values of [`super::ints`]`(family, n, seed)`, a piece at a time. The
/// sorted families are sorted whole first (they are used at small sizes).
/// Error: `BadGenerator` for a non-integer family.
pub fn int_pieces(family: DataFamily, n: usize, seed: u64) -> Result<Pieces<i32>, ModelError> {
    let rng = Rng::new(seed);
    let sorted = |descending: bool| {
        let mut v = full_range(n, Rng::new(seed)).collect_all();
        if descending {
            v.sort_unstable_by(|a, b| b.cmp(a));
        } else {
            v.sort_unstable();
        }
        Pieces::new(n, move |start, k| v[start..start + k].to_vec())
    };
    Ok(match family {
        DataFamily::SmallInts => drawn(n, rng, 0, 1, |r| r.range_i64(-9, 9) as i32),
        DataFamily::ManyTies => drawn(n, rng, 0, 1, |r| r.range_i64(-2, 2) as i32),
        DataFamily::FullRangeI32 => full_range(n, rng),
        DataFamily::SparseSmallInts => sparse_small_ints(n, rng),
        DataFamily::Sorted => sorted(false),
        DataFamily::Reversed => sorted(true),
        other => {
            return Err(ModelError::BadGenerator {
                generator: "ints",
                detail: format!("{} is not an integer family", other.name()),
            })
        }
    })
}

/// The boundaries of [`DataFamily::SparseSmallInts`] at `n` items: 0, 2^31, 2^32,
/// 2^33 (where a signed or unsigned 32-bit index or a 32-bit count of a larger
/// item would wrap) and `n`.
fn sparse_boundaries(n: usize) -> [usize; 5] {
    [0, 1 << 31, 1 << 32, 1 << 33, n]
}

/// Whether item `i` of a [`DataFamily::SparseSmallInts`] input of `n` items is
/// kept nonzero: every [`SPARSE_STRIDE`]-th item, and those within
/// [`SPARSE_WINDOW`] items of a boundary (0, 2^31, 2^32, 2^33, n).
pub fn sparse_keeps(n: usize, i: usize) -> bool {
    i % SPARSE_STRIDE == 0 || sparse_boundaries(n).iter().any(|&b| i.abs_diff(b) <= SPARSE_WINDOW)
}

/// An upper bound of `sum |x|` over a [`DataFamily::SparseSmallInts`] input of
/// `n` items: 9 for each item [`sparse_keeps`] may keep (the stride's, then
/// `2 * SPARSE_WINDOW + 1` around each boundary, counted as if disjoint).
pub fn sparse_abs_bound(n: usize) -> u64 {
    let strided = n.div_ceil(SPARSE_STRIDE) as u64;
    let windows = sparse_boundaries(n).len() as u64 * (2 * SPARSE_WINDOW as u64 + 1);
    9 * (strided + windows)
}

/// [`DataFamily::SparseSmallInts`]: one draw in `[-9, 9]` without 0 for every
/// item (so the stream of draws does not depend on which items are kept), the
/// item set to 0 unless [`sparse_keeps`] keeps it. Item 0 is kept, so the input
/// is never all zeros.
fn sparse_small_ints(n: usize, rng: Rng) -> Pieces<i32> {
    let mut rng = rng;
    Pieces::new(n, move |start, k| {
        (start..start + k)
            .map(|i| {
                let drawn = rng.range_i64(-9, 8) as i32;
                let value = if drawn >= 0 { drawn + 1 } else { drawn };
                if sparse_keeps(n, i) {
                    value
                } else {
                    0
                }
            })
            .collect()
    })
}

/// The values of [`super::uniform_f32`]`(n, seed)`, a piece at a time.
pub fn uniform_f32_pieces(n: usize, seed: u64) -> Pieces<f32> {
    drawn(n, Rng::new(seed), 0.0, 0.5, |r| r.signed_unit_f64() as f32)
}

/// The values of [`super::affine_maps`]`(n, seed)`, a piece at a time.
pub fn affine_map_pieces(n: usize, seed: u64) -> Pieces<AffineMap> {
    let mut rng = Rng::new(seed);
    Pieces::new(n, move |_, k| (0..k).map(|_| AffineMap { a: rng.next_u64() | 1, b: rng.next_u64() }).collect())
}

/// The flags of a compaction input of `n` items from `seed`, a piece at a
/// time: 0 (reject) half the time, else 1, 7 or 255 (any nonzero byte keeps).
pub fn compaction_flag_pieces(n: usize, seed: u64) -> Pieces<u8> {
    let mut rng = Rng::new(seed ^ 0x0f1a_6500);
    Pieces::new(n, move |_, k| {
        (0..k)
            .map(|_| match rng.below(4) {
                0 | 1 => 0,
                2 => 1,
                _ => [7u8, 255][rng.below(2) as usize],
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generators::SPARSE_EXACT_MAX_LEN;

    /// The generators as they were written before pieces, kept as the
    /// reference the pieces must reproduce value for value.
    fn ints_whole(family: DataFamily, n: usize, seed: u64) -> Vec<i32> {
        let mut rng = Rng::new(seed);
        let full_range = |rng: &mut Rng| {
            let mut v: Vec<i32> = (0..n).map(|_| rng.next_u64() as i32).collect();
            if n >= 2 {
                let i = rng.index(n);
                let mut j = rng.index(n - 1);
                if j >= i {
                    j += 1;
                }
                v[i] = i32::MIN;
                v[j] = i32::MAX;
            } else if n == 1 {
                v[0] = if rng.next_u64() & 1 == 0 { i32::MIN } else { i32::MAX };
            }
            v
        };
        let mut v: Vec<i32> = match family {
            DataFamily::SmallInts => (0..n).map(|_| rng.range_i64(-9, 9) as i32).collect(),
            DataFamily::ManyTies => (0..n).map(|_| rng.range_i64(-2, 2) as i32).collect(),
            DataFamily::FullRangeI32 => full_range(&mut rng),
            DataFamily::Sorted => {
                let mut v = full_range(&mut rng);
                v.sort_unstable();
                v
            }
            _ => {
                let mut v = full_range(&mut rng);
                v.sort_unstable_by(|a, b| b.cmp(a));
                v
            }
        };
        if v.first() == Some(&0) && v.iter().all(|&x| x == 0) {
            v[0] = 1;
        }
        v
    }

    fn uniform_whole(n: usize, seed: u64) -> Vec<f32> {
        let mut rng = Rng::new(seed);
        let mut v: Vec<f32> = (0..n).map(|_| rng.signed_unit_f64() as f32).collect();
        if v.first() == Some(&0.0) && v.iter().all(|&x| x == 0.0) {
            v[0] = 0.5;
        }
        v
    }

    #[test]
    fn pieces_are_the_whole_generators_values_at_every_piece_size() {
        for &n in &[0usize, 1, 2, 3, 33, 1000, 4099] {
            for seed in [0u64, 7, 0x5eed] {
                for family in DataFamily::INT_FAMILIES {
                    let whole = ints_whole(family, n, seed);
                    for piece in [1usize, 7, 1000, PIECE] {
                        let pieces = int_pieces(family, n, seed).unwrap().with_piece(piece);
                        assert_eq!(pieces.collect_all(), whole, "{} n={n} seed={seed} piece={piece}", family.name());
                    }
                }
                let whole = uniform_whole(n, seed);
                let pieces = uniform_f32_pieces(n, seed).with_piece(13).collect_all();
                assert_eq!(
                    pieces.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                    whole.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
                );
            }
        }
    }

    #[test]
    fn an_all_zero_draw_still_gets_its_nonzero_first_element() {
        // Seeds whose single small_ints value is 0 exist among the first few hundred.
        let seed = (0u64..1000).find(|&s| ints_whole(DataFamily::SmallInts, 1, s) == vec![1]).expect("a zero draw");
        assert_eq!(int_pieces(DataFamily::SmallInts, 1, seed).unwrap().collect_all(), vec![1]);
    }

    #[test]
    fn the_planted_extremes_land_in_whichever_piece_holds_them() {
        let n = 5000;
        let v = int_pieces(DataFamily::FullRangeI32, n, 3).unwrap().with_piece(64).collect_all();
        assert!(v.contains(&i32::MIN) && v.contains(&i32::MAX));
        assert_eq!(v, ints_whole(DataFamily::FullRangeI32, n, 3));
    }

    #[test]
    fn lengths_add_up_and_a_bad_family_is_an_error() {
        let pieces = int_pieces(DataFamily::SmallInts, 2 * PIECE + 5, 1).unwrap();
        assert_eq!(pieces.len(), 2 * PIECE + 5);
        let lengths: Vec<usize> = pieces.map(|p| p.len()).collect();
        assert_eq!(lengths, vec![PIECE, PIECE, 5]);
        assert!(int_pieces(DataFamily::UniformFloat, 3, 1).is_err());
        assert_eq!(affine_map_pieces(10, 4).with_piece(3).collect_all().len(), 10);
    }

    /// The sparse family: the kept items are the draws (never 0, within
    /// [-9, 9]), the others 0, the same at every piece size; item 0 and the
    /// items around the end are kept; `sum |x|` stays within its bound.
    #[test]
    fn sparse_small_ints_keep_the_stride_and_the_windows() {
        for &n in &[1usize, 2, 33, SPARSE_STRIDE + 2, 3 * SPARSE_STRIDE + 5, 40_000] {
            let whole = int_pieces(DataFamily::SparseSmallInts, n, 5).unwrap().collect_all();
            assert_eq!(whole.len(), n);
            for piece in [1usize, 999, PIECE] {
                let pieces = int_pieces(DataFamily::SparseSmallInts, n, 5).unwrap().with_piece(piece).collect_all();
                assert_eq!(pieces, whole, "n={n} piece={piece}");
            }
            // The draws are SmallInts' stream shifted past 0: one draw per item, kept or not.
            let mut rng = Rng::new(5);
            for (i, &v) in whole.iter().enumerate() {
                let drawn = rng.range_i64(-9, 8) as i32;
                let value = if drawn >= 0 { drawn + 1 } else { drawn };
                let kept = i % SPARSE_STRIDE == 0 || i <= SPARSE_WINDOW || n - 1 - i < SPARSE_WINDOW;
                assert_eq!(sparse_keeps(n, i), kept, "n={n} i={i}");
                assert_eq!(v, if kept { value } else { 0 }, "n={n} i={i}");
                assert!(v != 0 || !kept);
            }
            assert_ne!(whole[0], 0);
            let abs: u64 = whole.iter().map(|v| v.unsigned_abs() as u64).sum();
            assert!(abs <= sparse_abs_bound(n), "n={n}: {abs} > {}", sparse_abs_bound(n));
        }
        // Past 2^31 and 2^32 the windows are kept, between them only the stride.
        let n = (1usize << 33) + 555;
        for b in [1usize << 31, 1 << 32, 1 << 33] {
            assert!(sparse_keeps(n, b - SPARSE_WINDOW) && sparse_keeps(n, b) && sparse_keeps(n, b + SPARSE_WINDOW));
        }
        assert!(sparse_keeps(n, n - 1) && sparse_keeps(n, n - 333));
        let between = (1usize << 32) + 3 * SPARSE_WINDOW;
        assert_eq!(sparse_keeps(n, between), between % SPARSE_STRIDE == 0);
        // Exact in f32 up to its largest length: sum |x| < 2^24 (a float's integers are exact to 2^24).
        assert!(sparse_abs_bound(SPARSE_EXACT_MAX_LEN) < 1 << 24, "{}", sparse_abs_bound(SPARSE_EXACT_MAX_LEN));
        assert!(sparse_abs_bound(2 * SPARSE_EXACT_MAX_LEN) >= 1 << 24);
        assert!(DataFamily::SparseSmallInts.is_integer());
        assert_eq!(DataFamily::from_name("sparse_small_ints").unwrap(), DataFamily::SparseSmallInts);
    }
}
