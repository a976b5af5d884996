//! Recursive multi-pass device scan: Blelloch block scans of `width` items, block totals
//! scanned recursively, block offsets added back.

use super::blelloch::block_scan;
use super::level_sizes::level_sizes;
use crate::operator::Operator;
use crate::ModelError;

/// Block width of the GPU scan kernels.
pub const GPU_SCAN_WIDTH: usize = 512;

/// The recursion of a device scan of `n` items with blocks of `width`: `level_sizes[0] = n`,
/// `level_sizes[i+1] = ceil(level_sizes[i] / width)`, stopping at the first level that fits
/// one block. Every level but the last is "block scans + totals"; the last is one block scan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceScanPlan {
    /// Items scanned.
    pub n: usize,
    /// Items per block (a power of two ≥ 2).
    pub width: usize,
    /// Input size of each level, first to last.
    pub level_sizes: Vec<usize>,
}

impl DeviceScanPlan {
    /// Plans a scan of `n` items; `width` must be a power of two ≥ 2 (`InvalidWidth`).
    pub fn new(n: usize, width: usize) -> Result<DeviceScanPlan, ModelError> {
        if width < 2 || !width.is_power_of_two() {
            return Err(ModelError::InvalidWidth {
                primitive: "device_scan",
                width,
                detail: "blocks must hold a power of two >= 2 items".into(),
            });
        }
        Ok(DeviceScanPlan { n, width, level_sizes: level_sizes(n, width) })
    }

    /// Recursion levels: 1 for `n ≤ width`, 2 for `width < n ≤ width²`, 3 from `width² + 1`
    /// (262,145 at width 512), ….
    pub fn levels(&self) -> usize {
        self.level_sizes.len()
    }

    /// Blocks launched per level (`ceil(size / width)`, at least 1).
    pub fn blocks_per_level(&self) -> Vec<usize> {
        self.level_sizes.iter().map(|&s| s.div_ceil(self.width).max(1)).collect()
    }
}

/// Recursion levels of the GPU scan (width 512): 1 for `n ≤ 512`, 2 for `513..=262_144`,
/// 3 for `262_145..=134_217_728`, ….
pub fn levels(n: usize) -> usize {
    level_sizes(n, GPU_SCAN_WIDTH).len()
}

/// Exclusive scan of `items` by the recursive multi-pass scheme (scan blocks, scan their totals,
/// add the scanned totals back):
/// 1. split into blocks `[width·b, width·b + width)`; [`block_scan`] each (the last block is
///    padded with the identity), keeping `local` prefixes and block `total`s;
/// 2. `offsets = device_scan(totals, width)` (recursively; one block when it fits);
/// 3. `out[i] = offsets[b] ⊕ local[i]` for `i` in block `b` (offset on the left).
///
/// With `n ≤ width` it is a single `block_scan`. Seed: `device_scan(x, 4)` of
/// `[3,-1,4,1,5,-9,2,6]` is `[0,3,2,6,7,12,3,5]` (totals `[7,4]`, offsets `[0,7]`).
///
/// Errors: `InvalidWidth` (not a power of two ≥ 2); combine errors (int64 overflow) in the
/// order the three kernels perform them, relocated to `device_scan` with level and block.
pub fn device_scan<Op: Operator>(op: &Op, items: &[Op::Value], width: usize) -> Result<Vec<Op::Value>, ModelError> {
    DeviceScanPlan::new(items.len(), width)?;
    scan_level(op, items, width, 0)
}

fn scan_level<Op: Operator>(
    op: &Op,
    items: &[Op::Value],
    width: usize,
    level: usize,
) -> Result<Vec<Op::Value>, ModelError> {
    if items.len() <= width {
        return block_scan(op, items, width, None)
            .map(|(local, _)| local)
            .map_err(|e| e.at("device_scan", format!("level {level}, block 0")));
    }
    let mut locals = Vec::with_capacity(items.len());
    let mut totals = Vec::with_capacity(items.len().div_ceil(width));
    for (block, chunk) in items.chunks(width).enumerate() {
        let (local, total) = block_scan(op, chunk, width, None)
            .map_err(|e| e.at("device_scan", format!("level {level}, block {block}")))?;
        locals.push(local);
        totals.push(total);
    }
    let offsets = scan_level(op, &totals, width, level + 1)?;
    let mut out = Vec::with_capacity(items.len());
    for (block, (local, offset)) in locals.iter().zip(&offsets).enumerate() {
        for (i, prefix) in local.iter().enumerate() {
            out.push(op.combine(offset, prefix).map_err(|e| {
                e.at("device_scan", format!("level {level}, offset add, block {block}, index {}", block * width + i))
            })?);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::{Affine, AffineMap, SumI64};
    use crate::scan::exclusive_scan;
    use proptest::prelude::*;

    #[test]
    fn seed_device_scan_width_four() {
        let x = [3i64, -1, 4, 1, 5, -9, 2, 6];
        assert_eq!(device_scan(&SumI64, &x, 4).unwrap(), vec![0, 3, 2, 6, 7, 12, 3, 5]);
    }

    #[test]
    fn recursion_levels() {
        for (n, want) in [(0, 1), (512, 1), (513, 2), (262_144, 2), (262_145, 3)] {
            assert_eq!(levels(n), want, "levels of {n} items");
        }
        let plan = DeviceScanPlan::new(262_145, 512).unwrap();
        assert_eq!(plan.level_sizes, vec![262_145, 513, 2]);
        assert_eq!(plan.blocks_per_level(), vec![513, 2, 1]);
        assert_eq!(DeviceScanPlan::new(262_144, 512).unwrap().levels(), 2);
        assert!(DeviceScanPlan::new(8, 3).is_err());
        assert!(DeviceScanPlan::new(8, 1).is_err());
    }

    #[test]
    fn boundary_sizes_equal_direct() {
        for n in [262_144usize, 262_145] {
            let x: Vec<i64> = (0..n as i64).map(|i| (i * 7919) % 19 - 9).collect();
            assert_eq!(device_scan(&SumI64, &x, 512).unwrap(), exclusive_scan(&SumI64, &x).unwrap(), "n = {n}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        #[test]
        fn device_scan_equals_direct(values in prop::collection::vec(any::<i32>(), 0..2000), width_log in 1u32..10) {
            let wide: Vec<i64> = values.iter().map(|&v| i64::from(v)).collect();
            prop_assert_eq!(device_scan(&SumI64, &wide, 1 << width_log)?, exclusive_scan(&SumI64, &wide)?);
        }

        #[test]
        fn device_scan_around_the_third_level(extra in 0usize..12, seed in any::<u64>()) {
            let n = 262_139 + extra;
            let mut rng = crate::generators::Rng::new(seed);
            let wide: Vec<i64> = (0..n).map(|_| rng.range_i64(-9, 9)).collect();
            prop_assert_eq!(device_scan(&SumI64, &wide, 512)?, exclusive_scan(&SumI64, &wide)?);
        }

        #[test]
        fn device_scan_keeps_order(raw in prop::collection::vec((any::<u64>(), any::<u64>()), 0..700), width_log in 1u32..6) {
            let maps: Vec<AffineMap> = raw.iter().map(|&(a, b)| AffineMap { a, b }).collect();
            prop_assert_eq!(device_scan(&Affine, &maps, 1 << width_log)?, exclusive_scan(&Affine, &maps)?);
        }
    }
}
