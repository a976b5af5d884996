//! Host-side checks of a benchmark's one checked call: exact comparisons,
//! prefix sums verified in parallel, and the order-free float bound.

use rayon::prelude::*;

/// Items per parallel chunk of the checks.
const CHUNK: usize = 1 << 18;

/// Unit roundoff of float32.
pub const U_F32: f64 = 1.0 / 16_777_216.0;

/// The first index where `got` differs from `expected`, as a message, or Ok.
pub fn exact_slices<T: PartialEq + std::fmt::Debug + Sync>(
    what: &str,
    expected: &[T],
    got: &[T],
) -> Result<(), String> {
    if expected.len() != got.len() {
        return Err(format!("{what}: {} values expected, {} returned", expected.len(), got.len()));
    }
    let first = expected
        .par_chunks(CHUNK)
        .zip(got.par_chunks(CHUNK))
        .enumerate()
        .filter_map(|(c, (e, g))| e.iter().zip(g).position(|(a, b)| a != b).map(|i| c * CHUNK + i))
        .min();
    match first {
        None => Ok(()),
        Some(i) => Err(format!("{what}: first mismatch at index {i}: expected {:?}, got {:?}", expected[i], got[i])),
    }
}

/// Checks `got` against the int64 scan of `input` (exclusive: identity 0
/// first; inclusive: `exclusive[i] + x[i]`), in parallel chunks.
pub fn int_scan(input: &[i32], got: &[i64], inclusive: bool) -> Result<(), String> {
    if input.len() != got.len() {
        return Err(format!("scan: {} outputs for {} inputs", got.len(), input.len()));
    }
    let chunk_sums: Vec<i64> = input.par_chunks(CHUNK).map(|c| c.iter().map(|&x| x as i64).sum()).collect();
    let mut offsets = Vec::with_capacity(chunk_sums.len());
    let mut running = 0i64;
    for s in &chunk_sums {
        offsets.push(running);
        running += s;
    }
    let first = input
        .par_chunks(CHUNK)
        .zip(got.par_chunks(CHUNK))
        .enumerate()
        .filter_map(|(c, (x, g))| {
            let mut prefix = offsets[c];
            for (i, (&xi, &gi)) in x.iter().zip(g).enumerate() {
                let expected = if inclusive { prefix + xi as i64 } else { prefix };
                if gi != expected {
                    return Some((c * CHUNK + i, expected, gi));
                }
                prefix += xi as i64;
            }
            None
        })
        .min_by_key(|m| m.0);
    match first {
        None => Ok(()),
        Some((i, e, g)) => Err(format!("scan: first mismatch at index {i}: expected {e}, got {g}")),
    }
}

/// The order-free bound on a float32 sum of `len` terms with `sum_abs =
/// sum|x|`: `(len - 1) u / (1 + u) * sum|x|` (Jeannerod & Rump 2018), which
/// holds for any order of additions, atomics included.
pub fn order_free_bound(len: usize, sum_abs: f64) -> f64 {
    if len <= 1 {
        return 0.0;
    }
    (len - 1) as f64 * U_F32 / (1.0 + U_F32) * sum_abs
}

/// Checks one float32 sum: `|got - exact| <= bound`; the message names `what`.
pub fn float_within(what: &str, exact: f64, got: f32, bound: f64) -> Result<(), String> {
    let error = (got as f64 - exact).abs();
    if got.is_finite() && error <= bound {
        Ok(())
    } else {
        Err(format!("{what}: got {got:e}, exact {exact:e}, |error| {error:e} > bound {bound:e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_slices_name_the_first_mismatch() {
        let a: Vec<u32> = (0..1_000_000).collect();
        let mut b = a.clone();
        assert!(exact_slices("x", &a, &b).is_ok());
        b[700_000] = 1;
        b[900_000] = 1;
        let e = exact_slices("x", &a, &b).unwrap_err();
        assert!(e.contains("index 700000"), "{e}");
    }

    #[test]
    fn scans_are_checked_across_chunks() {
        let x: Vec<i32> = (0..(3 * CHUNK + 5)).map(|i| (i % 19) as i32 - 9).collect();
        let mut exclusive = Vec::with_capacity(x.len());
        let mut s = 0i64;
        for &v in &x {
            exclusive.push(s);
            s += v as i64;
        }
        let inclusive: Vec<i64> = exclusive.iter().zip(&x).map(|(e, &v)| e + v as i64).collect();
        assert!(int_scan(&x, &exclusive, false).is_ok());
        assert!(int_scan(&x, &inclusive, true).is_ok());
        assert!(int_scan(&x, &exclusive, true).is_err());
        let mut wrong = exclusive.clone();
        wrong[2 * CHUNK + 1] += 1;
        assert!(int_scan(&x, &wrong, false).unwrap_err().contains(&format!("index {}", 2 * CHUNK + 1)));
    }

    #[test]
    fn the_float_bound_admits_rounding_and_rejects_garbage() {
        let bound = order_free_bound(1024, 256.0);
        assert!(float_within("s", 1.0, 1.0 + 1e-6, bound).is_ok());
        assert!(float_within("s", 1.0, 2.0, bound).is_err());
        assert!(float_within("s", 1.0, f32::NAN, bound).is_err());
        assert_eq!(order_free_bound(1, 5.0), 0.0);
    }
}
