//! Reports: terminal tables now; the benchmark report and plots (`harness report`).

pub mod table;

/// `harness report`: regenerates the Markdown report and PNG plots from a bench receipt.
pub fn run(args: &crate::cli::ReportArgs) -> anyhow::Result<bool> {
    let files = crate::bench::report::write_report(&args.receipt, &args.out)?;
    println!("report: {} and {} plot(s) in {}", files.markdown.display(), files.plots.len(), args.out.display());
    Ok(true)
}
