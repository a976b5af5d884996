//! GPU cases of arg_reduce (added when its kernels land).
use super::GpuCase;
use crate::sweep::SweepPlan;
/// Appends every arg_reduce case of `plan`.
pub fn cases(_plan: &SweepPlan, _out: &mut Vec<GpuCase>) {}
