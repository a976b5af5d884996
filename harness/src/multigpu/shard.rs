//! How an array of n int32 is split over k GPUs: contiguous shards in rank
//! order, sizes differing by at most one, and the limits a shard must obey
//! (the single-GPU kernels' longest input, and the int64 range of every
//! prefix of the whole array).

use std::ops::Range;
use thiserror::Error;

/// The longest shard one GPU accepts: the single-GPU kernels' `max_len` of
/// the variants the sharded path runs (SinglePass reduce, DecoupledLookback
/// scan). Both have 64-bit sizes: 2^40 - 512 (the reduce's grid
/// limit; the look-back's is larger), far past any GPU's memory, which is the
/// real limit of a shard.
pub fn max_shard_len() -> usize {
    kernels::ReduceVariant::SinglePass.max_len().min(kernels::ScanVariant::DecoupledLookback.max_len())
}

/// Rank `rank`'s part of the array: `[start, start + len)`; `len` may be 0
/// when n < k.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// The rank (and GPU ordinal) that owns it.
    pub rank: usize,
    /// First global index.
    pub start: usize,
    /// Number of elements.
    pub len: usize,
}

impl Shard {
    /// The global index range.
    pub fn range(&self) -> Range<usize> {
        self.start..self.start + self.len
    }

    /// Whether it holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The range of the input values: what bounds every partial sum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValueRange {
    /// Smallest possible value.
    pub min: i32,
    /// Largest possible value.
    pub max: i32,
}

impl ValueRange {
    /// Any int32 (`i32::MIN..=i32::MAX`).
    pub const ANY_I32: ValueRange = ValueRange { min: i32::MIN, max: i32::MAX };

    /// The range actually present in `data` (ANY_I32's bound for an empty slice).
    pub fn of(data: &[i32]) -> ValueRange {
        match (data.iter().min(), data.iter().max()) {
            (Some(&min), Some(&max)) => ValueRange { min, max },
            _ => ValueRange::ANY_I32,
        }
    }

    /// The most elements whose every prefix sum stays inside int64 whatever
    /// the values in this range: `n * max <= i64::MAX` and `n * min >=
    /// i64::MIN`. `2^32` for any int32.
    pub fn max_total_len(&self) -> u64 {
        let by_max = if self.max > 0 { (i64::MAX as u128) / self.max as u128 } else { u128::MAX };
        let by_min = if self.min < 0 { (1u128 << 63) / (self.min as i64).unsigned_abs() as u128 } else { u128::MAX };
        by_max.min(by_min).min(u64::MAX as u128) as u64
    }
}

/// Why n elements cannot be sharded over k GPUs.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ShardError {
    /// No GPU.
    #[error("a sharded run needs at least one GPU (k = 0)")]
    NoGpu,
    /// A shard longer than one GPU's kernels accept.
    #[error(
        "n = {n} over {k} GPU(s) gives shards of up to {shard_len} elements, more than the single-GPU kernels \
         accept ({max_len} per GPU, their grid limit): use at least {min_gpus} GPUs or a smaller n"
    )]
    ShardTooLong {
        /// Elements in all.
        n: u64,
        /// GPUs.
        k: usize,
        /// The longest shard.
        shard_len: u64,
        /// The per-GPU maximum.
        max_len: u64,
        /// The fewest GPUs that would do.
        min_gpus: u64,
    },
    /// The whole array's prefix sums could leave int64.
    #[error(
        "n = {n} values in [{min}, {max}] can sum past the int64 range (at most {limit} such elements keep every \
         prefix within [-2^63, 2^63 - 1]); split the array or bound its values"
    )]
    Int64Overflow {
        /// Elements in all.
        n: u64,
        /// The values' declared minimum.
        min: i32,
        /// The values' declared maximum.
        max: i32,
        /// The most elements the range allows.
        limit: u64,
    },
}

/// Splits `[0, n)` into `k` contiguous shards in rank order: shard r is
/// `[floor(n*r/k), floor(n*(r+1)/k))`, so sizes differ by at most one and
/// the shards cover every index exactly once. Checks that every shard fits
/// one GPU's kernels and that the values in `values` cannot overflow int64
/// over the whole array.
pub fn partition(n: u64, k: usize, values: ValueRange) -> Result<Vec<Shard>, ShardError> {
    if k == 0 {
        return Err(ShardError::NoGpu);
    }
    let limit = values.max_total_len();
    if n > limit {
        return Err(ShardError::Int64Overflow { n, min: values.min, max: values.max, limit });
    }
    let max_len = max_shard_len() as u64;
    let shard_len = n.div_ceil(k as u64);
    if shard_len > max_len {
        return Err(ShardError::ShardTooLong { n, k, shard_len, max_len, min_gpus: n.div_ceil(max_len) });
    }
    let bound = |r: usize| (n as u128 * r as u128 / k as u128) as usize;
    Ok((0..k).map(|rank| Shard { rank, start: bound(rank), len: bound(rank + 1) - bound(rank) }).collect())
}

/// The exclusive offset of every shard: `offsets[r] = totals[0] + ... +
/// totals[r-1]` (0 for rank 0), in checked int64. What the offset pass on
/// rank r adds to its local exclusive scan (it sums the all-gathered totals
/// the same way, left to right).
pub fn exclusive_offsets(totals: &[i64]) -> Option<Vec<i64>> {
    let mut running = 0i64;
    let mut offsets = Vec::with_capacity(totals.len());
    for &t in totals {
        offsets.push(running);
        running = running.checked_add(t)?;
    }
    Some(offsets)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covers_exactly_once(n: u64, k: usize) {
        let shards = partition(n, k, ValueRange::ANY_I32).unwrap();
        assert_eq!(shards.len(), k);
        let mut next = 0usize;
        for (r, s) in shards.iter().enumerate() {
            assert_eq!(s.rank, r);
            assert_eq!(s.start, next, "n={n} k={k}: shard {r} is not contiguous");
            next += s.len;
        }
        assert_eq!(next as u64, n, "n={n} k={k}: shards do not end at n");
        let (lo, hi) = (shards.iter().map(|s| s.len).min().unwrap(), shards.iter().map(|s| s.len).max().unwrap());
        assert!(hi - lo <= 1, "n={n} k={k}: uneven by {}", hi - lo);
    }

    #[test]
    fn shards_cover_every_index_once_for_uneven_n() {
        for k in 1..=9 {
            for n in (0..=40u64).chain([4095, 4096, 4097, 262_143, 262_145, (1 << 24) + 1]) {
                covers_exactly_once(n, k);
            }
            for m in [1u64, 4096, 262_144] {
                for n in [k as u64 * m - 1, k as u64 * m, k as u64 * m + 1] {
                    covers_exactly_once(n, k);
                }
            }
        }
        // Elementwise for small cases: every index owned by exactly one rank.
        for k in 1..=8 {
            for n in 0..=70u64 {
                let shards = partition(n, k, ValueRange::ANY_I32).unwrap();
                let mut owners = vec![0u8; n as usize];
                shards.iter().flat_map(|s| s.range()).for_each(|i| owners[i] += 1);
                assert!(owners.iter().all(|&c| c == 1), "n={n} k={k}");
            }
        }
    }

    #[test]
    fn fewer_elements_than_gpus_leaves_empty_shards() {
        let shards = partition(3, 8, ValueRange::ANY_I32).unwrap();
        assert_eq!(shards.iter().filter(|s| s.is_empty()).count(), 5);
        assert_eq!(shards.iter().map(|s| s.len).sum::<usize>(), 3);
    }

    #[test]
    fn big_sizes_split_evenly() {
        let weak = partition(8 << 30, 8, ValueRange { min: -9, max: 9 }).unwrap();
        assert!(weak.iter().all(|s| s.len == 1 << 30));
        let strong = partition(1 << 32, 4, ValueRange::ANY_I32).unwrap();
        assert!(strong.iter().all(|s| s.len == 1 << 30));
        assert_eq!(strong[3].start, 3 << 30);
    }

    #[test]
    fn a_shard_beyond_the_kernels_maximum_is_rejected() {
        // 64-bit sizes: one GPU's kernels take 2^32 and more (memory permitting).
        let max = (1u64 << 40) - 512;
        assert_eq!(max_shard_len() as u64, max);
        let small = ValueRange { min: -9, max: 9 };
        assert!(partition(1 << 32, 1, small).is_ok());
        assert!(partition((1 << 33) + 555, 1, small).is_ok());
        assert!(partition(max, 1, small).is_ok());
        let e = partition(1 << 40, 1, small).unwrap_err();
        assert_eq!(e, ShardError::ShardTooLong { n: 1 << 40, k: 1, shard_len: 1 << 40, max_len: max, min_gpus: 2 });
        let text = e.to_string();
        assert!(text.contains(&format!("({max} per GPU")) && text.contains("at least 2 GPUs"), "{text}");
        assert!(partition(1 << 40, 2, small).is_ok());
        let e = partition(9 << 40, 8, small).unwrap_err();
        assert!(matches!(e, ShardError::ShardTooLong { min_gpus: 10, .. }), "{e}");
        assert_eq!(partition(5, 0, small), Err(ShardError::NoGpu));
    }

    #[test]
    fn the_int64_bound_follows_the_value_range() {
        // Any int32: 2^32 elements (2^32 * -2^31 = -2^63 still fits).
        assert_eq!(ValueRange::ANY_I32.max_total_len(), 1 << 32);
        assert!(partition(1 << 32, 2, ValueRange::ANY_I32).is_ok());
        let e = partition((1 << 32) + 1, 2, ValueRange::ANY_I32).unwrap_err();
        assert!(matches!(e, ShardError::Int64Overflow { limit, .. } if limit == 1 << 32));
        assert!(e.to_string().contains("int64 range"), "{e}");
        // Small values: 8 GPUs x 2^30 is fine.
        assert_eq!(ValueRange { min: -9, max: 9 }.max_total_len(), i64::MAX as u64 / 9);
        assert_eq!(ValueRange { min: 0, max: 0 }.max_total_len(), u64::MAX);
        assert_eq!(ValueRange { min: i32::MIN, max: 0 }.max_total_len(), 1 << 32);
        assert_eq!(ValueRange { min: 0, max: i32::MAX }.max_total_len(), (i64::MAX as u64) / (i32::MAX as u64));
        // The bound is exact: the extreme sums at the limit fit, one more does not.
        let l = ValueRange::ANY_I32.max_total_len() as i128;
        assert!(l * i32::MIN as i128 >= i64::MIN as i128 && (l + 1) * (i32::MIN as i128) < i64::MIN as i128);
        assert_eq!(ValueRange::of(&[3, -7, 2]), ValueRange { min: -7, max: 3 });
    }

    /// The sharded scan's offset math, against the model: local exclusive
    /// scans of each shard, plus each shard's exclusive offset from the
    /// shard totals, are the model's exclusive scan of the whole array; the
    /// sum of the totals is the model's reduction.
    #[test]
    fn local_scans_plus_offsets_are_the_models_scan() {
        use model::generators::{ints, DataFamily};
        for family in [DataFamily::SmallInts, DataFamily::FullRangeI32, DataFamily::Sorted] {
            for k in 1..=8usize {
                for n in [1usize, 2, 7, 8, 9, 33, 4095, 4097, 3 * 4096 + 1] {
                    let x = ints(family, n, 0x5eed ^ (n as u64) ^ ((k as u64) << 20)).unwrap();
                    let shards = partition(n as u64, k, ValueRange::of(&x)).unwrap();
                    let totals: Vec<i64> =
                        shards.iter().map(|s| model::reduce::reduce_i64(&x[s.range()]).unwrap()).collect();
                    let offsets = exclusive_offsets(&totals).unwrap();
                    let mut stitched = Vec::with_capacity(n);
                    for (s, &offset) in shards.iter().zip(&offsets) {
                        let local = model::scan::exclusive_scan_i64(&x[s.range()]).unwrap();
                        stitched.extend(local.iter().map(|&v| v + offset));
                    }
                    assert_eq!(stitched, model::scan::exclusive_scan_i64(&x).unwrap(), "{family:?} n={n} k={k}");
                    let sum: i64 = totals.iter().sum();
                    assert_eq!(sum, model::reduce::reduce_i64(&x).unwrap(), "{family:?} n={n} k={k}");
                }
            }
        }
        assert_eq!(exclusive_offsets(&[5, -2, 7]), Some(vec![0, 5, 3]));
        assert_eq!(exclusive_offsets(&[i64::MAX, 1, 0]), None);
        assert_eq!(exclusive_offsets(&[]), Some(vec![]));
    }
}
