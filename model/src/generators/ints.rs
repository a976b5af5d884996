//! Integer input families.

use super::family::DataFamily;
use super::pieces::int_pieces;
use crate::ModelError;

/// `n` integers of an integer `family` from `seed` (see [`DataFamily`] for each distribution).
/// Never all zeros: if a draw is all zeros, element 0 becomes 1. These are the pieces of
/// [`int_pieces`] collected.
/// Error: `BadGenerator` for a non-integer family.
pub fn ints(family: DataFamily, n: usize, seed: u64) -> Result<Vec<i32>, ModelError> {
    Ok(int_pieces(family, n, seed)?.collect_all())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_have_their_shape() {
        let small = ints(DataFamily::SmallInts, 1000, 1).unwrap();
        assert!(small.iter().all(|x| (-9..=9).contains(x)));
        assert!(small.contains(&-9) && small.contains(&9));
        for f in [DataFamily::FullRangeI32, DataFamily::Sorted, DataFamily::Reversed] {
            for n in [2usize, 3, 257] {
                let v = ints(f, n, 5).unwrap();
                assert!(v.contains(&i32::MIN) && v.contains(&i32::MAX), "{} {n}", f.name());
            }
        }
        let sorted = ints(DataFamily::Sorted, 300, 9).unwrap();
        assert!(sorted.windows(2).all(|w| w[0] <= w[1]));
        let rev = ints(DataFamily::Reversed, 300, 9).unwrap();
        assert!(rev.windows(2).all(|w| w[0] >= w[1]));
        let ties = ints(DataFamily::ManyTies, 100, 3).unwrap();
        assert!(ties.iter().filter(|&&x| x == 2).count() > 5);
        assert!(ints(DataFamily::UniformFloat, 3, 1).is_err());
        assert_eq!(ints(DataFamily::SmallInts, 0, 1).unwrap(), Vec::<i32>::new());
    }

    #[test]
    fn never_all_zero_and_reproducible() {
        for seed in 0..200 {
            let v = ints(DataFamily::SmallInts, 1, seed).unwrap();
            assert_ne!(v, vec![0]);
        }
        assert_eq!(ints(DataFamily::FullRangeI32, 50, 77).unwrap(), ints(DataFamily::FullRangeI32, 50, 77).unwrap());
    }
}
