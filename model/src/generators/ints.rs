//! Integer input families.

use super::family::DataFamily;
use super::rng::Rng;
use crate::ModelError;

fn full_range(rng: &mut Rng, n: usize) -> Vec<i32> {
    let mut v: Vec<i32> = (0..n).map(|_| rng.next_u64() as i32).collect();
    if n >= 2 {
        let i = rng.index(n);
        let mut j = rng.index(n - 1);
        if j >= i {
            j += 1;
        }
        v[i] = i32::MIN;
        v[j] = i32::MAX;
    } else if n == 1 {
        v[0] = if rng.next_u64() & 1 == 0 { i32::MIN } else { i32::MAX };
    }
    v
}

/// `n` integers of an integer `family` from `seed` (see [`DataFamily`] for each distribution).
/// Never all zeros: if a draw is all zeros, element 0 becomes 1.
/// Error: `BadGenerator` for a non-integer family.
pub fn ints(family: DataFamily, n: usize, seed: u64) -> Result<Vec<i32>, ModelError> {
    let mut rng = Rng::new(seed);
    let mut v: Vec<i32> = match family {
        DataFamily::SmallInts => (0..n).map(|_| rng.range_i64(-9, 9) as i32).collect(),
        DataFamily::FullRangeI32 => full_range(&mut rng, n),
        DataFamily::Sorted => {
            let mut v = full_range(&mut rng, n);
            v.sort_unstable();
            v
        }
        DataFamily::Reversed => {
            let mut v = full_range(&mut rng, n);
            v.sort_unstable_by(|a, b| b.cmp(a));
            v
        }
        DataFamily::ManyTies => (0..n).map(|_| rng.range_i64(-2, 2) as i32).collect(),
        other => {
            return Err(ModelError::BadGenerator {
                generator: "ints",
                detail: format!("{} is not an integer family", other.name()),
            })
        }
    };
    if let Some(first) = v.first().copied() {
        if first == 0 && v.iter().all(|&x| x == 0) {
            v[0] = 1;
        }
    }
    Ok(v)
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
