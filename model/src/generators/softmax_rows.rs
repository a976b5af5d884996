//! Softmax logit rows: extreme magnitudes, ties, large offsets, and `-inf` masks.

use super::family::MaskPolicy;
use super::rng::Rng;
use crate::ModelError;

/// Row styles, cycled so every style appears in consecutive rows.
const STYLES: usize = 6;

fn logit(style: usize, rng: &mut Rng) -> f32 {
    match style {
        // Moderate logits.
        0 => (8.0 * rng.signed_unit_f64()) as f32,
        // Extreme, exactly repeated values (the [-10000, 0, 10000] -> [0, 0, 1] example and the edges of
        // f32 expf's finite range).
        1 => [-1e4f32, -80.0, 0.0, 80.0, 1e4][rng.index(5)],
        // Near f32 exp overflow without max subtraction: [70, 90).
        2 => (70.0 + 20.0 * rng.unit_f64()) as f32,
        // Large common offset (shift invariance): 1e4 ± 4.
        3 => (1e4 + 4.0 * rng.signed_unit_f64()) as f32,
        // Tiny spread: nearly uniform probabilities.
        4 => (1.0 + 1e-3 * rng.signed_unit_f64()) as f32,
        // Very negative (f32 exp underflow without max subtraction): [-100, -80).
        _ => (-100.0 + 20.0 * rng.unit_f64()) as f32,
    }
}

/// A row-major `rows × cols` f32 buffer of logits from `seed`. Row `r` uses style
/// `(r + s0) % 6` for a seeded `s0`: moderate `[-8, 8)`; extreme values drawn from
/// `{-1e4, -80, 0, 80, 1e4}`; near-overflow `[70, 90)`; large offset `1e4 ± 4`; tiny spread
/// `1 ± 1e-3`; very negative `[-100, -80)`. Masks (`-inf`) follow `mask`. Never `+inf` or NaN.
/// Error: `BadShape` when `rows · cols` overflows.
pub fn softmax_rows(rows: usize, cols: usize, seed: u64, mask: MaskPolicy) -> Result<Vec<f32>, ModelError> {
    let len = checked_len(rows, cols)?;
    let mut data = Vec::with_capacity(len);
    let mut made = SoftmaxRows::new(rows, cols, seed, mask);
    while let Some(row) = made.next_row() {
        data.extend(row);
    }
    Ok(data)
}

/// [`softmax_rows`] a block of whole rows at a time, each block at most
/// [`super::PIECE`] logits (one row when a row is longer): the same logits,
/// in the same order, holding one block. Error: `BadShape` when `rows · cols`
/// overflows.
pub fn softmax_row_pieces(
    rows: usize,
    cols: usize,
    seed: u64,
    mask: MaskPolicy,
) -> Result<impl Iterator<Item = Vec<f32>>, ModelError> {
    checked_len(rows, cols)?;
    let rows_a_piece = (super::PIECE / cols.max(1)).max(1);
    let mut made = SoftmaxRows::new(rows, cols, seed, mask);
    Ok(std::iter::from_fn(move || {
        let mut piece = Vec::new();
        for _ in 0..rows_a_piece {
            match made.next_row() {
                Some(row) => piece.extend(row),
                None => break,
            }
        }
        (!piece.is_empty()).then_some(piece)
    }))
}

fn checked_len(rows: usize, cols: usize) -> Result<usize, ModelError> {
    rows.checked_mul(cols)
        .ok_or_else(|| ModelError::BadShape { primitive: "softmax_rows", detail: format!("{rows} x {cols} overflows") })
}

/// The rows of [`softmax_rows`], made one at a time from one generator.
struct SoftmaxRows {
    rng: Rng,
    first_style: usize,
    next: usize,
    rows: usize,
    cols: usize,
    mask: MaskPolicy,
}

impl SoftmaxRows {
    fn new(rows: usize, cols: usize, seed: u64, mask: MaskPolicy) -> SoftmaxRows {
        let mut rng = Rng::new(seed);
        let first_style = rng.index(STYLES);
        SoftmaxRows { rng, first_style, next: 0, rows, cols, mask }
    }

    fn next_row(&mut self) -> Option<Vec<f32>> {
        if self.next == self.rows {
            return None;
        }
        let (r, cols, mask) = (self.next, self.cols, self.mask);
        self.next += 1;
        let rng = &mut self.rng;
        let style = (r + self.first_style) % STYLES;
        let mut row: Vec<f32> = (0..cols).map(|_| logit(style, rng)).collect();
        let masked_row = mask == MaskPolicy::WithAllMaskedRows && r % 4 == 1;
        if masked_row {
            row.iter_mut().for_each(|x| *x = f32::NEG_INFINITY);
        } else if mask != MaskPolicy::Unmasked && cols > 0 {
            for x in row.iter_mut() {
                if rng.chance(0.25) {
                    *x = f32::NEG_INFINITY;
                }
            }
            if row.iter().all(|x| *x == f32::NEG_INFINITY) {
                let keep = rng.index(cols);
                row[keep] = logit(style, rng);
            }
        }
        Some(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::softmax::softmax_rows as probabilities;

    #[test]
    fn rows_are_valid_or_fail_as_designed() {
        let data = softmax_rows(12, 33, 4, MaskPolicy::RandomMasks).unwrap();
        assert!(data.iter().all(|x| !x.is_nan() && *x != f32::INFINITY));
        assert!(data.contains(&f32::NEG_INFINITY));
        assert!(probabilities(&data, 12, 33).is_ok());
        let data = softmax_rows(6, 5, 4, MaskPolicy::WithAllMaskedRows).unwrap();
        assert_eq!(probabilities(&data, 6, 5), Err(ModelError::AllMasked { rows: vec![1, 5] }));
        let data = softmax_rows(6, 1, 4, MaskPolicy::Unmasked).unwrap();
        assert!(data.iter().all(|x| x.is_finite()));
        assert!(softmax_rows(usize::MAX, 2, 0, MaskPolicy::Unmasked).is_err());
        assert!(softmax_row_pieces(usize::MAX, 2, 0, MaskPolicy::Unmasked).is_err());
    }

    /// The row pieces are the whole buffer's logits, in order, in blocks of
    /// whole rows of at most PIECE logits (one row when a row is longer).
    #[test]
    fn row_pieces_are_the_whole_rows() {
        let piece = crate::generators::PIECE;
        let shapes = [(3, 1), (61, 33), (2 * piece / 1000 + 3, 1000), (3, piece + 1), (5, piece)];
        for (rows, cols) in shapes {
            for mask in [MaskPolicy::Unmasked, MaskPolicy::RandomMasks, MaskPolicy::WithAllMaskedRows] {
                let whole = softmax_rows(rows, cols, 11, mask).unwrap();
                let pieces: Vec<Vec<f32>> = softmax_row_pieces(rows, cols, 11, mask).unwrap().collect();
                assert!(pieces.iter().all(|p| p.len() % cols == 0 && (p.len() <= piece || p.len() == cols)));
                let joined: Vec<f32> = pieces.concat();
                assert_eq!(joined.len(), whole.len(), "{rows}x{cols}");
                assert!(joined.iter().zip(&whole).all(|(a, b)| a.to_bits() == b.to_bits()), "{rows}x{cols} {mask:?}");
            }
        }
    }
}
