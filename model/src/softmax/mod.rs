//! Online softmax (Milakov & Gimelshein 2018): the (max, normaliser) state, its merge, the
//! full probabilities in f64, the GPU block-tree order, and an exact (rug) reference for
//! f32 rows.
//!
//! Masking: a masked logit is `-inf` in `f32`/`f64` inputs (or `None` in
//! [`softmax_masked`]); it gets probability exactly 0. A row with no unmasked logit is
//! `ModelError::AllMasked` listing every such row. `+inf` and NaN are `ModelError::NonFinite`
//! naming the first offending (flat) index. Nonfinite errors take precedence over all-masked
//! rows.

mod block_tree;
mod exact;
mod probabilities;
mod rows;
mod state;

pub use block_tree::block_state;
pub use exact::{normaliser_exact_f32, softmax_exact_f32, softmax_exact_rows_f32, EXACT_SOFTMAX_PRECISION};
pub use probabilities::{softmax, softmax_masked, softmax_rows};
pub use rows::{check_rows, RowShape};
pub use state::{merge_states, softmax_state, SoftmaxState};
