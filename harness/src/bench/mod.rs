//! `harness bench` (being built).
pub mod report;
/// Runs the benchmark.
pub fn run(_args: &crate::cli::BenchArgs) -> anyhow::Result<bool> {
    anyhow::bail!("harness bench is not built yet")
}
