//! `harness receipts status`: which gated receipts the checkout's sources
//! have made stale, read from the receipts alone, at once and without a GPU
//! (the catalogues are recomputed by `receipts check`, not here), and the
//! one command that remakes exactly those on the GPU machine.

use super::gate::GATED;
use super::Receipt;
use crate::verdict_hash::{seed_for, SEEDED};
use std::path::Path;

/// Why a gated receipt must be remade, or that it need not.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Freshness {
    /// A full, passing run of these sources at the seed they derive.
    Fresh,
    /// It must be remade, for this reason.
    Stale(String),
}

/// One gated receipt's status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiptStatus {
    /// "sweep", "sanitize" or "mutants".
    pub kind: &'static str,
    /// Its file under the receipt folder.
    pub file: &'static str,
    /// Whether it must be remade.
    pub freshness: Freshness,
}

/// The status of every gated receipt in `dir` for sources of verdict hash
/// `current`. A receipt is fresh when it is a full run of exactly these
/// sources, at the seed they derive, that recorded no failure; anything
/// else (missing, unreadable, another layout, a partial or failed run) is
/// stale, with the reason.
pub fn status(dir: &Path, current: &str) -> Vec<ReceiptStatus> {
    GATED
        .iter()
        .map(|&(kind, file)| {
            let freshness = match Receipt::load(&dir.join(file)) {
                Err(e) => Freshness::Stale(format!("missing or unreadable ({e:#})")),
                Ok(receipt) => freshness_of(&receipt, kind, current),
            };
            ReceiptStatus { kind, file, freshness }
        })
        .collect()
}

fn freshness_of(receipt: &Receipt, kind: &str, current: &str) -> Freshness {
    let seed = super::coverage::seed_of(receipt.details.get("seed"));
    let stale = |why: String| Freshness::Stale(why);
    if receipt.kind != kind {
        stale(format!("holds a '{}' receipt", receipt.kind))
    } else if receipt.schema != super::SCHEMA {
        stale(format!("receipt layout {} (now {})", receipt.schema, super::SCHEMA))
    } else if receipt.source_hash != current {
        stale(format!("made from sources {}", short(&receipt.source_hash)))
    } else if receipt.coverage != "full" {
        stale(format!("made by a partial run ({})", receipt.coverage))
    } else if SEEDED.contains(&kind) && seed != Some(seed_for(kind, current)) {
        stale(format!(
            "made at seed {}, not the one these sources derive",
            seed.map_or("none".into(), |s| format!("{s:#x}"))
        ))
    } else if receipt.tally.failed > 0 {
        stale(format!("records {} failed check(s)", receipt.tally.failed))
    } else {
        Freshness::Fresh
    }
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

/// The kinds among `statuses` that must be remade, in gate order.
pub fn stale_kinds(statuses: &[ReceiptStatus]) -> Vec<&'static str> {
    statuses.iter().filter(|s| s.freshness != Freshness::Fresh).map(|s| s.kind).collect()
}

/// The report `harness receipts status` prints.
pub fn describe(statuses: &[ReceiptStatus], current: &str) -> String {
    let mut out = format!("receipts: sources {}\n", short(current));
    for s in statuses {
        let word = match &s.freshness {
            Freshness::Fresh => "fresh".to_string(),
            Freshness::Stale(why) => format!("STALE: {why}"),
        };
        out.push_str(&format!("  receipts/{:<14} {word}\n", s.file));
    }
    let stale = stale_kinds(statuses);
    if stale.is_empty() {
        out.push_str("receipts: nothing is stale; `harness receipts check` proves them against the catalogues\n");
    } else {
        out.push_str(&format!(
            "receipts: {} of {} stale; on the GPU machine (binary built here: make build-release), \
             `scripts/gpu_run.sh proof` remakes exactly these ({}), then commit receipts/\n",
            stale.len(),
            statuses.len(),
            stale.join(" ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::receipts::{Coverage, MachineInfo, Tally};

    fn receipt(kind: &str, hash: &str, seed: u64) -> Receipt {
        let details = serde_json::json!({"seed": format!("{seed:#x}")});
        let mut r = Receipt::new(kind, MachineInfo::default(), Tally { passed: 1, failed: 0, skipped: 0 }, details)
            .with_coverage(&Coverage::Full);
        r.source_hash = hash.to_string();
        r
    }

    #[test]
    fn fresh_only_for_a_full_passing_run_of_these_sources_at_their_seed() {
        let dir = crate::test_dir::fresh_temp_dir("receipts-status");
        let current = "a".repeat(64);
        receipt("sweep", &current, seed_for("sweep", &current)).save(&dir.join("sweep.json")).unwrap();
        receipt("sanitize", &"b".repeat(64), seed_for("sanitize", &"b".repeat(64)))
            .save(&dir.join("sanitize.json"))
            .unwrap();
        let statuses = status(&dir, &current);
        assert_eq!(statuses[0].freshness, Freshness::Fresh);
        assert!(matches!(&statuses[1].freshness, Freshness::Stale(why) if why.contains("made from sources bbbb")));
        assert!(matches!(&statuses[2].freshness, Freshness::Stale(why) if why.contains("missing")));
        assert_eq!(stale_kinds(&statuses), vec!["sanitize", "mutants"]);
        let text = describe(&statuses, &current);
        assert!(text.contains("scripts/gpu_run.sh proof") && text.contains("(sanitize mutants)"), "{text}");
    }

    #[test]
    fn a_partial_failed_or_wrongly_seeded_run_is_stale() {
        let current = "c".repeat(64);
        let good = receipt("mutants", &current, seed_for("mutants", &current));
        assert_eq!(freshness_of(&good, "mutants", &current), Freshness::Fresh);
        let partial = good.clone().with_coverage(&Coverage::Partial("--id 3".into()));
        assert!(matches!(freshness_of(&partial, "mutants", &current), Freshness::Stale(w) if w.contains("partial")));
        let mut failed = good.clone();
        failed.tally.failed = 2;
        assert!(matches!(freshness_of(&failed, "mutants", &current), Freshness::Stale(w) if w.contains("2 failed")));
        let reseeded = receipt("mutants", &current, 5);
        assert!(matches!(freshness_of(&reseeded, "mutants", &current), Freshness::Stale(w) if w.contains("seed 0x5")));
        let text = describe(&status(Path::new("/nonexistent"), &current), &current);
        assert!(text.contains("3 of 3 stale"), "{text}");
    }
}
