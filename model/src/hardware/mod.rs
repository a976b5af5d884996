//! Models of the hardware-scope algorithms themselves, combine for combine in the order the
//! CUDA kernels execute them: warp shuffles with lane participation, the 256-thread block
//! reduction, multi-pass grid reduction, the Blelloch and Hillis–Steele block scans and the
//! recursive device scan, and the tile of the deterministic float sums (4096 items, replayed
//! bit for bit: [`float_tile`]; its passes are [`crate::float_reduce`]). Each one is checked against the direct
//! definitions in [`crate::reduce`] and [`crate::scan`], or for floats against hand-written
//! trees and the exact sum's error bound.

pub mod blelloch;
pub mod block_reduce;
pub mod device_scan;
pub mod float_tile;
pub mod hillis_steele;
pub mod level_sizes;
pub mod multipass_reduce;
pub mod radix_select;
pub mod sample_draw;
pub mod warp;
