//! `harness mutants` (being built).
/// Runs the gallery.
pub fn run(_args: &crate::cli::MutantsArgs) -> anyhow::Result<bool> {
    anyhow::bail!("harness mutants is not built yet")
}
