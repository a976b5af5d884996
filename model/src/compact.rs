//! Stream compaction: flags → exclusive scan of the flags → scatter to the scanned position.
//! Stable (kept items keep their order); rejected items
//! write nothing.

use crate::ModelError;

/// Everything a compaction produces, for checking each GPU stage separately.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompactResult<T> {
    /// Keep flag per input, 0 or 1.
    pub flags: Vec<u8>,
    /// Exclusive scan of `flags`: the destination of every input (a rejected item's
    /// destination is shared with the next kept item and must not be written).
    pub destinations: Vec<usize>,
    /// Kept items in input order (stable).
    pub output: Vec<T>,
    /// Number of kept items (= Σ flags = `output.len()`).
    pub count: usize,
}

/// Compacts by a flag array: `flags[i]` must be 0 or 1. Errors: `BadShape` when lengths
/// differ or a flag is neither 0 nor 1 (its index is named).
pub fn compact_flags<T: Clone>(items: &[T], flags: &[u8]) -> Result<CompactResult<T>, ModelError> {
    if items.len() != flags.len() {
        return Err(ModelError::BadShape {
            primitive: "compact",
            detail: format!("{} items but {} flags", items.len(), flags.len()),
        });
    }
    if let Some(i) = flags.iter().position(|&f| f > 1) {
        return Err(ModelError::BadShape {
            primitive: "compact",
            detail: format!("flag {} at index {i} is not 0 or 1", flags[i]),
        });
    }
    let mut destinations = Vec::with_capacity(items.len());
    let mut count = 0usize;
    for &f in flags {
        destinations.push(count);
        count += usize::from(f);
    }
    let mut output = Vec::with_capacity(count);
    for (item, &f) in items.iter().zip(flags) {
        if f == 1 {
            output.push(item.clone());
        }
    }
    Ok(CompactResult { flags: flags.to_vec(), destinations, output, count })
}

/// Compacts by a predicate (`keep(x)` true → flag 1). Infallible.
/// Seed: keeping `x > 0` of `[3,-1,4,1,5,-9,2,6]` gives flags `[1,0,1,1,1,0,1,1]`,
/// destinations `[0,1,1,2,3,4,4,5]`, output `[3,4,1,5,2,6]`, count 6.
pub fn compact<T: Clone>(items: &[T], keep: impl Fn(&T) -> bool) -> CompactResult<T> {
    let flags: Vec<u8> = items.iter().map(|x| u8::from(keep(x))).collect();
    let mut destinations = Vec::with_capacity(items.len());
    let mut count = 0usize;
    let mut output = Vec::new();
    for (item, &f) in items.iter().zip(&flags) {
        destinations.push(count);
        if f == 1 {
            output.push(item.clone());
            count += 1;
        }
    }
    CompactResult { flags, destinations, output, count }
}

/// Keeps the positive integers (`x > 0`), compaction's default predicate.
pub fn compact_positive(items: &[i32]) -> CompactResult<i32> {
    compact(items, |&x| x > 0)
}

/// The scatter stage against a caller's (poisoned) output buffer: writes kept item `i` to
/// `out[destinations[i]]` and nothing else; returns the count. `out[count..]` is left
/// untouched. Errors: `BadShape` when `flags` is invalid (as [`compact_flags`]) or `out` is
/// shorter than the count.
pub fn scatter_into<T: Clone>(items: &[T], flags: &[u8], out: &mut [T]) -> Result<usize, ModelError> {
    let plan = compact_flags(items, flags)?;
    if out.len() < plan.count {
        return Err(ModelError::BadShape {
            primitive: "compact",
            detail: format!("output holds {} but {} items are kept", out.len(), plan.count),
        });
    }
    for ((item, &f), &d) in items.iter().zip(flags).zip(&plan.destinations) {
        if f == 1 {
            out[d] = item.clone();
        }
    }
    Ok(plan.count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn seed_compaction() {
        let r = compact_positive(&[3, -1, 4, 1, 5, -9, 2, 6]);
        assert_eq!(r.flags, vec![1, 0, 1, 1, 1, 0, 1, 1]);
        assert_eq!(r.destinations, vec![0, 1, 1, 2, 3, 4, 4, 5]);
        assert_eq!(r.output, vec![3, 4, 1, 5, 2, 6]);
        assert_eq!(r.count, 6);
    }

    #[test]
    fn bad_flags_rejected() {
        assert!(matches!(compact_flags(&[1, 2], &[1]), Err(ModelError::BadShape { .. })));
        assert!(matches!(compact_flags(&[1, 2], &[1, 2]), Err(ModelError::BadShape { .. })));
    }

    proptest! {
        #[test]
        fn count_is_kept_flags_and_rejected_write_nothing(items in prop::collection::vec(-5i32..5, 0..300)) {
            let r = compact_positive(&items);
            prop_assert_eq!(r.count, r.flags.iter().map(|&f| usize::from(f)).sum::<usize>());
            prop_assert_eq!(r.count, r.output.len());
            let by_flags = compact_flags(&items, &r.flags)?;
            prop_assert_eq!(&by_flags, &r);
            let poison = i32::MIN;
            let mut out = vec![poison; items.len()];
            let count = scatter_into(&items, &r.flags, &mut out)?;
            prop_assert_eq!(&out[..count], &r.output[..]);
            prop_assert!(out[count..].iter().all(|&v| v == poison));
        }
    }
}
