//! Reports: terminal tables now; the benchmark report and plots (`harness report`).

pub mod table;

/// `harness report`: regenerates the Markdown report and PNG plots from a bench receipt.
pub fn run(args: &crate::cli::ReportArgs) -> anyhow::Result<bool> {
    use crate::bench::output;
    // The receipt's own coverage decides where its report may go: a partial
    // receipt's report never replaces a full run's.
    let receipt = crate::receipts::Receipt::load(&args.receipt)?;
    let coverage = output::receipt_coverage(&receipt);
    let out = output::report_dir(args.out.as_deref(), &crate::receipts::receipts_dir(), &coverage)?;
    if let crate::receipts::Coverage::Partial(why) = &coverage {
        println!("report: {} is a partial run's receipt ({why}): report in {}", args.receipt.display(), out.display());
    }
    let files = crate::bench::report::write_report(&args.receipt, &out)?;
    println!("report: {} and {} plot(s) in {}", files.markdown.display(), files.plots.len(), out.display());
    Ok(true)
}
