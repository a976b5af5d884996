//! Segment offsets: the host check every segmented kernel relies on (at
//! least one entry, non-decreasing, none past `n`, `n <= MAX_LEN`) and the
//! validated copy on the device that plans take, u32 wherever
//! `n <= u32::MAX` (the common case keeps 4-byte offsets) and u64 past it.

use super::MAX_LEN;
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
/// `n <= MAX_LEN`, non-decreasing, none above `n`. The error names the
/// first bad position and its values.
pub fn validate_segment_offsets(offsets: &[usize], n: usize) -> Result<OffsetSummary, String> {
    if n > MAX_LEN {
        return Err(format!("n must be at most {MAX_LEN} (2^40)"));
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

/// How offsets are stored on the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OffsetWidth {
    /// 4-byte offsets: inputs of at most `u32::MAX` elements.
    U32,
    /// 8-byte offsets: any input (the kernels' `_o64` entry points).
    U64,
}

impl OffsetWidth {
    /// The width [`Gpu::upload_segment_offsets`] picks for `n` elements: u32
    /// up to `u32::MAX`, u64 past it.
    pub fn for_len(n: usize) -> OffsetWidth {
        if n <= u32::MAX as usize {
            OffsetWidth::U32
        } else {
            OffsetWidth::U64
        }
    }

    /// The kernel-name suffix of the entry points that read this width.
    pub fn kernel_suffix(self) -> &'static str {
        match self {
            OffsetWidth::U32 => "",
            OffsetWidth::U64 => "_o64",
        }
    }

    /// Bytes of one offset on the device.
    pub fn bytes(self) -> usize {
        match self {
            OffsetWidth::U32 => 4,
            OffsetWidth::U64 => 8,
        }
    }
}

/// The device copy of validated offsets, in one of the two widths.
pub(crate) enum DeviceOffsets {
    U32(CudaSlice<u32>),
    U64(CudaSlice<u64>),
}

/// Validated segment offsets on the device, made by
/// [`Gpu::upload_segment_offsets`]; a plan trusts them.
pub struct SegmentOffsets {
    device: DeviceOffsets,
    n: usize,
    summary: OffsetSummary,
}

impl std::fmt::Debug for SegmentOffsets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SegmentOffsets")
            .field("n", &self.n)
            .field("width", &self.width())
            .field("summary", &self.summary)
            .finish_non_exhaustive()
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
    /// How they are stored on the device.
    pub fn width(&self) -> OffsetWidth {
        match self.device {
            DeviceOffsets::U32(_) => OffsetWidth::U32,
            DeviceOffsets::U64(_) => OffsetWidth::U64,
        }
    }
    /// The `segments + 1` offsets on the device when they are u32.
    pub fn device_u32(&self) -> Option<&CudaSlice<u32>> {
        match &self.device {
            DeviceOffsets::U32(d) => Some(d),
            DeviceOffsets::U64(_) => None,
        }
    }
    /// The device copy, either width (for the plans' launches).
    pub(crate) fn device(&self) -> &DeviceOffsets {
        &self.device
    }
}

impl Gpu {
    /// Validates `offsets` against an input of `n` elements (see
    /// [`validate_segment_offsets`]) and uploads them as u32 when `n <=
    /// u32::MAX`, else as u64 ([`OffsetWidth::for_len`]).
    pub fn upload_segment_offsets(&self, offsets: &[usize], n: usize) -> GpuResult<SegmentOffsets> {
        self.upload_segment_offsets_as(offsets, n, OffsetWidth::for_len(n))
    }

    /// [`Gpu::upload_segment_offsets`] in the width asked for: u64 at any
    /// `n` (how the sweep runs the `_o64` kernels at every size), u32 only
    /// when `n <= u32::MAX` ([`GpuError::InvalidInput`] otherwise).
    pub fn upload_segment_offsets_as(
        &self,
        offsets: &[usize],
        n: usize,
        width: OffsetWidth,
    ) -> GpuResult<SegmentOffsets> {
        let invalid =
            |reason: String| GpuError::InvalidInput { primitive: "segmented_reduce", variant: "offsets", n, reason };
        let summary = validate_segment_offsets(offsets, n).map_err(invalid)?;
        let device = match width {
            OffsetWidth::U32 if n > u32::MAX as usize => {
                return Err(invalid(format!("u32 offsets take n up to {}; use u64 offsets", u32::MAX)))
            }
            // Every offset is <= n <= u32::MAX, checked above.
            OffsetWidth::U32 => {
                DeviceOffsets::U32(self.upload(&offsets.iter().map(|&o| o as u32).collect::<Vec<_>>())?)
            }
            OffsetWidth::U64 => {
                DeviceOffsets::U64(self.upload(&offsets.iter().map(|&o| o as u64).collect::<Vec<_>>())?)
            }
        };
        Ok(SegmentOffsets { device, n, summary })
    }
}
