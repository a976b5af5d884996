//! One warp: 32 lanes, `__shfl_down_sync` tree with offsets 16, 8, 4, 2, 1, and an explicit
//! participation set (the lanes that have not exited).

use crate::operator::{Operator, SumI64};
use crate::ModelError;

/// Lanes per warp.
pub const WARP_SIZE: usize = 32;

/// The shuffle offsets of the warp reduction tree (shfl_down by 16, 8, 4, 2, 1),
/// in execution order.
pub const SHUFFLE_OFFSETS: [usize; 5] = [16, 8, 4, 2, 1];

/// The order of the shfl_down offsets in a warp tree. Both trees do
/// `v[l] = v[l] ⊕ v[l + offset]` for every participating lane with `l + offset < 32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShuffleOrder {
    /// 16, 8, 4, 2, 1 (the usual `__shfl_down_sync` `warp_sum`): lane 0 combines lanes in the order
    /// [`lane_position`] (0, 16, 8, 24, …); order-preserving only with bit-reversed placement.
    Descending,
    /// 1, 2, 4, 8, 16 (`kernels/cuda/common/warp_reduce.cuh`): after the step with offset `o`
    /// lane `l` holds the contiguous range `[l, l + 2o)`, so lane 0 combines lanes 0, 1, 2, …
    /// in natural order.
    Ascending,
}

impl ShuffleOrder {
    /// The offsets in execution order.
    pub fn offsets(self) -> [usize; 5] {
        match self {
            ShuffleOrder::Descending => SHUFFLE_OFFSETS,
            ShuffleOrder::Ascending => [1, 2, 4, 8, 16],
        }
    }

    /// `"descending"` or `"ascending"`.
    pub fn name(self) -> &'static str {
        match self {
            ShuffleOrder::Descending => "descending",
            ShuffleOrder::Ascending => "ascending",
        }
    }
}

/// The set of participating (non-exited) lanes, as a 32-bit mask (bit `l` = lane `l`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Participation(u32);

impl Participation {
    /// All 32 lanes participate (the only set the project's kernels use: tail lanes carry the
    /// identity instead of exiting).
    pub const ALL: Participation = Participation(u32::MAX);

    /// Lanes `0..n`; `n > 32` is `InvalidWidth`.
    pub fn first(n: usize) -> Result<Participation, ModelError> {
        match n {
            0..=31 => Ok(Participation((1u32 << n) - 1)),
            32 => Ok(Participation::ALL),
            _ => Err(ModelError::InvalidWidth {
                primitive: "warp_reduce",
                width: n,
                detail: "a warp has 32 lanes".into(),
            }),
        }
    }

    /// The given lanes; a lane `>= 32` is `InvalidWidth`.
    pub fn from_lanes(lanes: impl IntoIterator<Item = usize>) -> Result<Participation, ModelError> {
        let mut mask = 0u32;
        for lane in lanes {
            if lane >= WARP_SIZE {
                return Err(ModelError::InvalidWidth {
                    primitive: "warp_reduce",
                    width: lane,
                    detail: "lane index must be below 32".into(),
                });
            }
            mask |= 1 << lane;
        }
        Ok(Participation(mask))
    }

    /// The set with exactly the bits of `mask`.
    pub const fn from_mask(mask: u32) -> Participation {
        Participation(mask)
    }

    /// The mask (bit `l` = lane `l`), as passed to `__shfl_down_sync`.
    pub const fn mask(self) -> u32 {
        self.0
    }

    /// Whether `lane` participates.
    pub fn contains(self, lane: usize) -> bool {
        lane < WARP_SIZE && self.0 & (1 << lane) != 0
    }
}

/// The position of `lane` in the left-to-right order of the shfl_down 16..1 tree:
/// the 5-bit reversal of `lane` (`__brev(lane) >> 27` in CUDA). The tree leaves lane 0 with
/// `v[pos⁻¹(0)] ⊕ v[pos⁻¹(1)] ⊕ … ⊕ v[pos⁻¹(31)]`, i.e. lanes 0, 16, 8, 24, 4, 20, … in that
/// order. A schedule that must keep input order puts its `p`-th range in lane
/// `lane_position(p)` (the reversal is its own inverse).
pub fn lane_position(lane: usize) -> usize {
    ((lane as u32 & 31).reverse_bits() >> 27) as usize
}

/// One lane's register: a value, or the error of the combine that produced it. A lane whose
/// combine overflowed holds garbage on the GPU; that only matters if the garbage reaches
/// lane 0, so errors travel with the value and surface only if lane 0 consumes them.
pub(crate) type LaneValue<V> = Result<V, ModelError>;

/// `a ⊕ b` on lane registers: an error already carried by an operand travels unchanged; a
/// combine that fails here is relocated to `primitive` at `location()`.
pub(crate) fn combine_lanes<Op: Operator, L: std::fmt::Display>(
    op: &Op,
    a: &LaneValue<Op::Value>,
    b: &LaneValue<Op::Value>,
    primitive: &'static str,
    location: impl FnOnce() -> L,
) -> LaneValue<Op::Value> {
    match (a, b) {
        (Ok(a), Ok(b)) => op.combine(a, b).map_err(|e| e.at(primitive, location())),
        (Err(e), _) | (_, Err(e)) => Err(e.clone()),
    }
}

/// The shuffle tree on lane registers. Outer `Err`: a structural error (absent source lane,
/// lane 0 absent). Inner value: lane 0's register (possibly carrying an overflow).
pub(crate) fn warp_tree<Op: Operator>(
    op: &Op,
    mut lanes: Vec<LaneValue<Op::Value>>,
    active: Participation,
    order: ShuffleOrder,
) -> Result<LaneValue<Op::Value>, ModelError> {
    for offset in order.offsets() {
        // Every participating lane executes the shuffle; all read the registers as they were
        // before this step.
        let before = lanes.clone();
        for lane in (0..WARP_SIZE).filter(|&l| active.contains(l)) {
            let source = lane + offset;
            if source >= WARP_SIZE {
                // Out-of-warp source: shfl_down returns the caller's value and the
                // `lane + offset < warpSize` guard discards it.
                continue;
            }
            if !active.contains(source) {
                return Err(ModelError::AbsentLane { lane, source_lane: source });
            }
            lanes[lane] = combine_lanes(op, &before[lane], &before[source], "warp_reduce", || {
                format!("offset {offset}, lane {lane} + lane {source}")
            });
        }
    }
    if !active.contains(0) {
        return Err(ModelError::NoResultLane { primitive: "warp_reduce" });
    }
    Ok(lanes.swap_remove(0))
}

/// Reduces the 32 lane registers `lanes` (index = lane) with the shfl_down tree, offsets
/// 16, 8, 4, 2, 1: at each offset every participating lane `l` with `l + offset < 32` sets
/// `v[l] = v[l] ⊕ v[l + offset]` (its own value on the left). Returns lane 0's value.
///
/// Contract (every lane of the warp runs every shuffle):
/// * lanes without data must still participate and carry the identity;
/// * a participating lane that reads a non-participating source is
///   `ModelError::AbsentLane { lane, source_lane }` (first such read in lane order, at the
///   first offset where it happens); lane 0 absent is `NoResultLane`;
/// * `lanes.len() != 32` is `InvalidWidth`;
/// * a combine error (int64 overflow) is reported only when it reaches lane 0; overflow in
///   a lane whose value the tree discards is garbage on the GPU and harmless here too.
///
/// Order: lane 0's result combines lanes in the order given by [`lane_position`]
/// (0, 16, 8, 24, …), not 0, 1, 2, …; for commutative operators this does not matter.
pub fn warp_reduce<Op: Operator>(op: &Op, lanes: &[Op::Value], active: Participation) -> Result<Op::Value, ModelError> {
    if lanes.len() != WARP_SIZE {
        return Err(ModelError::InvalidWidth {
            primitive: "warp_reduce",
            width: lanes.len(),
            detail: "a warp has exactly 32 lanes".into(),
        });
    }
    warp_reduce_ordered(op, lanes, active, ShuffleOrder::Descending)
}

/// [`warp_reduce`] with either offset order (see [`ShuffleOrder`]); same contract. With
/// `Ascending` the first absent read is found in lane order at offset 1 first (for the seed's
/// lanes 0..20: lane 19 reads lane 20).
pub fn warp_reduce_ordered<Op: Operator>(
    op: &Op,
    lanes: &[Op::Value],
    active: Participation,
    order: ShuffleOrder,
) -> Result<Op::Value, ModelError> {
    if lanes.len() != WARP_SIZE {
        return Err(ModelError::InvalidWidth {
            primitive: "warp_reduce",
            width: lanes.len(),
            detail: "a warp has exactly 32 lanes".into(),
        });
    }
    warp_tree(op, lanes.iter().cloned().map(Ok).collect(), active, order)?
}

/// [`warp_reduce`] with checked int64 addition ([`SumI64`]): the seed's `warp_sum`.
pub fn warp_sum(lanes: &[i64], active: Participation) -> Result<i64, ModelError> {
    warp_reduce(&SumI64, lanes, active)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::{Affine, AffineMap};
    use crate::reduce::reduce;
    use proptest::prelude::*;

    const I64_MAX: i64 = i64::MAX;

    #[test]
    fn seed_twenty_ones_and_twelve_zero_lanes() {
        let mut lanes = vec![1i64; 20];
        lanes.extend([0; 12]);
        assert_eq!(warp_sum(&lanes, Participation::ALL), Ok(20));
    }

    #[test]
    fn seed_absent_source_rejected() {
        let mut lanes = vec![1i64; 20];
        lanes.extend([0; 12]);
        let active = Participation::first(20).unwrap();
        assert_eq!(warp_sum(&lanes, active), Err(ModelError::AbsentLane { lane: 4, source_lane: 20 }));
    }

    #[test]
    fn seed_int64_extremes() {
        let mut lanes = vec![0i64; 31];
        lanes.push(I64_MAX);
        assert_eq!(warp_sum(&lanes, Participation::ALL), Ok(I64_MAX));
        let mut lanes = vec![I64_MAX, 1];
        lanes.extend([0; 30]);
        let e = warp_sum(&lanes, Participation::ALL).unwrap_err();
        assert!(matches!(e, ModelError::Overflow { primitive: "warp_reduce", .. }), "{e}");
    }

    #[test]
    fn discarded_lane_overflow_is_harmless() {
        // Lane 16 computes v16 + v24 = MAX + 1 at offset 8, but lane 16's value is discarded.
        let mut lanes = vec![0i64; 32];
        lanes[16] = I64_MAX;
        lanes[24] = 1;
        lanes[8] = -1;
        assert_eq!(warp_sum(&lanes, Participation::ALL), Ok(I64_MAX));
    }

    #[test]
    fn wrong_lane_count_and_missing_lane_zero() {
        assert!(matches!(warp_sum(&[1; 31], Participation::ALL), Err(ModelError::InvalidWidth { .. })));
        // Only lanes 16..32 participate: none reads an absent lane, but lane 0 is absent.
        let active = Participation::from_lanes(16..32).unwrap();
        assert_eq!(warp_sum(&[1; 32], active), Err(ModelError::NoResultLane { primitive: "warp_reduce" }));
        assert!(Participation::first(33).is_err());
        assert!(Participation::from_lanes([32]).is_err());
    }

    #[test]
    fn lane_position_is_bit_reversal() {
        for (lane, position) in [(0, 0), (1, 16), (16, 1), (8, 2), (31, 31)] {
            assert_eq!(lane_position(lane), position, "position of lane {lane}");
        }
        for l in 0..32 {
            assert_eq!(lane_position(lane_position(l)), l);
        }
    }

    #[test]
    fn natural_lane_order_reorders_a_non_commutative_operator() {
        // Why block_reduce's order-preserving layout bit-reverses lanes: with items in natural
        // lane order the tree computes v0 ⊕ v16 ⊕ v8 ⊕ …, not v0 ⊕ v1 ⊕ ….
        // (b chosen so the maps do not share a fixed point: maps with equal b/(a-1) commute.)
        let maps: Vec<AffineMap> = (0..32u64).map(|i| AffineMap { a: 2 * i + 3, b: i * i * i + 5 }).collect();
        let natural = warp_reduce(&Affine, &maps, Participation::ALL).unwrap();
        let direct = reduce(&Affine, &maps).unwrap();
        assert_ne!(natural, direct);
        let placed: Vec<AffineMap> = (0..32).map(|lane| maps[lane_position(lane)]).collect();
        assert_eq!(warp_reduce(&Affine, &placed, Participation::ALL).unwrap(), direct);
    }

    #[test]
    fn ascending_offsets_keep_natural_lane_order() {
        let maps: Vec<AffineMap> = (0..32u64).map(|i| AffineMap { a: 2 * i + 3, b: i * i * i + 5 }).collect();
        let got = warp_reduce_ordered(&Affine, &maps, Participation::ALL, ShuffleOrder::Ascending).unwrap();
        assert_eq!(got, reduce(&Affine, &maps).unwrap());
        let mut lanes = vec![1i64; 20];
        lanes.extend([0; 12]);
        let active = Participation::first(20).unwrap();
        assert_eq!(
            warp_reduce_ordered(&SumI64, &lanes, active, ShuffleOrder::Ascending),
            Err(ModelError::AbsentLane { lane: 19, source_lane: 20 })
        );
    }

    proptest! {
        #[test]
        fn warp_ascending_affine_equals_direct(raw in prop::collection::vec((any::<u64>(), any::<u64>()), 0..=32)) {
            let mut maps: Vec<AffineMap> = raw.iter().map(|&(a, b)| AffineMap { a, b }).collect();
            let direct = reduce(&Affine, &maps)?;
            maps.resize(32, AffineMap { a: 1, b: 0 });
            prop_assert_eq!(warp_reduce_ordered(&Affine, &maps, Participation::ALL, ShuffleOrder::Ascending)?, direct);
        }

        #[test]
        fn warp_equals_direct_definition(values in prop::collection::vec(-1_000_000i64..1_000_000, 0..=32)) {
            let mut lanes = values.clone();
            lanes.resize(32, 0);
            prop_assert_eq!(warp_sum(&lanes, Participation::ALL)?, values.iter().sum::<i64>());
        }

        #[test]
        fn warp_affine_with_bit_reversed_placement(raw in prop::collection::vec((any::<u64>(), any::<u64>()), 0..=32)) {
            let maps: Vec<AffineMap> = raw.iter().map(|&(a, b)| AffineMap { a, b }).collect();
            let lanes: Vec<AffineMap> = (0..32)
                .map(|lane| maps.get(lane_position(lane)).copied().unwrap_or(AffineMap { a: 1, b: 0 }))
                .collect();
            prop_assert_eq!(warp_reduce(&Affine, &lanes, Participation::ALL)?, reduce(&Affine, &maps)?);
        }

        #[test]
        fn partial_participation_errors_iff_a_read_is_absent(mask in any::<u32>()) {
            let active = Participation::from_mask(mask);
            let absent_read = SHUFFLE_OFFSETS.iter().any(|&o| {
                (0..32).any(|l| active.contains(l) && l + o < 32 && !active.contains(l + o))
            });
            let result = warp_sum(&[1; 32], active);
            if absent_read {
                prop_assert!(matches!(result, Err(ModelError::AbsentLane { .. })), "{:?}", result);
            } else if active.contains(0) {
                prop_assert_eq!(result, Ok(32));
            }
        }
    }
}
