//! The float atomic crossover study (from what size does block aggregation beat per-element
//! atomics?): one atomic per
//! element, one atomic per block and two-pass float32 sums over 2^10 ..
//! 2^28 elements, a table of median latencies, the smallest size from which
//! block aggregation wins, and a conclusion whose every number is computed
//! from the measured medians (nothing is asserted that the table does not show).

use super::entries::ceilings::READ_OP;
use super::record::size_label;
use super::record::{BenchRecord, BenchSize, IMPL_CEILING, IMPL_PRIMLAB};
use super::targets::fastest;
use serde::{Deserialize, Serialize};

/// The op whose variants the study compares.
pub const OP: &str = "float_reduce_sum_f32";
/// One atomicAdd per input element into one float.
pub const PER_ELEMENT: &str = "atomic_per_element";
/// One atomicAdd per block.
pub const PER_BLOCK: &str = "atomic_per_block";
/// Partials per block, then a one-block kernel (no atomics).
pub const TWO_PASS: &str = "two_pass";
/// Elements per block of the per-block variant when its record does not say
/// (`FLOAT_TILE_ITEMS`, 256 threads x 16).
pub const DEFAULT_ELEMENTS_PER_BLOCK: u64 = 4096;

/// One size of the study.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrossoverRow {
    /// Elements.
    pub n: usize,
    /// Median of one atomic per element, us.
    pub per_element_us: Option<f64>,
    /// Median of one atomic per block, us.
    pub per_block_us: Option<f64>,
    /// Median of two-pass, us.
    pub two_pass_us: Option<f64>,
    /// Atomics the per-block variant issues (its record's `params.atomics`,
    /// else n / 4096 rounded up).
    pub per_block_atomics: u64,
    /// The read ceiling's median at this size (same logical bytes, 4n), us.
    pub read_ceiling_us: Option<f64>,
}

/// The study's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrossoverStudy {
    /// One row per measured size, ascending.
    pub rows: Vec<CrossoverRow>,
    /// The smallest n from which one atomic per block is faster than one
    /// per element at that size and every larger measured size.
    pub block_wins_from: Option<usize>,
    /// Sentences derived from the numbers.
    pub conclusion: Vec<String>,
}

fn median_of<'a>(
    records: &'a [BenchRecord],
    implementation: &str,
    op: &str,
    variant: &str,
    n: usize,
) -> Option<&'a BenchRecord> {
    records.iter().find(|r| {
        r.implementation == implementation
            && r.op == op
            && r.variant == variant
            && r.n == n
            && r.shape.is_none()
            && r.timing_mode == super::record::TimingMode::Cold
    })
}

/// Builds the study from a run's records; `None` when no record of the three variants exists.
pub fn analyse(records: &[BenchRecord]) -> Option<CrossoverStudy> {
    let mut sizes: Vec<usize> = records
        .iter()
        .filter(|r| {
            r.implementation == IMPL_PRIMLAB
                && r.op == OP
                && [PER_ELEMENT, PER_BLOCK, TWO_PASS].contains(&r.variant.as_str())
        })
        .map(|r| r.n)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    if sizes.is_empty() {
        return None;
    }
    let rows: Vec<CrossoverRow> = sizes
        .iter()
        .map(|&n| {
            let get = |variant| median_of(records, IMPL_PRIMLAB, OP, variant, n);
            let atomics = get(PER_BLOCK)
                .and_then(|r| r.params.get("atomics").and_then(serde_json::Value::as_u64))
                .unwrap_or_else(|| (n as u64).div_ceil(DEFAULT_ELEMENTS_PER_BLOCK));
            CrossoverRow {
                n,
                per_element_us: get(PER_ELEMENT).and_then(BenchRecord::timed_median),
                per_block_us: get(PER_BLOCK).and_then(BenchRecord::timed_median),
                two_pass_us: get(TWO_PASS).and_then(BenchRecord::timed_median),
                per_block_atomics: atomics,
                read_ceiling_us: fastest(records, IMPL_CEILING, READ_OP, BenchSize::Elements(n))
                    .and_then(BenchRecord::timed_median),
            }
        })
        .collect();
    let block_wins_from = crossover_point(&rows);
    let conclusion = conclude(&rows, block_wins_from);
    Some(CrossoverStudy { rows, block_wins_from, conclusion })
}

/// The smallest n where per-block beats per-element there and at every larger size measured.
fn crossover_point(rows: &[CrossoverRow]) -> Option<usize> {
    let both: Vec<(usize, bool)> =
        rows.iter().filter_map(|r| Some((r.n, r.per_block_us? < r.per_element_us?))).collect();
    let mut from = None;
    for &(n, wins) in both.iter().rev() {
        if !wins {
            break;
        }
        from = Some(n);
    }
    from
}

fn gbps(n: usize, us: f64) -> f64 {
    4.0 * n as f64 / (us * 1e3)
}

/// The conclusion, sentence by sentence, from the rows.
fn conclude(rows: &[CrossoverRow], from: Option<usize>) -> Vec<String> {
    let mut out = Vec::new();
    let both: Vec<&CrossoverRow> =
        rows.iter().filter(|r| r.per_element_us.is_some() && r.per_block_us.is_some()).collect();
    match from {
        Some(n0) => {
            let Some(at) = rows.iter().find(|r| r.n == n0) else { return out };
            let (pe, pb) = (at.per_element_us.unwrap_or(f64::NAN), at.per_block_us.unwrap_or(f64::NAN));
            let below = both.iter().rev().find(|r| r.n < n0);
            let mut sentence = format!(
                "Block aggregation wins from n = {} on: one atomic per block takes {pb:.1} us there against {pe:.1} us \
                 for one atomic per element ({:.2}x faster)",
                size_label(n0 as u64),
                pe / pb
            );
            match below {
                Some(b) => sentence.push_str(&format!(
                    "; at {} per-element still takes {:.1} us against {:.1} us.",
                    size_label(b.n as u64),
                    b.per_element_us.unwrap_or(f64::NAN),
                    b.per_block_us.unwrap_or(f64::NAN)
                )),
                None => sentence.push_str(", the smallest size measured."),
            }
            out.push(sentence);
        }
        None if !both.is_empty() => out.push(format!(
            "One atomic per block did not stay faster than one atomic per element up to {} in this run.",
            size_label(both[both.len() - 1].n as u64)
        )),
        None => out.push("The per-element and per-block variants were not both measured at any size.".into()),
    }

    // Per-element scaling between the two largest sizes measured.
    let per_element: Vec<(usize, f64)> = rows.iter().filter_map(|r| Some((r.n, r.per_element_us?))).collect();
    let mut slope_ns = None;
    if let [.., (n1, t1), (n2, t2)] = per_element.as_slice() {
        let (n1, t1, n2, t2) = (*n1 as f64, *t1, *n2 as f64, *t2);
        let exponent = (t2 / t1).ln() / (n2 / n1).ln();
        let slope = (t2 - t1) * 1e3 / (n2 - n1);
        if exponent >= 0.8 && slope > 0.0 {
            slope_ns = Some(slope);
            out.push(format!(
                "Per-element time grows about linearly with n: x{:.2} for x{:.0} more elements from {} to {} \
                 (exponent {exponent:.2}), {slope:.3} ns per added element, about {:.2} G atomic adds per second. \
                 Every element's atomicAdd targets the same float, so the L2 slice that owns that address applies \
                 them one after another and their number, n, sets the time.",
                t2 / t1,
                n2 / n1,
                size_label(n1 as u64),
                size_label(n2 as u64),
                1.0 / slope
            ));
        } else {
            out.push(format!(
                "Per-element time grows sublinearly from {} to {} (x{:.2} for x{:.0} elements, exponent {exponent:.2}): \
                 in this range its serialized atomics do not yet dominate.",
                size_label(n1 as u64),
                size_label(n2 as u64),
                t2 / t1,
                n2 / n1
            ));
        }
    }

    // Per-block at the largest size: its atomics priced at the per-element rate, and the read ceiling.
    if let Some(last) = rows.iter().rev().find(|r| r.per_block_us.is_some()) {
        let t = last.per_block_us.unwrap_or(f64::NAN);
        let mut sentence = format!(
            "At {} one atomic per block issues {} atomics (one per {} elements) and takes {t:.1} us ({:.0} GB/s)",
            size_label(last.n as u64),
            last.per_block_atomics,
            (last.n as u64).div_ceil(last.per_block_atomics.max(1)),
            gbps(last.n, t)
        );
        if let Some(read) = last.read_ceiling_us {
            sentence.push_str(&format!(", {:.0} % of the read ceiling's rate in this run", read / t * 100.0));
        }
        if let Some(slope) = slope_ns {
            let atomics_us = last.per_block_atomics as f64 * slope / 1e3;
            sentence.push_str(&format!(
                "; serialized at the per-element rate its atomics would take about {atomics_us:.1} us, {:.0} % of its time, \
                 so {}",
                atomics_us / t * 100.0,
                if atomics_us < 0.5 * t {
                    "reading the input, not the atomics, bounds it."
                } else {
                    "its atomics are a large part of its time."
                }
            ));
        } else {
            sentence.push('.');
        }
        out.push(sentence);
        if let Some(two) = last.two_pass_us {
            out.push(format!(
                "Two-pass (per-block partials, then a one-block kernel: two launches, no atomics) takes {two:.1} us at {}, \
                 {:.2}x the per-block time.",
                size_label(last.n as u64),
                two / t
            ));
        }
    }

    // The smallest size: launch-bound or not, judged against the read ceiling.
    if let Some(first) = rows.first() {
        let cells: Vec<String> =
            [("per-element", first.per_element_us), ("per-block", first.per_block_us), ("two-pass", first.two_pass_us)]
                .iter()
                .filter_map(|(name, t)| t.map(|t| format!("{name} {t:.1} us")))
                .collect();
        if !cells.is_empty() {
            let read = first
                .read_ceiling_us
                .map(|r| format!(" (the read-only ceiling kernel: {r:.1} us)"))
                .unwrap_or_default();
            out.push(format!(
                "At {} ({} bytes) the times are {}{read}: a single launch's fixed cost dominates there.",
                size_label(first.n as u64),
                4 * first.n,
                cells.join(", ")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(variant: &str, n: usize, us: f64) -> BenchRecord {
        let (implementation, op) = if variant == READ_OP { (IMPL_CEILING, READ_OP) } else { (IMPL_PRIMLAB, OP) };
        BenchRecord {
            dtype: "f32".into(),
            gbps: Some(gbps(n, us)),
            params: serde_json::json!({}),
            ..BenchRecord::synthetic(implementation, "float_reduce", op, variant, n, us, 4 * n as u64)
        }
    }

    /// A synthetic run: per-element at 0.5 ns/element plus 4 us launch, per-block and
    /// two-pass bandwidth-bound near 4 TB/s.
    pub fn synthetic() -> Vec<BenchRecord> {
        let mut out = Vec::new();
        for k in (10..=28).step_by(2) {
            let n = 1usize << k;
            out.push(rec(PER_ELEMENT, n, 4.0 + 0.5e-3 * n as f64));
            out.push(rec(PER_BLOCK, n, 5.0 + n as f64 * 4.0 / 4.0e6));
            out.push(rec(TWO_PASS, n, 7.0 + n as f64 * 4.0 / 4.0e6));
            out.push(rec(READ_OP, n, 4.5 + n as f64 * 4.0 / 4.2e6));
        }
        out
    }

    #[test]
    fn the_crossover_and_the_linear_growth_are_found() {
        let study = analyse(&synthetic()).unwrap();
        assert_eq!(study.rows.len(), 10);
        // 4 + 0.5e-3 n > 5 + n / 1e6 from n ~ 2^11: the first measured win is 2^12.
        assert_eq!(study.block_wins_from, Some(1 << 12));
        let text = study.conclusion.join("\n");
        assert!(text.contains("wins from n = 2^12"), "{text}");
        assert!(text.contains("grows about linearly"), "{text}");
        assert!(text.contains("0.500 ns per added element"), "{text}");
        assert!(text.contains("65536 atomics (one per 4096 elements)"), "{text}");
        assert!(text.contains("reading the input, not the atomics, bounds it"), "{text}");
    }

    #[test]
    fn no_records_no_study_and_a_loss_is_said_plainly() {
        assert!(analyse(&[]).is_none());
        let records = vec![rec(PER_ELEMENT, 1024, 3.0), rec(PER_BLOCK, 1024, 4.0)];
        let study = analyse(&records).unwrap();
        assert_eq!(study.block_wins_from, None);
        assert!(study.conclusion[0].contains("did not stay faster"));
    }
}
