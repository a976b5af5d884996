//! `harness check`: the registry's case catalogue for one primitive and
//! contract (the sweep's sizes, data families and seeds, poisoned outputs,
//! the exact model) run against a user's own kernel, described by a TOML
//! manifest; optionally under the four compute-sanitizer tools and timed
//! beside our default variant and CUB. Writes a receipt and a Markdown summary.

pub mod args;
pub mod bench;
pub mod cub;
pub mod error;
pub mod expr;
pub mod extra_sizes;
pub mod launch;
pub mod manifest;
pub mod module;
pub mod report;
pub mod sanitize;
pub mod summary;

use crate::receipts::{MachineInfo, Receipt};
use crate::sanitize::parse::{CASE_MARKER, DONE_MARKER};
use crate::sweep::case::{failure_line, CaseResult, Verdict};
use crate::sweep::{raw, sizes, SweepPlan};
use anyhow::Result;
use args::CheckArgs;
use manifest::Manifest;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

/// The command that reruns one size of a check.
pub fn rerun(manifest: &Path, n: usize, seed: u64) -> String {
    format!("harness check --manifest {} --sizes {n} --seed {seed:#x}", manifest.display())
}

/// The sizes a check visits: `--sizes`, else the sweep's with one past 2^28 and one past 2^31
/// ([`extra_sizes::default_sizes`]; the sanitizer's for the child, whose parent passes the
/// sizes it chose from the launches).
pub fn visited_sizes(args: &CheckArgs, seed: u64) -> Vec<usize> {
    match (args.sizes.is_empty(), args.sanitize_child) {
        (true, true) => crate::sanitize::SANITIZE_SIZES.to_vec(),
        (true, false) => extra_sizes::default_sizes(seed),
        _ => sizes::sweep_sizes(&args.sizes, seed, false, true),
    }
}

/// Runs `harness check`: Ok(false) on any failure, when nothing was
/// checked, or when it cannot run (no GPU); a manifest error is an Err.
pub fn run(args: &CheckArgs) -> Result<bool> {
    crate::sweep::check_sizes(&args.sizes, None)?;
    let seed = args.seed.unwrap_or_else(crate::sweep::fresh_seed);
    let sizes = visited_sizes(args, seed);
    let gpu = if args.validate_only {
        Err("--validate-only was given".to_string())
    } else {
        kernels::Gpu::open(kernels::GpuOptions { ordinal: 0, mutant: 0 }).map_err(|e| match e {
            kernels::GpuError::Unavailable { reason } => reason,
            other => other.to_string(),
        })
    };
    let arch = gpu.as_ref().ok().map(|g| {
        let (major, minor) = g.info().compute_capability;
        format!("compute_{major}{minor}")
    });
    let (mut manifest, sizes, unlaunchable) = extra_sizes::load_launchable(&args.manifest, sizes, arch.as_deref())?;
    unlaunchable.iter().for_each(|line| println!("check: {line}"));
    // Under the sanitizers, scratch the manifest does not zero is left uninitialised, so
    // initcheck reports a read of scratch that no launch wrote.
    manifest.uninit_scratch = args.sanitize_child;
    println!(
        "check: {} is valid: {} {} ({}), module {}{}, {} launch(es), {} scratch buffer(s)",
        args.manifest.display(),
        manifest.primitive,
        manifest.contract.name,
        manifest.contract.summary,
        manifest.module.path.display(),
        manifest.module.defines.iter().map(|d| format!(" -D{d}")).collect::<String>(),
        manifest.launches.len(),
        manifest.scratch.len()
    );
    if args.validate_only {
        return Ok(true);
    }
    let gpu = match gpu {
        Ok(g) => g,
        Err(reason) => {
            eprintln!("check: cannot run: no GPU ({reason})");
            return Ok(false);
        }
    };
    let fitted = extra_sizes::fit_memory(&manifest, &sizes, gpu.info().total_memory);
    fitted.notes.iter().chain(&fitted.skipped).for_each(|line| println!("check: {line}"));
    let sizes = fitted.sizes;
    crate::sweep::check_sizes(&sizes, Some(gpu.info().total_memory))?;
    let loaded = launch::load(&gpu, &manifest)?;
    let plan = if args.sanitize_child {
        SweepPlan::sanitizer(manifest.primitive, &sizes, seed, &[])
    } else {
        SweepPlan::of_primitive(manifest.primitive, &sizes, seed)
    };
    if !args.sanitize_child {
        println!("check: seed {seed:#x}, sizes {sizes:?} on {} (rerun with --seed {seed:#x})", gpu.info().name);
    }
    let results = run_cases(&gpu, &manifest, &loaded, &plan, args)?;
    let failed = results.iter().filter(|r| !r.verdict.passed()).count();
    if args.sanitize_child {
        println!("{DONE_MARKER} {} cases, {failed} failed", results.len());
        return Ok(failed == 0);
    }
    let passed = results.len() - failed;
    println!("check: {passed} passed, {failed} failed of {} cases (seed {seed:#x})", results.len());
    let out = report::out_dir(args.out.as_deref(), &args.manifest);
    report::claim(&out)?;
    let sanitized = if args.sanitize { Some(sanitize::run(&manifest, seed, &out)?) } else { None };
    let timed = if args.bench { Some(bench::run(&gpu, &manifest, &loaded)) } else { None };
    let ok = failed == 0
        && passed > 0
        && sanitized.as_ref().is_none_or(|s| s.clean)
        && timed.as_ref().is_none_or(|t| t.error.is_none());
    let failures: Vec<String> = results
        .iter()
        .filter_map(|r| match &r.verdict {
            Verdict::Fail(m) => Some(failure_line(&r.id, m)),
            _ => None,
        })
        .collect();
    let tally = crate::receipts::Tally { passed: passed as u64, failed: failed as u64, skipped: 0 };
    let details = serde_json::json!({
        "manifest": args.manifest.display().to_string(),
        "name": manifest.name,
        "primitive": manifest.primitive.name(),
        "contract": manifest.contract.name,
        "rule": manifest.contract.rule(),
        "module": manifest.module.path.display().to_string(),
        "defines": manifest.module.defines,
        "seed": format!("{seed:#x}"),
        "sizes": sizes,
        "verdict": if ok { "pass" } else { "fail" },
        "failures": failures,
        "cases": results,
        "sanitize": sanitized.as_ref().map(|s| &s.json),
        "bench": timed.as_ref().map(|t| &t.json),
    });
    let receipt = out.join("receipt.json");
    Receipt::new("check", MachineInfo::collect(&gpu), tally, details).save(&receipt)?;
    let text = summary::markdown(&manifest, seed, &results, sanitized.as_ref(), timed.as_ref(), ok);
    let summary_path = report::write(&out, "summary.md", &text)?;
    println!("check: receipt {} and summary {}", receipt.display(), summary_path.display());
    if results.is_empty() {
        eprintln!("check: nothing was checked");
    }
    println!("check: {}", if ok { "PASS" } else { "FAIL" });
    Ok(ok)
}

fn run_cases(
    gpu: &kernels::Gpu,
    manifest: &Manifest,
    loaded: &launch::Loaded,
    plan: &SweepPlan,
    args: &CheckArgs,
) -> Result<Vec<CaseResult>> {
    let specs = if args.sanitize_child {
        sanitize::sanitizer_specs(manifest, &plan.sizes, plan.seed)
    } else {
        raw::catalogue(plan, manifest.primitive, manifest.contract, &manifest.name)
    };
    let progress = (!args.sanitize_child).then(|| crate::progress::Progress::new("check", specs.len() as u64));
    let mut results = Vec::with_capacity(specs.len());
    let mut shown = 0;
    let stdout = std::io::stdout();
    for spec in specs {
        if args.sanitize_child {
            let mut out = stdout.lock();
            let _ = writeln!(out, "{CASE_MARKER} {}", spec.id.marker());
            let _ = out.flush();
        }
        let started = Instant::now();
        let verdict = match (spec.make)() {
            Ok(case) => launch::run_case(gpu, manifest, loaded, &case, spec.id.n),
            Err(e) => Verdict::fail("an input", e, "generator"),
        };
        if let Verdict::Fail(m) = &verdict {
            let line = failure_line(&spec.id, m);
            if args.sanitize_child {
                let _ = writeln!(stdout.lock(), "@@primlab fail {line}");
            } else if shown < args.max_failures_shown {
                shown += 1;
                let text = format!("FAIL {line}\n     rerun: {}", rerun(&args.manifest, spec.id.n, plan.seed));
                match &progress {
                    Some(p) => p.println(&text),
                    None => println!("{text}"),
                }
            }
        }
        if let Some(p) = &progress {
            p.step(&spec.id.marker());
        }
        results.push(CaseResult::new(spec.id, verdict, started.elapsed().as_millis() as u64));
    }
    if let Some(p) = progress {
        p.finish();
    }
    Ok(results)
}

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "contract_manifest_tests.rs"]
mod contract_manifest_tests;
