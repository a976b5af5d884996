//! The benchmark report: Markdown (`report.md`) and PNG plots from a bench
//! receipt, with no GPU needed (`harness report`). Everything it says comes
//! from the receipt; ratios and targets are recomputed from the records.

use super::baselines::BaselineRun;
use super::crossover::{self, CrossoverStudy};
use super::details::BenchDetails;
use super::ncu;
use super::plot;
use super::record::{size_label, us};
use super::record::{BenchRecord, IMPL_CEILING, IMPL_CUB, IMPL_PRIMLAB, IMPL_TORCH};
use super::report_peers;
use super::report_targets;
use super::targets::{self, fastest};
use crate::bench::output;
use crate::receipts::{Coverage, Receipt};
use crate::table::Table;
use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What `write_report` wrote.
#[derive(Debug, Clone)]
pub struct ReportFiles {
    /// The Markdown report.
    pub markdown: PathBuf,
    /// The plots, one per primitive.
    pub plots: Vec<PathBuf>,
    /// Every record, one CSV row each (the report's appendix).
    pub csv: PathBuf,
}

/// The file name of the records' CSV beside the report.
pub const RECORDS_CSV: &str = "records.csv";

/// The report of a run that just saved its receipt: written, or a line on
/// stderr saying why not. A report failure (or panic) never costs the run:
/// the receipt is saved, and `harness report` writes the report again.
pub fn write_after_run(run: &super::RunOutcome) {
    let written = std::panic::catch_unwind(|| write_report(&run.receipt, &run.report_dir));
    match written {
        Ok(Ok(files)) => {
            let line = format!("bench: report {} and {} plot(s)", files.markdown.display(), files.plots.len());
            if run.document_on_stdout {
                eprintln!("{line}");
            } else {
                println!("{line}");
            }
        }
        Ok(Err(e)) => eprintln!("bench: the report could not be written ({e:#}); rerun `harness report`"),
        Err(_) => eprintln!("bench: the report panicked; the receipt is saved; rerun `harness report`"),
    }
}

/// Reads the bench receipt at `receipt_path` and writes `report.md` and the
/// plots into `out_dir`, with every record as CSV ([`RECORDS_CSV`]).
/// `receipts/ncu/*.txt` beside the receipt are linked.
pub fn write_report(receipt_path: &Path, out_dir: &Path) -> Result<ReportFiles> {
    let receipt = Receipt::load(receipt_path)?;
    if receipt.kind != "bench" {
        anyhow::bail!("{} is a '{}' receipt, not a bench receipt", receipt_path.display(), receipt.kind);
    }
    let details: BenchDetails = serde_json::from_value(receipt.details.clone())
        .with_context(|| format!("reading the bench details of {}", receipt_path.display()))?;
    std::fs::create_dir_all(out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    // Every file is renamed into place whole (plot::draw_all and write_atomic).
    let ncu_dir = receipt_path.parent().unwrap_or(Path::new(".")).join("ncu");
    let plots = plot::draw_all(&details.records, out_dir, &figure_metadata(&receipt, &details))?;
    let ncu_link = relative_path(out_dir, &ncu_dir);
    let markdown = render(&receipt, &details, &plots, (&ncu_dir, &ncu_link));
    let path = out_dir.join("report.md");
    crate::receipts::write_atomic(&path, markdown.as_bytes())?;
    let csv = out_dir.join(RECORDS_CSV);
    crate::receipts::write_atomic(&csv, super::export::records_csv(&details.records).as_bytes())?;
    Ok(ReportFiles { markdown: path, plots: plots.into_iter().map(|(_, p)| p).collect(), csv })
}

/// `to` as a path relative to the folder `from` (both resolved; `to` as
/// given when either cannot be): what a Markdown link in `from` needs.
pub fn relative_path(from: &Path, to: &Path) -> PathBuf {
    let (Ok(from), Ok(to_resolved)) = (from.canonicalize(), to.canonicalize()) else { return to.to_path_buf() };
    let (a, b): (Vec<_>, Vec<_>) = (from.components().collect(), to_resolved.components().collect());
    let shared = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in shared..a.len() {
        out.push("..");
    }
    for part in &b[shared..] {
        out.push(part);
    }
    out
}

/// The line every figure carries: GPU, kernel sources, coverage, calls.
pub fn figure_metadata(receipt: &Receipt, details: &BenchDetails) -> String {
    let p = &details.protocol;
    let coverage = match output::receipt_coverage(receipt) {
        Coverage::Full => "full run".to_string(),
        Coverage::Partial(why) => format!("partial run ({why})"),
    };
    let hash: String = receipt.source_hash.chars().take(12).collect();
    format!(
        "{} | sources {hash} | {coverage} | {} warm-ups, {}/{} timed calls (below/from 2^24){} | {}",
        receipt.machine.gpu,
        p.warmups,
        p.iters_small,
        p.iters_large,
        if p.hot { ", cold and hot" } else { "" },
        receipt.created_utc
    )
}

/// Why a baseline has no record, from the run's baseline list.
fn absence(baselines: &[BaselineRun], who: &str) -> Option<String> {
    let run = baselines.iter().find(|b| b.implementation == who)?;
    run.reason.as_ref().map(|r| format!("{}: {r}", run.status))
}

/// The whole Markdown text.
/// `ncu` is the evidence folder and the same folder as the report links it.
pub fn render(receipt: &Receipt, details: &BenchDetails, plots: &[(String, PathBuf)], ncu: (&Path, &Path)) -> String {
    let targets = targets::evaluate_all(&details.records, &|who| absence(&details.baselines, who));
    let mut md = String::new();
    let _ = writeln!(md, "# primlab benchmark report\n");
    let _ = writeln!(
        md,
        "{} run on {}, finished {} ({:.0} s), kernel sources `{}`. Sections: targets, the faster peer, missed \
         targets, results by primitive (plots), crossover, machine, absences, method, evidence files; every \
         record is in [`{RECORDS_CSV}`]({RECORDS_CSV}).\n",
        if details.quick { "A `--quick`" } else { "A full" },
        receipt.machine.gpu,
        receipt.created_utc,
        details.wall_seconds,
        &receipt.source_hash[..receipt.source_hash.len().min(12)]
    );
    let _ = match output::receipt_coverage(receipt) {
        Coverage::Full => writeln!(md, "{}\n", output::FULL_REPORT_LINE),
        Coverage::Partial(why) => writeln!(md, "Coverage: partial run ({why}).\n"),
    };
    if let Some(reason) = &details.aborted {
        let _ = writeln!(md, "**The run stopped early:** {reason}. Entries after it were not run.\n");
    }
    report_targets::targets_section(&mut md, &targets);
    report_peers::peers_section(&mut md, &details.records);
    report_targets::missed_section(&mut md, &targets, &details.records, ncu);
    results_section(&mut md, details, plots);
    crossover_section(&mut md, details);
    machine_section(&mut md, receipt, details);
    absent_section(&mut md, details);
    method_section(&mut md, receipt, details);
    ncu_files_section(&mut md, ncu);
    md
}

fn machine_section(md: &mut String, receipt: &Receipt, details: &BenchDetails) {
    let m = &receipt.machine;
    let mut t = Table::new(["", ""]);
    t.row(["GPU".to_string(), format!("{} (compute capability {}, {} SMs)", m.gpu, m.compute_capability, m.sm_count)]);
    t.row(["L2 / memory".to_string(), format!("{} MiB / {} GiB", m.l2_bytes >> 20, m.memory_bytes >> 30)]);
    t.row(["driver".to_string(), m.driver.clone()]);
    t.row(["NVRTC (primlab kernels)".to_string(), m.nvrtc.clone()]);
    t.row(["toolkit (nvcc)".to_string(), m.toolkit.clone().unwrap_or_else(|| "not found".into())]);
    if let Some((sm, mem)) = m.clocks_mhz {
        t.row([
            "clocks".to_string(),
            format!("SM {sm} MHz, memory {mem} MHz (driver-reported maxima, not the clocks during the run)"),
        ]);
    }
    if let Some(host) = &m.host {
        t.row(["host".to_string(), host.clone()]);
    }
    t.row(["kernel-source hash".to_string(), format!("`{}`", receipt.source_hash)]);
    for b in &details.baselines {
        if let Some(meta) = &b.meta {
            let field = |k: &str| meta.get(k).map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()));
            // The release ("cccl 3.5.0"); receipts before it carry only the number.
            let version = if meta.get("cccl").is_some() { "cccl" } else { "cccl_version" };
            let parts: Vec<String> = ["gpu", "driver", "nvcc", "runtime", version, "torch", "cuda", "python"]
                .iter()
                .filter_map(|k| field(k).map(|v| format!("{k} {v}")))
                .collect();
            t.row([format!("{} baseline", b.implementation), parts.join(", ")]);
        }
    }
    let _ = writeln!(md, "## Machine and clocks\n\n{}", t.render_markdown());
    for line in super::clocks::summary(&details.clocks) {
        let _ = writeln!(md, "{line}\n");
    }
}

fn method_section(md: &mut String, receipt: &Receipt, details: &BenchDetails) {
    let p = &details.protocol;
    let _ = writeln!(md, "## Method\n");
    let _ = writeln!(md, "- Command: `{}`", receipt.command);
    let _ = writeln!(md, "- Timing: {}", details.timing);
    let _ = writeln!(
        md,
        "- Verdicts (targets, peers): a ratio compares cold-timed records of the same run. Its 95 % interval is a \
         bootstrap of both medians (the spread of calls within a process), widened against a baseline by the \
         run's program margin: how far the harness's and cub_bench's timings of the same device copy disagreed \
         at the nearest size, because the two sides are timed by different processes and between processes \
         identical work moves too. Met or missed (ahead or behind) only when that whole interval lies on one \
         side. primlab is judged on its default entry point (variant `default`: the schedule the dispatcher \
         picks at that size, named in brackets)."
    );
    let _ = writeln!(md, "- {}", stop_reasons(details));
    let _ = writeln!(
        md,
        "- Calls: {} warm-ups, then {} timed calls below 2^24 elements and {} from 2^24 on (an entry whose warm-ups \
         show it would need more than {:.0} s gets fewer, at least {}, and its record says so).",
        p.warmups, p.iters_small, p.iters_large, p.entry_budget_s, p.min_iters
    );
    let _ = writeln!(
        md,
        "- Cache policy (as the baselines): an input smaller than 2 x L2 is held as k identical copies totalling more \
         than 2 x L2 and each call reads the next copy; one buffer otherwise. Outputs and scratch are reused. Each \
         record states its policy."
    );
    let _ = writeln!(md, "- Correctness before timing: one call on a poisoned output, checked against a host computation; a wrong result is recorded `ok: false` and not timed.");
    for (kind, text) in &details.inputs {
        let _ = writeln!(md, "- Input {kind}: {text}");
    }
    let _ = writeln!(
        md,
        "- Sizes: n = {}; row shapes {}; segment lengths {:?}.",
        details.sizes_log2.iter().map(|k| format!("2^{k}")).collect::<Vec<_>>().join(", "),
        details.row_shapes.iter().map(|[r, c]| format!("[{r}, {c}]")).collect::<Vec<_>>().join(", "),
        details.segment_lens
    );
    let _ = writeln!(
        md,
        "- Logical bytes (useful bytes, not DRAM traffic; GB/s = 10^9 B/s): copy 8n (4n copied), read ceiling 4n, \
         reduce 4n, int32->int64 scan 12n, compaction 4n + 4 x kept, segmented sum 4n, histogram 4n, argmax 4n, \
         softmax 2 x element size x rows x cols. Ratios are baseline median / primlab median at equal logical bytes.\n"
    );
}

/// How the records' timed calls stopped, counted by reason.
fn stop_reasons(details: &BenchDetails) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for r in details.records.iter().filter(|r| r.ok) {
        let name = r.stop_reason.map(|s| s.name().to_string()).unwrap_or_else(|| "not recorded".into());
        match counts.iter_mut().find(|(n, _)| *n == name) {
            Some((_, c)) => *c += 1,
            None => counts.push((name, 1)),
        }
    }
    let p = &details.protocol;
    let rule = match (p.max_noise, p.max_time_s) {
        (None, None) => "a fixed count".to_string(),
        (noise, time) => format!(
            "adaptive: at least {} calls, then until the median's interval is within {} or {} of timing, at most twice the fixed count",
            p.min_samples.unwrap_or(super::sampling::DEFAULT_MIN_SAMPLES),
            noise.map_or("(no target)".to_string(), |n| format!("±{:.1} %", 100.0 * n)),
            time.map_or("(no limit)".to_string(), |t| format!("{t} s"))
        ),
    };
    let counted: Vec<String> = counts.iter().map(|(n, c)| format!("{c} {n}")).collect();
    format!(
        "Sampling: {rule}. Why the checked records stopped: {} (`not recorded`: the receipt predates stop reasons, or \
         a baseline's fixed count).",
        if counted.is_empty() { "no record".to_string() } else { counted.join(", ") }
    )
}

fn absent_section(md: &mut String, details: &BenchDetails) {
    let _ = writeln!(md, "## Absent, failed or skipped\n");
    for b in &details.baselines {
        match b.status.as_str() {
            "ran" => {
                let _ = writeln!(md, "- {} baseline: ran, {} records.", b.implementation, b.records);
            }
            status => {
                let _ = writeln!(
                    md,
                    "- {} baseline: **{status}**: {}. No {} number appears in this report.",
                    b.implementation,
                    b.reason.as_deref().unwrap_or("no reason recorded"),
                    b.implementation
                );
            }
        }
        for f in &b.failed_records {
            let size = f.shape.map(|[r, c]| format!("[{r}, {c}]")).unwrap_or_else(|| size_label(f.n));
            let _ = writeln!(md, "  - {} {size} failed its own check (not used): {}", f.op, f.error);
        }
        if !b.unreadable_lines.is_empty() {
            let _ = writeln!(md, "  - unreadable output lines: {:?}", b.unreadable_lines);
        }
    }
    if details.baselines.is_empty() {
        let _ = writeln!(md, "- No baseline was attempted.");
    }
    for w in &details.not_wired {
        let _ = writeln!(md, "- {}: not benchmarked: {}.", w.primitive, w.reason);
    }
    match (&details.crossover, &details.crossover_absent) {
        (None, Some(reason)) => {
            let _ = writeln!(md, "- Crossover study: not run: {reason}.");
        }
        (None, None) => {
            let _ = writeln!(md, "- Crossover study: not run.");
        }
        _ => {}
    }
    let failures: Vec<&BenchRecord> = details.records.iter().filter(|r| !r.ok).collect();
    for r in &failures {
        let _ = writeln!(md, "- FAILED {}: {}", r.label(), r.error.as_deref().unwrap_or("no error text"));
    }
    if !details.skipped.is_empty() {
        let _ = writeln!(md, "- Entries not run ({}):", details.skipped.len());
        let mut t = Table::new(["primitive", "op", "variant", "size", "reason"]);
        for s in &details.skipped {
            t.row([s.primitive.clone(), s.op.clone(), s.variant.clone(), s.size.clone(), s.reason.clone()]);
        }
        let _ = writeln!(md, "\n{}", t.render_markdown());
    } else {
        let _ = writeln!(md);
    }
}

/// Distinct values in first-seen order.
fn distinct<T: PartialEq + Clone>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// The per-size table of one op: a column per implementation/variant with
/// median and GB/s, then the best primlab variant against the best baseline.
pub fn op_table(records: &[BenchRecord], op: &str) -> Table {
    let rs: Vec<&BenchRecord> = records.iter().filter(|r| r.op == op).collect();
    let rank = |i: &str| match i {
        IMPL_PRIMLAB => 0,
        IMPL_CEILING => 1,
        IMPL_CUB => 2,
        IMPL_TORCH => 3,
        _ => 4,
    };
    let mut columns = distinct(rs.iter().map(|r| (r.implementation.clone(), r.variant.clone(), r.timing_mode)));
    columns.sort_by_key(|(i, _, mode)| (rank(i), *mode));
    let mut sizes = distinct(rs.iter().map(|r| r.size()));
    sizes.sort_by_key(|s| (s.elements(), *s));
    let mut header = vec!["size".to_string()];
    header.extend(columns.iter().map(|(i, v, mode)| {
        let hot = if *mode == super::record::TimingMode::Hot { " (hot)" } else { "" };
        if i == IMPL_PRIMLAB {
            format!("{v}{hot}")
        } else {
            format!("{i} {v}{hot}")
        }
    }));
    header.push("fastest primlab vs each baseline".into());
    let mut t = Table::new(header);
    for size in sizes {
        let mut row = vec![size.label()];
        for (implementation, variant, mode) in &columns {
            let cell = rs
                .iter()
                .find(|r| {
                    &r.implementation == implementation
                        && &r.variant == variant
                        && r.timing_mode == *mode
                        && r.size() == size
                })
                .map(|r| match r.timed_median() {
                    Some(m) => {
                        let gbps = r.logical_bytes as f64 / (m * 1e3);
                        match r.noise() {
                            Some(n) => {
                                format!("{} ±{:.1} % · {gbps:.0} GB/s", us(m), n.median_interval.half_width_percent(m))
                            }
                            None => format!("{} · {gbps:.0} GB/s", us(m)),
                        }
                    }
                    None if !r.ok => "FAILED".into(),
                    None => "-".into(),
                })
                .unwrap_or_else(|| "-".into());
            row.push(cell);
        }
        let ours = fastest(records, IMPL_PRIMLAB, op, size);
        // The fastest primlab variant against each baseline measured at this size.
        let ours = ours.and_then(|o| Some((o, o.timed_median()?)));
        let ratios: Vec<String> = [IMPL_CUB, IMPL_TORCH]
            .iter()
            .filter_map(|i| fastest(records, i, op, size).and_then(|b| Some((i, b, b.timed_median()?))))
            .filter_map(|(i, b, bm)| {
                let (o, om) = ours?;
                let interval = super::stats::ratio_interval(&b.samples_us, &o.samples_us)
                    .map(|c| format!(" [{:.2}-{:.2}]", c.low, c.high))
                    .unwrap_or_default();
                Some(format!("{:.2}x{interval} vs {i}", bm / om))
            })
            .collect();
        row.push(match (ours, ratios.is_empty()) {
            (Some((o, _)), false) => format!("{} ({})", ratios.join(", "), o.variant),
            (Some(_), true) => "no baseline".into(),
            (None, _) => "-".into(),
        });
        t.row(row);
    }
    t
}

fn results_section(md: &mut String, details: &BenchDetails, plots: &[(String, PathBuf)]) {
    let _ = writeln!(md, "## Results by primitive\n");
    let _ = writeln!(
        md,
        "Cells: median ± half the width of its 95 % interval (absent: noise unknown) · logical GB/s. The last \
         column divides each baseline's median by the fastest cold primlab variant's (above 1: primlab is faster), \
         with the ratio's 95 % interval in brackets. Hot records have their own columns.\n"
    );
    let order = super::entries::report_order();
    let mut primitives = distinct(details.records.iter().map(|r| r.primitive.clone()));
    primitives.sort_by_key(|p| order.iter().position(|o| o == p).unwrap_or(order.len()));
    for primitive in primitives {
        let _ = writeln!(md, "### {primitive}\n");
        if let Some((_, path)) = plots.iter().find(|(p, _)| *p == primitive) {
            let name = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
            let _ = writeln!(
                md,
                "![{primitive}: median time per call against n, and the ratio to the faster peer]({name})\n"
            );
        }
        let ops = distinct(details.records.iter().filter(|r| r.primitive == primitive).map(|r| r.op.clone()));
        for op in ops {
            let _ = writeln!(md, "#### {op}\n\n{}", op_table(&details.records, &op).render_markdown());
        }
    }
}

fn crossover_section(md: &mut String, details: &BenchDetails) {
    let Some(study) = &details.crossover else { return };
    render_crossover(md, study);
}

/// The crossover table and conclusion.
pub fn render_crossover(md: &mut String, study: &CrossoverStudy) {
    let _ = writeln!(md, "## Float atomic crossover study\n");
    let _ = writeln!(
        md,
        "float32 sums of n elements (`{}`): one atomicAdd per element, one per block, and two-pass (no atomics); \
         medians of the same run.\n",
        crossover::OP
    );
    let mut t = Table::new([
        "n",
        "one atomic per element",
        "one atomic per block",
        "two-pass",
        "per-block atomics",
        "read ceiling",
        "fastest",
    ]);
    let cell = |v: Option<f64>| v.map(us).unwrap_or_else(|| "-".into());
    for r in &study.rows {
        let candidates =
            [("per element", r.per_element_us), ("per block", r.per_block_us), ("two-pass", r.two_pass_us)];
        let fastest = candidates
            .iter()
            .filter_map(|(name, t)| t.map(|t| (*name, t)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(name, _)| name.to_string())
            .unwrap_or_else(|| "-".into());
        t.row([
            size_label(r.n as u64),
            cell(r.per_element_us),
            cell(r.per_block_us),
            cell(r.two_pass_us),
            r.per_block_atomics.to_string(),
            cell(r.read_ceiling_us),
            fastest,
        ]);
    }
    let _ = writeln!(md, "{}", t.render_markdown());
    let _ = writeln!(
        md,
        "Smallest size at which block aggregation wins (and keeps winning): {}.\n",
        study.block_wins_from.map(|n| size_label(n as u64)).unwrap_or_else(|| "none in the measured range".into())
    );
    for sentence in &study.conclusion {
        let _ = writeln!(md, "- {sentence}");
    }
    let _ = writeln!(md);
}

/// Every evidence file under the ncu folder, linked by path with its
/// length and first line; none is inlined.
fn ncu_files_section(md: &mut String, (ncu_dir, ncu_link): (&Path, &Path)) {
    let files = ncu::all(ncu_dir);
    if files.is_empty() {
        return;
    }
    let _ = writeln!(md, "## Evidence files\n");
    let _ = writeln!(
        md,
        "Nsight Compute runs and old-against-new studies made on the GPU machine, under `{}`:\n",
        ncu_dir.display()
    );
    let mut t = Table::new(["file", "lines", "what"]);
    for e in files {
        let name = e.path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        t.row([
            format!("[`{name}`]({})", ncu_link.join(&name).display()),
            e.total_lines.to_string(),
            e.title.unwrap_or_default().replace('|', "/"),
        ]);
    }
    let _ = writeln!(md, "{}", t.render_markdown());
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
