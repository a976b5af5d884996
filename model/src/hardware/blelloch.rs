//! Blelloch work-efficient exclusive block scan (up-sweep, root = identity, down-sweep), with
//! an optional trace of every step.

use crate::operator::Operator;
use crate::ModelError;

/// One recorded step of the scan: its label and the whole `width`-slot array after it.
/// Labels: `"up d"` for the up-sweep at stride `d` (1, 2, 4, …), `"root = 0"` after the root
/// is replaced by the identity (written `0` whatever the operator), `"down d"` for the
/// down-sweep at stride `d` (…, 4, 2, 1).
#[derive(Clone, Debug, PartialEq)]
pub struct BlellochStep<V = i64> {
    /// Step label, e.g. `"up 1"`, `"root = 0"`, `"down 2"`.
    pub label: String,
    /// The array after the step (padding slots included).
    pub values: Vec<V>,
}

/// The steps of one scan, in execution order.
pub type BlellochTrace<V = i64> = Vec<BlellochStep<V>>;

/// Combines the Blelloch scan performs on a block of `width` slots: `width − 1` in the
/// up-sweep and `width − 1` in the down-sweep, `2·width − 2` (62 at 32, 1022 at 512).
/// A non-power-of-two `n` is scanned at the next power of two.
pub fn blelloch_additions(n: usize) -> u64 {
    let width = n.max(1).next_power_of_two() as u64;
    2 * width - 2
}

fn check_width(primitive: &'static str, width: usize) -> Result<(), ModelError> {
    if width == 0 || !width.is_power_of_two() {
        return Err(ModelError::InvalidWidth {
            primitive,
            width,
            detail: "the Blelloch tree needs a power-of-two width".into(),
        });
    }
    Ok(())
}

/// Exclusive scan of one block of `width` slots (a power of two); `items.len() <= width`, the
/// remaining slots hold the identity. Returns `(local, total)`: `local[i]` =
/// `items[0] ⊕ … ⊕ items[i−1]` (identity at 0), one per item, and `total` = the root after the
/// up-sweep (the reduction of all items).
///
/// The tree, exactly (slots `a[0..width]`):
/// * up-sweep, `d = 1, 2, 4, …, width/2`: for `k = 0, 2d, 4d, …`:
///   `a[k+2d−1] = a[k+d−1] ⊕ a[k+2d−1]`;
/// * `total = a[width−1]`; `a[width−1] = identity`;
/// * down-sweep, `d = width/2, …, 2, 1`: for each `k`: `t = a[k+d−1]`;
///   `a[k+d−1] = a[k+2d−1]`; `a[k+2d−1] = a[k+2d−1] ⊕ t` (parent prefix on the left, so
///   non-commutative operators keep order).
///
/// When `trace` is given, one [`BlellochStep`] is pushed per stride and one for the root
/// (seed: `[3, -1, 4, 1]` at width 4 → `up 1 [3,2,4,5]`, `up 2 [3,2,4,7]`,
/// `root = 0 [3,2,4,0]`, `down 2 [3,0,4,2]`, `down 1 [0,3,2,6]`).
///
/// Errors: `InvalidWidth` (not a power of two, or 0); `TooLarge` (more items than slots); a
/// combine error, relocated to `block_scan` with its step and slot (the seed's
/// `[I64_MAX, 1, -1, 0]` fails at `up 1` although the total fits).
pub fn block_scan<Op: Operator>(
    op: &Op,
    items: &[Op::Value],
    width: usize,
    mut trace: Option<&mut BlellochTrace<Op::Value>>,
) -> Result<(Vec<Op::Value>, Op::Value), ModelError> {
    check_width("block_scan", width)?;
    if items.len() > width {
        return Err(ModelError::TooLarge { primitive: "block_scan", len: items.len(), limit: width });
    }
    let mut a: Vec<Op::Value> = items.to_vec();
    a.resize(width, op.identity());
    let mut record = |label: String, a: &[Op::Value]| {
        if let Some(t) = trace.as_deref_mut() {
            t.push(BlellochStep { label, values: a.to_vec() });
        }
    };
    let mut d = 1;
    while d < width {
        for k in (0..width).step_by(2 * d) {
            let right = k + 2 * d - 1;
            a[right] = op
                .combine(&a[k + d - 1], &a[right])
                .map_err(|e| e.at("block_scan", format!("up {d}, slot {right}")))?;
        }
        record(format!("up {d}"), &a);
        d *= 2;
    }
    let total = std::mem::replace(&mut a[width - 1], op.identity());
    record("root = 0".to_string(), &a);
    let mut d = width / 2;
    while d >= 1 {
        for k in (0..width).step_by(2 * d) {
            let (left, right) = (k + d - 1, k + 2 * d - 1);
            let parent = a[right].clone();
            let left_total = std::mem::replace(&mut a[left], parent);
            a[right] = op
                .combine(&a[right], &left_total)
                .map_err(|e| e.at("block_scan", format!("down {d}, slot {right}")))?;
        }
        record(format!("down {d}"), &a);
        d /= 2;
    }
    a.truncate(items.len());
    Ok((a, total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::{Affine, AffineMap, SumI64};
    use crate::scan::exclusive_scan;
    use proptest::prelude::*;

    #[test]
    fn seed_trace_exactly() {
        let mut trace = BlellochTrace::new();
        let (local, total) = block_scan(&SumI64, &[3, -1, 4, 1], 4, Some(&mut trace)).unwrap();
        assert_eq!(local, vec![0, 3, 2, 6]);
        assert_eq!(total, 7);
        let expected: Vec<(&str, Vec<i64>)> = vec![
            ("up 1", vec![3, 2, 4, 5]),
            ("up 2", vec![3, 2, 4, 7]),
            ("root = 0", vec![3, 2, 4, 0]),
            ("down 2", vec![3, 0, 4, 2]),
            ("down 1", vec![0, 3, 2, 6]),
        ];
        let got: Vec<(&str, Vec<i64>)> = trace.iter().map(|s| (s.label.as_str(), s.values.clone())).collect();
        assert_eq!(got, expected);
        // The seed prints labels padded to 8 columns.
        assert_eq!(format!("{:8}: {:?}", trace[2].label, trace[2].values), "root = 0: [3, 2, 4, 0]");
    }

    #[test]
    fn seed_second_block() {
        assert_eq!(block_scan(&SumI64, &[5, -9, 2, 6], 4, None).unwrap(), (vec![0, 5, -4, -2], 4));
    }

    #[test]
    fn seed_overflowing_first_pair_rejected() {
        let values = [i64::MAX, 1, -1, 0];
        assert_eq!(values.iter().map(|&v| i128::from(v)).sum::<i128>(), i128::from(i64::MAX));
        let e = block_scan(&SumI64, &values, 4, None).unwrap_err();
        assert!(
            matches!(&e, ModelError::Overflow { primitive: "block_scan", detail } if detail.starts_with("up 1, slot 1")),
            "{e}"
        );
        assert!(e.to_string().contains("Signed 64-bit intermediate overflow"));
    }

    #[test]
    fn widths_and_sizes_checked() {
        assert!(matches!(block_scan(&SumI64, &[1], 3, None), Err(ModelError::InvalidWidth { width: 3, .. })));
        assert!(matches!(block_scan(&SumI64, &[1], 0, None), Err(ModelError::InvalidWidth { .. })));
        assert!(matches!(block_scan(&SumI64, &[1, 2, 3], 2, None), Err(ModelError::TooLarge { len: 3, limit: 2, .. })));
        assert_eq!(block_scan(&SumI64, &[9], 1, None).unwrap(), (vec![0], 9));
        assert_eq!(block_scan(&SumI64, &[], 4, None).unwrap(), (vec![], 0));
    }

    #[test]
    fn additions_counted() {
        assert_eq!(blelloch_additions(32), 62);
        assert_eq!(blelloch_additions(512), 1022);
        assert_eq!(blelloch_additions(1), 0);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn blelloch_equals_direct(values in prop::collection::vec(any::<i32>(), 0..=512), extra in 0u32..3) {
            let wide: Vec<i64> = values.iter().map(|&v| i64::from(v)).collect();
            let width = wide.len().max(1).next_power_of_two() << extra;
            let (local, total) = block_scan(&SumI64, &wide, width, None)?;
            prop_assert_eq!(local, exclusive_scan(&SumI64, &wide)?);
            prop_assert_eq!(total, wide.iter().sum::<i64>());
        }

        #[test]
        fn blelloch_keeps_order_for_affine(raw in prop::collection::vec((any::<u64>(), any::<u64>()), 0..=512)) {
            let maps: Vec<AffineMap> = raw.iter().map(|&(a, b)| AffineMap { a, b }).collect();
            let (local, total) = block_scan(&Affine, &maps, 512, None)?;
            prop_assert_eq!(local, exclusive_scan(&Affine, &maps)?);
            prop_assert_eq!(total, crate::reduce::reduce(&Affine, &maps)?);
        }
    }
}
