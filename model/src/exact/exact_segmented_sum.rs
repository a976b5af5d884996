//! The correctly rounded sum of every segment of half-open offsets (segment
//! `s` is `values[offsets[s]..offsets[s + 1]]`): the reference of the
//! `exact_segmented_sum` kernels, by exact (rug) arithmetic per segment.
//! Each segment follows the contract of [`correctly_rounded_sum_f32`]; an
//! empty segment is `+0.0`.

use half::bf16;

use super::correctly_rounded::correctly_rounded_sum_f32;
use crate::segmented_reduce::validate_offsets;
use crate::ModelError;

/// The correctly rounded f32 sum of every segment of `values`. Errors:
/// offsets that are empty, decrease or pass `values.len()` →
/// [`ModelError::BadOffsets`].
pub fn segmented_correctly_rounded_sum_f32(values: &[f32], offsets: &[usize]) -> Result<Vec<f32>, ModelError> {
    validate_offsets(offsets, values.len())?;
    Ok(offsets.windows(2).map(|w| correctly_rounded_sum_f32(&values[w[0]..w[1]])).collect())
}

/// The same for bf16 `values` (each widened exactly).
pub fn segmented_correctly_rounded_sum_bf16(values: &[bf16], offsets: &[usize]) -> Result<Vec<f32>, ModelError> {
    let widened: Vec<f32> = values.iter().map(|x| x.to_f32()).collect();
    segmented_correctly_rounded_sum_f32(&widened, offsets)
}

/// Segments whose correctly rounded sums are known by hand, each with the
/// bits of that sum: the empty segment, 2^127 terms that cancel in spite of
/// f32 overflow, subnormals, signed zeros, normals with a subnormal sum, overflow of the exact sum and of
/// a partial sum only, cancellation, ties to even and just above one, a NaN
/// payload, both infinities, an infinity over overflowing finite terms.
pub fn hand_checked_segments() -> Vec<(Vec<f32>, u32)> {
    let p2 = |k: i32| 2f32.powi(k);
    let tiny = f32::from_bits(1);
    vec![
        (vec![], 0),
        (vec![p2(127), p2(127), -p2(127), -p2(127)], 0),
        (vec![tiny], 1),
        (vec![-tiny, -tiny], 0x8000_0002),
        (vec![-0.0, -0.0], 0),
        // Two normal values whose sum is subnormal: 2^-125 (1 + 2^-23) - 2^-125 = 2^-148.
        (vec![f32::from_bits(0x0100_0001), -f32::from_bits(0x0100_0000)], 2),
        (vec![f32::MAX, f32::MAX], f32::INFINITY.to_bits()),
        (vec![f32::MAX, f32::MAX, -f32::MAX], f32::MAX.to_bits()),
        // f32 additions in this order give 0.
        (vec![1e8, 1.0, -1e8], 1f32.to_bits()),
        // 1 + 2^-24 is a tie between 1 and 1 + 2^-23: even is 1.
        (vec![1.0, p2(-24)], 1f32.to_bits()),
        // 1 + 3 * 2^-24 is a tie: even is 1 + 2^-22.
        (vec![1.0, p2(-24), p2(-23)], (1.0 + p2(-22)).to_bits()),
        (vec![1.0, p2(-24), p2(-100)], (1.0 + p2(-23)).to_bits()),
        (vec![f32::from_bits(0xffc0_0001), 1.0], 0x7fc0_0000),
        (vec![f32::INFINITY, f32::NEG_INFINITY], 0x7fc0_0000),
        (vec![f32::INFINITY, -f32::MAX, -f32::MAX], f32::INFINITY.to_bits()),
        (vec![3.0], 3f32.to_bits()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand-checked segments side by side, so that a segment's
    /// neighbours cannot leak into it.
    #[test]
    fn hand_checked_segments_give_their_exact_rounded_sums() {
        let segments = hand_checked_segments();
        let mut values = Vec::new();
        let mut offsets = vec![0];
        for (segment, _) in &segments {
            values.extend_from_slice(segment);
            offsets.push(values.len());
        }
        let got = segmented_correctly_rounded_sum_f32(&values, &offsets).expect("valid offsets");
        assert_eq!(got.len(), segments.len());
        for (s, ((segment, bits), value)) in segments.iter().zip(&got).enumerate() {
            assert_eq!(value.to_bits(), *bits, "segment {s} {segment:?}: {value:e}");
        }
    }

    #[test]
    fn offsets_may_start_late_and_leave_elements_out() {
        let x = [f32::NAN, 1.0, 2.0, f32::NAN];
        let got = segmented_correctly_rounded_sum_f32(&x, &[1, 2, 3, 3]).expect("valid offsets");
        assert_eq!(got, vec![1.0, 2.0, 0.0]);
        assert_eq!(segmented_correctly_rounded_sum_f32(&x, &[2]).expect("valid offsets"), Vec::<f32>::new());
    }

    #[test]
    fn bad_offsets_are_errors() {
        let x = [1.0f32; 8];
        let e = segmented_correctly_rounded_sum_f32(&x, &[0, 5, 4, 8]).unwrap_err();
        assert_eq!(e, ModelError::BadOffsets { detail: "offsets[2] = 4 decreases from offsets[1] = 5".into() });
        assert!(matches!(segmented_correctly_rounded_sum_f32(&x, &[0, 9]), Err(ModelError::BadOffsets { .. })));
        assert!(matches!(segmented_correctly_rounded_sum_f32(&x, &[]), Err(ModelError::BadOffsets { .. })));
    }

    #[test]
    fn bf16_segments_widen_exactly() {
        let x = [bf16::from_f32(1.0), bf16::from_f32(0.0078125), bf16::from_f32(-3.0), bf16::NAN];
        let got = segmented_correctly_rounded_sum_bf16(&x, &[0, 2, 3, 4]).expect("valid offsets");
        assert_eq!(got[..2], [1.0078125, -3.0]);
        assert_eq!(got[2].to_bits(), 0x7fc0_0000);
    }
}
