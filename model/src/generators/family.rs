//! Named data families: what kind of input a check or fixture uses.

use crate::ModelError;

/// How softmax rows are masked (a masked logit is `-inf`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MaskPolicy {
    /// No masked logits.
    Unmasked,
    /// Each logit masked with probability 1/4; every row keeps at least one unmasked logit.
    RandomMasks,
    /// As `RandomMasks`, and every row `r` with `r % 4 == 1` is entirely masked (the
    /// `AllMasked` error path; needs at least 2 rows to show).
    WithAllMaskedRows,
}

impl MaskPolicy {
    /// Every policy.
    pub const ALL: [MaskPolicy; 3] = [MaskPolicy::Unmasked, MaskPolicy::RandomMasks, MaskPolicy::WithAllMaskedRows];

    /// `"unmasked"`, `"random_masks"`, `"all_masked_rows"`.
    pub fn name(self) -> &'static str {
        match self {
            MaskPolicy::Unmasked => "unmasked",
            MaskPolicy::RandomMasks => "random_masks",
            MaskPolicy::WithAllMaskedRows => "all_masked_rows",
        }
    }
}

/// A data family. Names (see [`DataFamily::name`]) are stable: fixtures and check reports use them
/// and [`DataFamily::from_name`] parses them back.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DataFamily {
    /// Integers uniform in `[-9, 9]` (small enough that every sum of n items stays within ±9n).
    SmallInts,
    /// Uniform over all of `i32`, always containing `i32::MIN` and `i32::MAX` (for `n >= 2`;
    /// a single element is one of the two).
    FullRangeI32,
    /// `FullRangeI32` sorted ascending (extremes at both ends).
    Sorted,
    /// `FullRangeI32` sorted descending.
    Reversed,
    /// Integers uniform in `[-2, 2]`: every value repeats, maxima tie everywhere.
    ManyTies,
    /// Floats uniform in `[-1, 1)`.
    UniformFloat,
    /// Ogita–Rump–Oishi GenSum-style sums with a target condition number (achieved value
    /// reported by the generator).
    IllConditioned {
        /// Target condition number Σ|x| / |Σx| (>= 1).
        condition: f64,
    },
    /// Softmax rows with extreme logits and the given masks.
    SoftmaxRows {
        /// Mask policy.
        mask: MaskPolicy,
    },
    /// Affine maps `(a odd, b)` uniform over u64 (the non-commutative operator's inputs).
    AffineMaps,
    /// Integers uniform in `[-9, 9]` without 0 at the items
    /// [`crate::generators::sparse_keeps`] names (every [`SPARSE_STRIDE`]-th item and
    /// [`SPARSE_WINDOW`] items on each side of 0, 2^31, 2^32, 2^33 and the end), 0
    /// elsewhere. Their `sum |x|` stays below 2^24 up to [`SPARSE_EXACT_MAX_LEN`] items, so
    /// any sum of any subset in any order is exact in f32: every schedule of a float sum
    /// must return the exact sum bit for bit, and an item dropped or read twice past a
    /// 32-bit boundary moves it.
    SparseSmallInts,
}

/// Every this many items, one of [`DataFamily::SparseSmallInts`] is kept nonzero.
pub const SPARSE_STRIDE: usize = 8191;
/// Items kept nonzero on each side of each boundary of [`DataFamily::SparseSmallInts`].
pub const SPARSE_WINDOW: usize = 4096;
/// The largest n at which [`DataFamily::SparseSmallInts`] keeps `sum |x|` below 2^24.
pub const SPARSE_EXACT_MAX_LEN: usize = (1 << 33) + (1 << 32);

impl DataFamily {
    /// The integer families, in report order.
    pub const INT_FAMILIES: [DataFamily; 5] = [
        DataFamily::SmallInts,
        DataFamily::FullRangeI32,
        DataFamily::Sorted,
        DataFamily::Reversed,
        DataFamily::ManyTies,
    ];

    /// Stable name: `small_ints`, `full_range_i32`, `sorted`, `reversed`, `many_ties`,
    /// `uniform_float`, `ill_conditioned_<cond as {:e}>` (e.g. `ill_conditioned_1e30`),
    /// `softmax_rows_<mask>` (e.g. `softmax_rows_random_masks`), `affine_maps`,
    /// `sparse_small_ints`.
    pub fn name(&self) -> String {
        match self {
            DataFamily::SmallInts => "small_ints".into(),
            DataFamily::FullRangeI32 => "full_range_i32".into(),
            DataFamily::Sorted => "sorted".into(),
            DataFamily::Reversed => "reversed".into(),
            DataFamily::ManyTies => "many_ties".into(),
            DataFamily::UniformFloat => "uniform_float".into(),
            DataFamily::IllConditioned { condition } => format!("ill_conditioned_{condition:e}"),
            DataFamily::SoftmaxRows { mask } => format!("softmax_rows_{}", mask.name()),
            DataFamily::AffineMaps => "affine_maps".into(),
            DataFamily::SparseSmallInts => "sparse_small_ints".into(),
        }
    }

    /// Parses a [`DataFamily::name`]. Error: `BadGenerator` for an unknown name.
    pub fn from_name(name: &str) -> Result<DataFamily, ModelError> {
        let unknown = || ModelError::BadGenerator {
            generator: "DataFamily::from_name",
            detail: format!("unknown family {name:?}"),
        };
        Ok(match name {
            "small_ints" => DataFamily::SmallInts,
            "full_range_i32" => DataFamily::FullRangeI32,
            "sorted" => DataFamily::Sorted,
            "reversed" => DataFamily::Reversed,
            "many_ties" => DataFamily::ManyTies,
            "uniform_float" => DataFamily::UniformFloat,
            "affine_maps" => DataFamily::AffineMaps,
            "sparse_small_ints" => DataFamily::SparseSmallInts,
            other => {
                if let Some(c) = other.strip_prefix("ill_conditioned_") {
                    let condition: f64 = c.parse().map_err(|_| unknown())?;
                    DataFamily::IllConditioned { condition }
                } else if let Some(m) = other.strip_prefix("softmax_rows_") {
                    let mask = MaskPolicy::ALL.into_iter().find(|p| p.name() == m).ok_or_else(unknown)?;
                    DataFamily::SoftmaxRows { mask }
                } else {
                    return Err(unknown());
                }
            }
        })
    }

    /// `true` for the families [`crate::generators::ints`] generates.
    pub fn is_integer(&self) -> bool {
        DataFamily::INT_FAMILIES.contains(self) || *self == DataFamily::SparseSmallInts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let mut all: Vec<DataFamily> = DataFamily::INT_FAMILIES.to_vec();
        all.extend([
            DataFamily::UniformFloat,
            DataFamily::IllConditioned { condition: 1e30 },
            DataFamily::IllConditioned { condition: 1000.0 },
            DataFamily::AffineMaps,
        ]);
        all.extend(MaskPolicy::ALL.map(|mask| DataFamily::SoftmaxRows { mask }));
        for f in all {
            assert_eq!(DataFamily::from_name(&f.name()).unwrap(), f, "{}", f.name());
        }
        assert_eq!(DataFamily::IllConditioned { condition: 1e30 }.name(), "ill_conditioned_1e30");
        assert!(DataFamily::from_name("zeros").is_err());
        assert!(DataFamily::from_name("ill_conditioned_x").is_err());
    }
}
