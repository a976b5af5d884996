//! GPU cases of softmax (added when its kernels land).
use super::GpuCase;
use crate::sweep::SweepPlan;
/// Appends every softmax case of `plan`.
pub fn cases(_plan: &SweepPlan, _out: &mut Vec<GpuCase>) {}
