//! GPU cases of float_reduce (added when its kernels land).
use super::GpuCase;
use crate::sweep::SweepPlan;
/// Appends every float_reduce case of `plan`.
pub fn cases(_plan: &SweepPlan, _out: &mut Vec<GpuCase>) {}
