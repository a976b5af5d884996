//! `harness fixtures` (being built).
/// Writes or checks fixtures.
pub fn run(_args: &crate::cli::FixturesArgs) -> anyhow::Result<bool> {
    anyhow::bail!("harness fixtures is not built yet")
}
