//! `harness receipts`: `check` (the gate of `make verify`), `status`, `seed`
//! and `hash`, over the receipts library (`crate::receipts`).

use clap::{Args, Subcommand};
use std::path::PathBuf;

/// Options of `harness receipts`.
#[derive(Debug, Args)]
pub struct ReceiptsArgs {
    /// What to do with them.
    #[command(subcommand)]
    pub action: ReceiptsAction,
}

/// Receipt actions.
#[derive(Debug, Subcommand)]
pub enum ReceiptsAction {
    /// Fail unless receipts/sweep.json, sanitize.json and mutants.json were made by full GPU
    /// runs of the current sources and hold a passing verdict for every case of the catalogue
    /// the sources define (recomputed here on the CPU: ids, input and expected-output digests).
    /// The gate `make verify` runs.
    Check {
        /// Receipt directory.
        #[arg(long, default_value = "receipts")]
        dir: PathBuf,
        /// Workspace root whose sources the receipts must match.
        #[arg(long, default_value = ".")]
        root: PathBuf,
        /// Write a JUnit XML report (one test case per gated receipt) to this path.
        #[arg(long, value_name = "PATH")]
        junit: Option<PathBuf>,
    },
    /// Say which gated receipts (sweep, sanitize, mutants) the checkout's sources made stale,
    /// from the receipts alone (no GPU, no catalogue recomputed), and the command that remakes
    /// exactly those. Exit 0: nothing is stale; 1: something is; 2: it cannot tell (no sources
    /// at --root, or this binary was built from other sources than the checkout's).
    Status {
        /// Receipt directory.
        #[arg(long, default_value = "receipts")]
        dir: PathBuf,
        /// Workspace root whose sources the receipts must match.
        #[arg(long, default_value = ".")]
        root: PathBuf,
        /// Print only the stale kinds, one per line (for scripts).
        #[arg(long)]
        names: bool,
    },
    /// Print the seed a gated run of this binary's sources must use (`sweep`, `sanitize` or
    /// `mutants`): derived from the verdict hash, so that a receipt re-keyed to other sources
    /// names the wrong inputs. Each of the three uses it by default.
    Seed {
        /// The run: sweep, sanitize or mutants.
        #[arg(value_parser = ["sweep", "sanitize", "mutants"])]
        purpose: String,
    },
    /// Print the verdict hash of the workspace (and of this binary's build), and the files it covers.
    Hash {
        /// Workspace root.
        #[arg(long, default_value = ".")]
        root: PathBuf,
        /// Also list every file the hash covers.
        #[arg(long)]
        files: bool,
    },
}

/// `harness receipts`.
pub fn run(args: ReceiptsArgs) -> anyhow::Result<bool> {
    match args.action {
        ReceiptsAction::Hash { root, files } => {
            let (hash, scoped) = crate::verdict_hash::scope::verdict_hash_of(&root).map_err(anyhow::Error::msg)?;
            println!("{hash}");
            if hash != crate::verdict_hash::VERDICT_HASH {
                eprintln!(
                    "note: this binary was built from other sources (verdict hash {}); rebuild it",
                    &crate::verdict_hash::VERDICT_HASH[..12]
                );
            }
            if files {
                for path in scoped {
                    println!("{}", path.strip_prefix(&root).unwrap_or(&path).display());
                }
            }
            Ok(true)
        }
        ReceiptsAction::Seed { purpose } => {
            println!("{:#x}", crate::verdict_hash::seed_for(&purpose, crate::verdict_hash::VERDICT_HASH));
            Ok(true)
        }
        ReceiptsAction::Check { dir, root, junit } => receipts_check(&dir, &root, junit.as_deref()),
        ReceiptsAction::Status { dir, root, names } => receipts_status(&dir, &root, names),
    }
}

/// `harness receipts status`: which gated receipts are stale (exit 1 when
/// any is), and the command that remakes them. A binary built from other
/// sources than the checkout's cannot remake them: exit 2.
fn receipts_status(dir: &std::path::Path, root: &std::path::Path, names: bool) -> anyhow::Result<bool> {
    let (current, _) = crate::verdict_hash::of_tree(root)
        .map_err(|e| e.context("receipts status: run it from the workspace root or pass --root"))?;
    if current != crate::verdict_hash::VERDICT_HASH {
        return Err(crate::exit::CannotRun(format!(
            "receipts status: this harness was built from sources {} but {} hashes to {}: rebuild it \
             (make build-release) before remaking receipts, or they would be keyed to other sources",
            &crate::verdict_hash::VERDICT_HASH[..12],
            root.display(),
            &current[..12]
        ))
        .into());
    }
    let statuses = crate::receipts::status::status(dir, &current);
    let stale = crate::receipts::status::stale_kinds(&statuses);
    if names {
        stale.iter().for_each(|kind| println!("{kind}"));
    } else {
        print!("{}", crate::receipts::status::describe(&statuses, &current));
    }
    Ok(stale.is_empty())
}

/// `harness receipts check`: the gate of `make verify`.
fn receipts_check(
    dir: &std::path::Path,
    root: &std::path::Path,
    junit_path: Option<&std::path::Path>,
) -> anyhow::Result<bool> {
    let started = std::time::Instant::now();
    let (current, files) = crate::verdict_hash::of_tree(root)
        .map_err(|e| e.context("receipts check: run it from the workspace root or pass --root"))?;
    if current != crate::verdict_hash::VERDICT_HASH {
        eprintln!(
            "receipt gate: note: this harness was built from other sources (verdict hash {}) than {} ({}); rebuild it",
            &crate::verdict_hash::VERDICT_HASH[..12],
            root.display(),
            &current[..12]
        );
    }
    println!("receipts: recomputing the catalogues of sources {} ({files} files) on the CPU ...", &current[..12]);
    let report = crate::receipts::check_gate(dir, &current, None);
    for (kind, coverage) in &report.checked {
        println!(
            "receipts: {kind}: {} of {} required checks present, passing and matching",
            coverage.matched, coverage.required
        );
    }
    if let Some(path) = junit_path {
        crate::junit::write(path, "receipts", &crate::receipts::junit_cases(&report))?;
    }
    if report.problems.is_empty() {
        println!(
            "receipts: sweep, sanitize and mutants receipts cover the catalogues of sources {} and record no failure ({:.0} s)",
            &current[..12],
            started.elapsed().as_secs_f64()
        );
        return Ok(true);
    }
    for problem in &report.problems {
        eprintln!("receipt gate: {problem}");
    }
    eprintln!("receipt gate: to refresh: {}", crate::receipts::REFRESH_COMMAND);
    Ok(false)
}
