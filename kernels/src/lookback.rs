//! The scratch of a decoupled look-back launch (scan and compaction), laid
//! out as `kernels/cuda/common/decoupled_lookback.cuh` reads it: one `u64`
//! array, zeroed before every launch, holding
//! * word 0: the tile counter (low 32 bits) and the error word (high 32
//!   bits, set when a look-back spin runs out). 32 bits hold any tile id and
//!   count with 64-bit sizes too: one block a tile, so at most
//!   [`crate::reduce::MAX_GRID_BLOCKS`] = 2^31 - 1 tiles (the plans refuse
//!   more);
//! * word 1: padding, so that the descriptors are 16-byte aligned;
//! * one descriptor per tile: each 32-bit word of the tile's value in the low
//!   half of a `u64` whose high half is the tile's status (0 = not yet
//!   published), padded to an even number of words, so a successor reads
//!   status and value in one access.

use crate::device::Gpu;
use crate::error::{DriverContext, GpuResult};
use cudarc::driver::{CudaSlice, CudaStream};
use std::sync::Arc;

/// Words in front of the descriptors (`kLookbackHeaderWords`).
pub const HEADER_WORDS: usize = 2;

/// The scratch of a look-back launch over `tiles` tiles of one value type.
pub struct LookbackScratch {
    words: CudaSlice<u64>,
}

/// `u64` words of the scratch for `tiles` tiles of `value_bytes`-byte values.
/// (`value_bytes` is a multiple of 4: two descriptor words per 8 bytes,
/// rounded up).
pub fn scratch_words(tiles: usize, value_bytes: usize) -> usize {
    HEADER_WORDS + tiles * 2 * value_bytes.div_ceil(8)
}

impl LookbackScratch {
    /// Allocates (zeroed) the scratch for `tiles` tiles of `T` values.
    pub fn new<T>(gpu: &Gpu, tiles: usize) -> GpuResult<Self> {
        Ok(LookbackScratch { words: gpu.alloc_zeroed::<u64>(scratch_words(tiles, std::mem::size_of::<T>()))? })
    }

    /// Clears every word (status X, counter 0, no error): stream-ordered,
    /// before every launch.
    pub fn reset(&mut self, stream: &Arc<CudaStream>) -> GpuResult<()> {
        stream.memset_zeros(&mut self.words).context(|| "clearing the look-back scratch".to_string())
    }

    /// The device buffer, for the launch arguments.
    pub fn buffer(&mut self) -> &mut CudaSlice<u64> {
        &mut self.words
    }

    /// Bytes cleared before every launch.
    pub fn bytes(&self) -> usize {
        self.words.len() * 8
    }

    /// After the launch has completed (this call synchronises): whether a
    /// look-back spin ran out (the error word is set).
    pub fn timed_out(&self, stream: &Arc<CudaStream>) -> GpuResult<bool> {
        let header =
            stream.clone_dtoh(&self.words.slice(0..1)).context(|| "reading the look-back error word".to_string())?;
        Ok(header[0] >> 32 != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_follow_a_16_byte_header() {
        // i64 values: two descriptor words per tile; affine maps (16 bytes): four.
        assert_eq!(scratch_words(0, 8), 2);
        assert_eq!(scratch_words(3, 4), 2 + 6, "a 4-byte value takes a padded pair of words");
        assert_eq!(scratch_words(3, 8), 2 + 6);
        assert_eq!(scratch_words(3, 16), 2 + 12);
        assert_eq!(HEADER_WORDS * 8 % 16, 0, "descriptors start 16-byte aligned");
    }
}
