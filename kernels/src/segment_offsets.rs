//! Segment offsets: the host check every segmented kernel relies on (at
//! least one entry, non-decreasing, none past `n`, `n <= u32::MAX`) and the
//! validated u32 copy on the device that plans take.

use super::MAX_ITEMS;
use crate::device::Gpu;
use crate::error::{GpuError, GpuResult};
use cudarc::driver::CudaSlice;

/// What validated offsets describe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetSummary {
    /// Number of segments (`offsets.len() - 1`).
    pub segments: usize,
    /// Length of the longest segment.
    pub longest: usize,
    /// `offsets[0]`: the first element read.
    pub first: usize,
    /// `offsets[segments]`: one past the last element read.
    pub last: usize,
}

/// Checks `offsets` against an input of `n` elements: at least one entry,
/// `n <= u32::MAX`, non-decreasing, none above `n`. The error names the
/// first bad position and its values.
pub fn validate_segment_offsets(offsets: &[usize], n: usize) -> Result<OffsetSummary, String> {
    if n > MAX_ITEMS {
        return Err(format!("n must be at most {MAX_ITEMS} (offsets are u32 on the device)"));
    }
    let Some(&first) = offsets.first() else {
        return Err("offsets must hold segments + 1 entries (at least one)".into());
    };
    let mut longest = 0;
    for (i, &offset) in offsets.iter().enumerate() {
        if offset > n {
            return Err(format!("offsets[{i}] = {offset} passes n = {n}"));
        }
        if i > 0 {
            let previous = offsets[i - 1];
            if offset < previous {
                return Err(format!(
                    "offsets decrease at position {i}: offsets[{}] = {previous} > offsets[{i}] = {offset}",
                    i - 1
                ));
            }
            longest = longest.max(offset - previous);
        }
    }
    Ok(OffsetSummary { segments: offsets.len() - 1, longest, first, last: offsets[offsets.len() - 1] })
}

/// Validated segment offsets on the device (u32), made by
/// [`Gpu::upload_segment_offsets`]; a plan trusts them.
pub struct SegmentOffsets {
    device: CudaSlice<u32>,
    n: usize,
    summary: OffsetSummary,
}

impl std::fmt::Debug for SegmentOffsets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SegmentOffsets").field("n", &self.n).field("summary", &self.summary).finish_non_exhaustive()
    }
}

impl SegmentOffsets {
    /// The input length the offsets were validated against.
    pub fn n(&self) -> usize {
        self.n
    }
    /// Number of segments.
    pub fn segments(&self) -> usize {
        self.summary.segments
    }
    /// What the offsets describe.
    pub fn summary(&self) -> OffsetSummary {
        self.summary
    }
    /// The `segments + 1` u32 offsets on the device.
    pub fn device(&self) -> &CudaSlice<u32> {
        &self.device
    }
}

impl Gpu {
    /// Validates `offsets` against an input of `n` elements (see
    /// [`validate_segment_offsets`]) and uploads them as u32.
    pub fn upload_segment_offsets(&self, offsets: &[usize], n: usize) -> GpuResult<SegmentOffsets> {
        let summary = validate_segment_offsets(offsets, n).map_err(|reason| GpuError::InvalidInput {
            primitive: "segmented_reduce",
            variant: "offsets",
            n,
            reason,
        })?;
        // Every offset is <= n <= u32::MAX, checked above.
        let narrow: Vec<u32> = offsets.iter().map(|&o| o as u32).collect();
        Ok(SegmentOffsets { device: self.upload(&narrow)?, n, summary })
    }
}
