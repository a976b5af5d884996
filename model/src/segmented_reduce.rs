//! Segmented reduction over half-open offsets `[o0, o1), [o1, o2), …`.

use crate::operator::{ArgMax, MaxI64, Operator, SumI64};
use crate::reduce::reduce;
use crate::scalar::Scalar;
use crate::ModelError;

/// Checks `k + 1` offsets describing `k` segments of an `n`-item input. The first offset may
/// be above 0 (items before it belong to no segment) and the last below `n` (items after it
/// belong to no segment); every offset must be `<= n` and the list non-decreasing; equal
/// neighbours are an empty segment. Errors (`BadOffsets`, naming the position): no offsets
/// at all; `offsets[i] > n`; `offsets[i] < offsets[i−1]`.
pub fn validate_offsets(offsets: &[usize], n: usize) -> Result<(), ModelError> {
    if offsets.is_empty() {
        return Err(ModelError::BadOffsets { detail: "no offsets: k segments need k + 1 offsets".into() });
    }
    for (i, &o) in offsets.iter().enumerate() {
        if o > n {
            return Err(ModelError::BadOffsets { detail: format!("offsets[{i}] = {o} passes n = {n}") });
        }
        if i > 0 && o < offsets[i - 1] {
            return Err(ModelError::BadOffsets {
                detail: format!("offsets[{i}] = {o} decreases from offsets[{}] = {}", i - 1, offsets[i - 1]),
            });
        }
    }
    Ok(())
}

/// What a [`SegmentWalk`] reports, in input order.
#[derive(Debug, PartialEq, Eq)]
pub enum SegmentEvent<'a, T> {
    /// Items of segment `.0` (consecutive, in order; a segment may get several).
    Items(usize, &'a [T]),
    /// Segment `.0` is complete (every segment ends once, in order, empty ones included).
    End(usize),
}

/// Walks the pieces of one input, in order, against half-open offsets,
/// reporting each segment's items and its end ([`SegmentEvent`]). Items
/// before the first offset or after the last belong to no segment. This is
/// how a segmented answer is made a piece at a time, holding one segment's
/// state at once.
pub struct SegmentWalk {
    offsets: Vec<usize>,
    segment: usize,
    at: usize,
}

impl SegmentWalk {
    /// A walk over an input of `n` items. Errors: [`validate_offsets`]'s.
    pub fn new(offsets: &[usize], n: usize) -> Result<SegmentWalk, ModelError> {
        validate_offsets(offsets, n)?;
        Ok(SegmentWalk { offsets: offsets.to_vec(), segment: 0, at: 0 })
    }

    fn segments(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Takes the next piece.
    pub fn piece<T>(&mut self, items: &[T], mut event: impl FnMut(SegmentEvent<'_, T>)) {
        let (start, stop) = (self.at, self.at + items.len());
        while self.segment < self.segments() {
            let (from, to) = (self.offsets[self.segment].max(start), self.offsets[self.segment + 1].min(stop));
            if from < to {
                event(SegmentEvent::Items(self.segment, &items[from - start..to - start]));
            }
            if self.offsets[self.segment + 1] > stop {
                break;
            }
            event(SegmentEvent::End(self.segment));
            self.segment += 1;
        }
        self.at = stop;
    }

    /// Ends the segments no piece reached (those ending at the input's end when it is empty).
    pub fn finish<T>(&mut self, mut event: impl FnMut(SegmentEvent<'_, T>)) {
        while self.segment < self.segments() {
            event(SegmentEvent::End(self.segment));
            self.segment += 1;
        }
    }
}

/// One value per segment: [`reduce`] of `items[offsets[s]..offsets[s+1]]`; an empty segment
/// yields the identity. Errors: [`validate_offsets`]'s, then combine errors relocated to
/// `segmented_reduce` with the segment.
pub fn segmented_reduce<Op: Operator>(
    op: &Op,
    items: &[Op::Value],
    offsets: &[usize],
) -> Result<Vec<Op::Value>, ModelError> {
    validate_offsets(offsets, items.len())?;
    offsets
        .windows(2)
        .enumerate()
        .map(|(s, w)| reduce(op, &items[w[0]..w[1]]).map_err(|e| e.at("segmented_reduce", format!("segment {s}"))))
        .collect()
}

/// Per-segment checked int64 sums of `i32`/`i64` inputs; empty segment → 0.
/// Seed: offsets `[0, 4, 4, 8]` over `[3,-1,4,1,5,-9,2,6]` → `[7, 0, 4]`.
pub fn segmented_sum<T: Copy + Into<i64>>(items: &[T], offsets: &[usize]) -> Result<Vec<i64>, ModelError> {
    let wide: Vec<i64> = items.iter().map(|&x| x.into()).collect();
    segmented_reduce(&SumI64, &wide, offsets)
}

/// Per-segment maxima of `i32`/`i64` inputs; empty segment → `i64::MIN` (the identity).
pub fn segmented_max<T: Copy + Into<i64>>(items: &[T], offsets: &[usize]) -> Result<Vec<i64>, ModelError> {
    let wide: Vec<i64> = items.iter().map(|&x| x.into()).collect();
    segmented_reduce(&MaxI64, &wide, offsets)
}

/// Per-segment arg max as `(value, index)` with the **global** input index (not relative to
/// the segment); ties → lowest index; empty segment → the identity
/// `(T::LOWEST, u64::MAX)`. Errors: [`validate_offsets`]'s; any NaN/±inf inside a segment →
/// `NonFinite { primitive: "segmented_argmax", index }` (first offending index; items outside
/// every segment are not inspected).
pub fn segmented_argmax<T: Scalar>(items: &[T], offsets: &[usize]) -> Result<Vec<(T, u64)>, ModelError> {
    validate_offsets(offsets, items.len())?;
    let first = offsets[0];
    let last = offsets[offsets.len() - 1];
    if let Some(i) = items[first..last].iter().position(|v| !v.is_finite_value()) {
        return Err(ModelError::NonFinite {
            primitive: "segmented_argmax",
            index: first + i,
            value: items[first + i].to_f64(),
        });
    }
    let pairs: Vec<(T, u64)> = items.iter().enumerate().map(|(i, &v)| (v, i as u64)).collect();
    segmented_reduce(&ArgMax::<T>::new(), &pairs, offsets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_walk_in_pieces_gives_every_segment_its_items_once() {
        let x: Vec<i64> = (0..40).collect();
        for offsets in [vec![0, 0, 3, 3, 17, 40], vec![5, 5, 39], vec![0, 40], vec![40, 40], vec![0]] {
            for piece in [1usize, 3, 16, 40] {
                let mut walk = SegmentWalk::new(&offsets, x.len()).unwrap();
                let mut sums = vec![0i64; offsets.len() - 1];
                let mut ended = Vec::new();
                let mut on = |event: SegmentEvent<'_, i64>| match event {
                    SegmentEvent::Items(s, items) => sums[s] += items.iter().sum::<i64>(),
                    SegmentEvent::End(s) => ended.push(s),
                };
                for chunk in x.chunks(piece) {
                    walk.piece(chunk, &mut on);
                }
                walk.finish(&mut on);
                assert_eq!(ended, (0..offsets.len() - 1).collect::<Vec<_>>(), "{offsets:?} piece {piece}");
                assert_eq!(sums, segmented_sum(&x, &offsets).unwrap(), "{offsets:?} piece {piece}");
            }
        }
        let mut empty = SegmentWalk::new(&[0, 0, 0], 0).unwrap();
        let mut ended = 0;
        empty.finish(|_: SegmentEvent<'_, i32>| ended += 1);
        assert_eq!(ended, 2);
        assert!(SegmentWalk::new(&[0, 5], 4).is_err());
    }
    use proptest::prelude::*;

    const X: [i32; 8] = [3, -1, 4, 1, 5, -9, 2, 6];

    #[test]
    fn seed_segment_sums() {
        assert_eq!(segmented_sum(&X, &[0, 4, 4, 8]), Ok(vec![7, 0, 4]));
        assert_eq!(segmented_max(&X, &[0, 4, 4, 8]), Ok(vec![4, i64::MIN, 6]));
        assert_eq!(segmented_argmax(&X, &[0, 4, 4, 8]), Ok(vec![(4, 2), (i32::MIN, u64::MAX), (6, 7)]));
    }

    #[test]
    fn bad_offsets_named() {
        let e = segmented_sum(&X, &[0, 5, 4, 8]).unwrap_err();
        assert_eq!(e, ModelError::BadOffsets { detail: "offsets[2] = 4 decreases from offsets[1] = 5".into() });
        let e = segmented_sum(&X, &[0, 9]).unwrap_err();
        assert_eq!(e, ModelError::BadOffsets { detail: "offsets[1] = 9 passes n = 8".into() });
        assert!(segmented_sum(&X, &[]).is_err());
        // A start above 0 and an end below n are allowed.
        assert_eq!(segmented_sum(&X, &[2, 3]), Ok(vec![4]));
        assert_eq!(segmented_sum(&X, &[5]), Ok(vec![]));
    }

    #[test]
    fn nonfinite_inside_segments_rejected() {
        let v = [f32::NAN, 1.0, f32::INFINITY, 2.0];
        assert!(matches!(segmented_argmax(&v, &[1, 2, 4]), Err(ModelError::NonFinite { index: 2, .. })));
        assert_eq!(segmented_argmax(&v, &[1, 2]), Ok(vec![(1.0, 1)]));
    }

    fn cuts() -> impl Strategy<Value = (Vec<i32>, Vec<usize>)> {
        prop::collection::vec(any::<i32>(), 0..200).prop_flat_map(|items| {
            let n = items.len();
            (Just(items), prop::collection::vec(0..=n, 0..12)).prop_map(move |(items, mut cuts)| {
                cuts.push(0);
                cuts.push(n);
                cuts.sort_unstable();
                (items, cuts)
            })
        })
    }

    proptest! {
        #[test]
        fn segment_sums_add_up_to_the_total((items, offsets) in cuts()) {
            let sums = segmented_sum(&items, &offsets)?;
            let total: i64 = items.iter().map(|&v| i64::from(v)).sum();
            prop_assert_eq!(sums.iter().sum::<i64>(), total);
            prop_assert_eq!(sums.len(), offsets.len() - 1);
        }
    }
}
