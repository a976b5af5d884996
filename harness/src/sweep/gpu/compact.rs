//! GPU cases of compact (added when its kernels land).
use super::GpuCase;
use crate::sweep::SweepPlan;
/// Appends every compact case of `plan`.
pub fn cases(_plan: &SweepPlan, _out: &mut Vec<GpuCase>) {}
