//! Comparison helpers that turn disagreements into [`Mismatch`]es.

use std::fmt::Debug;

use super::{Check, Mismatch};
use crate::ModelError;

/// A model call that should have produced a value.
pub(super) fn ok<T>(check: &Check, what: &str, r: Result<T, ModelError>) -> Result<T, Mismatch> {
    r.map_err(|e| Mismatch {
        check: check.describe(),
        index: None,
        expected: format!("{what} returns a value"),
        got: format!("error: {e}"),
    })
}

/// Elementwise equality; the first differing index (or the shorter length) is reported.
pub(super) fn same_slices<T: PartialEq + Debug>(
    check: &Check,
    what: &str,
    expected: &[T],
    got: &[T],
) -> Result<usize, Mismatch> {
    if let Some(i) = expected.iter().zip(got).position(|(e, g)| e != g) {
        return Err(Mismatch {
            check: check.describe(),
            index: Some(i),
            expected: format!("{what}: {:?}", expected[i]),
            got: format!("{:?}", got[i]),
        });
    }
    if expected.len() != got.len() {
        return Err(Mismatch {
            check: check.describe(),
            index: Some(expected.len().min(got.len())),
            expected: format!("{what}: length {}", expected.len()),
            got: format!("length {}", got.len()),
        });
    }
    Ok(expected.len())
}

/// Scalar equality.
pub(super) fn same<T: PartialEq + Debug>(check: &Check, what: &str, expected: &T, got: &T) -> Result<usize, Mismatch> {
    if expected != got {
        return Err(Mismatch {
            check: check.describe(),
            index: None,
            expected: format!("{what}: {expected:?}"),
            got: format!("{got:?}"),
        });
    }
    Ok(1)
}

/// A law that must hold.
pub(super) fn holds(check: &Check, law: &str, ok: bool, got: impl FnOnce() -> String) -> Result<usize, Mismatch> {
    if !ok {
        return Err(Mismatch { check: check.describe(), index: None, expected: law.to_string(), got: got() });
    }
    Ok(1)
}
