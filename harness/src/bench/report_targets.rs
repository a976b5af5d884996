//! The report's lead: the targets table (the verdict on the default entry
//! point with its noise, the fastest variant beside it) and, for each missed
//! target, what was measured and where the evidence is.

use super::entries::ceilings::{COPY_OP, READ_OP};
use super::ncu;
use super::record::us;
use super::record::{BenchRecord, BenchSize, IMPL_CEILING};
use super::targets::{fastest, judged_record, TargetOutcome, TargetResult, TARGETS};
use crate::table::Table;
use std::fmt::Write as _;
use std::path::Path;

/// The targets table, verdicts first: one line per target, the judgement's
/// explanation in the Method section.
pub fn targets_section(md: &mut String, targets: &[TargetResult]) {
    let mut t =
        Table::new(["target", "verdict", "ratio", "judged on", "requirement", "primlab (default entry)", "reference"]);
    for r in targets {
        let pick = |name: &str, median: f64, gbps: f64| format!("{name} {} ({gbps:.0} GB/s)", us(median));
        let ours = r.ours.as_ref().map(|o| pick(&o.name(), o.median_us, o.gbps)).unwrap_or_else(|| "-".into());
        let reference =
            r.reference.as_ref().map(|o| pick(&o.implementation, o.median_us, o.gbps)).unwrap_or_else(|| "-".into());
        let ratio = r.ratio.map(|x| format!("{x:.2}x")).unwrap_or_else(|| "-".into());
        let judged = match (r.ratio, r.judged_interval, r.program_margin) {
            (Some(_), Some(i), Some(m)) => format!("{:.2}-{:.2}x (± {:.1} % margin)", i.low, i.high, m.percent()),
            (Some(_), Some(i), None) => format!("{:.2}-{:.2}x", i.low, i.high),
            (Some(_), None, _) => "noise unknown".into(),
            (None, _, _) => "-".into(),
        };
        let word = match r.outcome {
            TargetOutcome::Missed => "**MISSED**".to_string(),
            other => other.word().to_string(),
        };
        t.row([r.label.clone(), word, ratio, judged, r.requirement.clone(), ours, reference]);
    }
    let count = |o: TargetOutcome| targets.iter().filter(|r| r.outcome == o).count();
    let _ = writeln!(
        md,
        "## Targets\n\n{} met, {} missed, {} within noise, {} not measured. primlab's default entry point against \
         the reference; met or missed only when the whole interval (the ratio's 95 % interval, widened by the \
         program margin) lies on one side of the target (see Method).\n\n{}",
        count(TargetOutcome::Met),
        count(TargetOutcome::Missed),
        count(TargetOutcome::WithinNoise),
        count(TargetOutcome::NotMeasured),
        t.render_markdown()
    );
}

/// The record a target judged.
fn our_record<'a>(records: &'a [BenchRecord], r: &TargetResult) -> Option<&'a BenchRecord> {
    let spec = TARGETS.iter().find(|s| s.id == r.id)?;
    judged_record(records, spec)
}

fn ceiling_gbps(records: &[BenchRecord], op: &str, size: BenchSize) -> Option<f64> {
    let r = fastest(records, IMPL_CEILING, op, size)?;
    Some(r.logical_bytes as f64 / (r.timed_median()? * 1e3))
}

/// Each missed target with its numbers and ncu evidence.
pub fn missed_section(
    md: &mut String,
    targets: &[TargetResult],
    records: &[BenchRecord],
    (ncu_dir, ncu_link): (&Path, &Path),
) {
    let _ = writeln!(md, "## Missed targets: measured numbers and evidence\n");
    let missed: Vec<&TargetResult> = targets.iter().filter(|r| r.met == Some(false)).collect();
    if missed.is_empty() {
        let _ = writeln!(md, "No measured target was missed in this run.\n");
        return;
    }
    let _ = writeln!(
        md,
        "Bytes moved are an estimate from the algorithm (DRAM bytes when nothing stays in L2), not measured; the \
         reasons are Nsight Compute runs (`ncu --clock-control none`), linked, not quoted.\n"
    );
    for r in missed {
        let _ = writeln!(md, "### {} — {}\n", r.label, r.verdict);
        if let Some(rec) = our_record(records, r) {
            let median = rec.timed_median().unwrap_or(f64::NAN);
            let _ = writeln!(
                md,
                "- primlab `{}`: {} median (min {}, max {}), {:.0} GB/s logical.",
                r.ours.as_ref().map(|o| o.name()).unwrap_or_else(|| rec.variant.clone()),
                us(median),
                rec.min_us.map(us).unwrap_or_default(),
                rec.max_us.map(us).unwrap_or_default(),
                rec.logical_bytes as f64 / (median * 1e3)
            );
            match rec.bytes_moved_estimate {
                Some(moved) => {
                    let _ = writeln!(
                        md,
                        "- Bytes counted {} (logical) vs about {} moved by the schedule ({:.2}x), i.e. {:.0} GB/s of \
                         estimated traffic.",
                        rec.logical_bytes,
                        moved,
                        moved as f64 / rec.logical_bytes.max(1) as f64,
                        moved as f64 / (median * 1e3)
                    );
                }
                None => {
                    let _ =
                        writeln!(md, "- Bytes counted {} (logical); no traffic estimate recorded.", rec.logical_bytes);
                }
            }
            let _ = writeln!(
                md,
                "- Launches and memsets in the timed region: {}. Timed region: {}",
                rec.launches.map(|l| l.to_string()).unwrap_or_else(|| "not recorded".into()),
                rec.timed_region
            );
            let size = rec.size();
            let ceilings: Vec<String> = [(COPY_OP, "copy"), (READ_OP, "read")]
                .iter()
                .filter_map(|(op, name)| ceiling_gbps(records, op, size).map(|g| format!("{name} {g:.0} GB/s")))
                .collect();
            if !ceilings.is_empty() {
                let _ = writeln!(md, "- Ceilings at {}: {}.", size.label(), ceilings.join(", "));
            }
        }
        if let Some(reference) = &r.reference {
            let _ = writeln!(
                md,
                "- Reference {} `{}`: {} ({:.0} GB/s).",
                reference.implementation,
                reference.variant,
                us(reference.median_us),
                reference.gbps
            );
        }
        let _ = writeln!(md, "- Why: {}\n", evidence_line(ncu_dir, ncu_link, &r.id));
    }
}

/// The evidence of target `id`: a link to its file, or a note that none is filed.
fn evidence_line(ncu_dir: &Path, ncu_link: &Path, id: &str) -> String {
    let name = format!("{id}.txt");
    match ncu::evidence(ncu_dir, id) {
        Some(e) => format!(
            "ncu evidence [`{}`]({}) ({} lines)",
            e.path.display(),
            ncu_link.join(&name).display(),
            e.total_lines
        ),
        None => format!("no ncu evidence filed yet (no {})", ncu_dir.join(name).display()),
    }
}
