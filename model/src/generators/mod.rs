//! Seeded, reproducible input generators. Every input in the project comes from a printed
//! `u64` seed through [`Rng`] (xoshiro256** seeded by splitmix64), so any failure reproduces
//! forever from that seed. No generator ever returns an all-zero input (zeros hide unwritten
//! outputs).

mod family;
mod floats;
mod ill_conditioned;
mod ints;
mod pieces;
mod rng;
mod softmax_rows;
mod topk_rows;

pub use family::{DataFamily, MaskPolicy, SPARSE_EXACT_MAX_LEN, SPARSE_STRIDE, SPARSE_WINDOW};
pub use floats::{affine_maps, segment_offsets, uniform_bf16, uniform_f32, uniform_f64};
pub use ill_conditioned::{
    ill_conditioned_f32, ill_conditioned_f64, F32_BOTTOM_EXPONENT, F32_TOP_EXPONENT, F64_BOTTOM_EXPONENT,
    F64_TOP_EXPONENT,
};
pub use ints::ints;
pub use pieces::{
    affine_map_pieces, compaction_flag_pieces, int_pieces, sparse_abs_bound, sparse_keeps, uniform_f32_pieces, Pieces,
    PIECE,
};
pub use rng::{splitmix64, Rng};
pub use softmax_rows::{softmax_row_pieces, softmax_rows};
pub use topk_rows::{topk_rows, TopkFamily};
