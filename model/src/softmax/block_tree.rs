//! The softmax state reduced in the GPU's block order (256 threads, strided columns, warp
//! shuffles, 8 warp partials, second warp pass).

use super::state::SoftmaxState;
use crate::hardware::block_reduce::{block_reduce, BlockLayout};
use crate::operator::SoftmaxMerge;
use crate::scalar::Scalar;
use crate::ModelError;

/// The state of a row as the CUDA row kernel builds it: one 256-thread block per row, thread
/// `t` folds columns `t, t+256, t+512, …` in order with the online update (= merge with
/// `(x, 1)`, masked `-inf` = identity), then the states are merged by
/// [`block_reduce`] with [`BlockLayout::Strided`] (shfl_down 16..1 within each warp, lane 0
/// of each warp to shared memory, lanes 0..8 of warp 0 merge the 8 partials).
///
/// Equal to [`crate::softmax::softmax_state`] in `m` exactly and in `d` within rounding.
/// Errors: NaN/`+inf` → `NonFinite { primitive: "softmax_block", index }` (first index).
pub fn block_state<T: Scalar>(row: &[T]) -> Result<SoftmaxState, ModelError> {
    let states = row
        .iter()
        .enumerate()
        .map(|(index, x)| {
            SoftmaxState::from_logit(x.to_f64()).map_err(|_| ModelError::NonFinite {
                primitive: "softmax_block",
                index,
                value: x.to_f64(),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    block_reduce(&SoftmaxMerge, &states, BlockLayout::Strided)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::softmax::softmax_state;

    #[test]
    fn block_tree_matches_sequential_state() {
        for cols in [1usize, 31, 33, 257, 513, 4099] {
            let row: Vec<f64> = (0..cols)
                .map(|i| if i % 7 == 3 { f64::NEG_INFINITY } else { ((i * 37) % 101) as f64 / 7.0 - 5.0 })
                .collect();
            let tree = block_state(&row).unwrap();
            let seq = softmax_state(&row).unwrap();
            assert_eq!(tree.m, seq.m);
            assert!((tree.d - seq.d).abs() <= 1e-13 * seq.d, "cols {cols}");
        }
    }
}
