//! `harness cases export`: every raw case of a primitive (one contract or
//! all) as `.npy` inputs and expected outputs, plus `index.json`.

use super::args::ExportArgs;
use super::index::{CaseEntry, FileEntry, Index, ParamEntry, FORMAT};
use super::npy;
use crate::progress::Progress;
use crate::sweep::raw::{self, Buffer, Contract};
use crate::sweep::{sizes, SweepPlan};
use anyhow::{bail, Context, Result};
use std::path::Path;

/// The variant label of exported cases in failure lines.
pub const LABEL: &str = "user";

/// The largest default size: the sweep's boundary and random sizes up to
/// here (files of larger sizes are written only when `--sizes` asks).
pub const DEFAULT_MAX: usize = 1 << 20;

/// The default sizes for `seed`.
pub fn default_sizes(seed: u64) -> Vec<usize> {
    let mut all = sizes::sweep_sizes(&[], seed, false, false);
    all.retain(|&n| n <= DEFAULT_MAX);
    all
}

/// Runs `cases export`; Ok(false) when no case was written.
pub fn run(args: &ExportArgs) -> Result<bool> {
    crate::sweep::check_sizes(&args.sizes, None)?;
    let contracts: Vec<&Contract> = match &args.contract {
        Some(name) => vec![raw::contract(args.primitive, name).map_err(anyhow::Error::msg)?],
        None => {
            let all = raw::contracts(args.primitive);
            if all.is_empty() {
                bail!("{}", raw::contract(args.primitive, "").err().unwrap_or_default());
            }
            all.iter().collect()
        }
    };
    let seed = args.seed.unwrap_or_else(crate::sweep::fresh_seed);
    let sizes = if args.sizes.is_empty() { default_sizes(seed) } else { args.sizes.clone() };
    let plan = SweepPlan::of_primitive(args.primitive, &sizes, seed);
    prepare_dir(&args.dir)?;
    println!("cases export: {} seed {seed:#x} sizes {sizes:?} into {}", args.primitive, args.dir.display());
    let specs: Vec<(&Contract, raw::RawSpec)> = contracts
        .iter()
        .flat_map(|c| raw::catalogue(&plan, args.primitive, c, LABEL).into_iter().map(move |s| (*c, s)))
        .collect();
    let progress = Progress::new("cases export", specs.len() as u64);
    let mut cases = Vec::with_capacity(specs.len());
    for (i, (contract, spec)) in specs.iter().enumerate() {
        let name = format!("c{i:05}");
        let data = (spec.make)().map_err(|e| anyhow::anyhow!("{}: generating the case: {e}", spec.id.key()))?;
        let file = |role: &str| format!("{name}.{role}.npy");
        let mut inputs = Vec::new();
        for (buffer, array) in contract.inputs.iter().zip(&data.inputs) {
            npy::write(&args.dir.join(file(buffer.role)), array).map_err(anyhow::Error::msg)?;
            inputs.push(entry(buffer, file(buffer.role), array.count()));
        }
        let mut expected = Vec::new();
        let mut outputs = Vec::new();
        for (k, (buffer, array)) in contract.outputs.iter().zip(&data.expected).enumerate() {
            let expected_file = format!("{name}.{}.expected.npy", buffer.role);
            npy::write(&args.dir.join(&expected_file), array).map_err(anyhow::Error::msg)?;
            let model_type = Buffer { dtype: contract.expected_dtype(k), ..*buffer };
            expected.push(entry(&model_type, expected_file, array.count()));
            outputs.push(entry(buffer, file(buffer.role), array.count()));
        }
        let mut params = Vec::new();
        for (p, v) in contract.params.iter().zip(&data.params) {
            if v.dtype() != p.dtype {
                bail!(
                    "{}: parameter {} is {} where the contract says {}",
                    spec.id.key(),
                    p.name,
                    v.dtype().name(),
                    p.dtype.name()
                );
            }
            params.push(ParamEntry { name: p.name.into(), dtype: p.dtype.name().into(), value: v.to_json() });
        }
        cases.push(CaseEntry {
            case: name.clone(),
            primitive: spec.id.primitive.clone(),
            contract: contract.name.to_string(),
            variant: spec.id.variant.clone(),
            n: spec.id.n,
            size: spec.id.size.clone(),
            family: spec.id.family.clone(),
            seed: format!("{:#x}", spec.id.seed),
            inputs,
            params,
            expected,
            outputs,
            tolerance: contract.rule.tolerance().into(),
            rule: contract.rule().into(),
        });
        progress.step(&spec.id.marker());
    }
    progress.finish();
    let index = Index {
        format: FORMAT.into(),
        primitive: args.primitive.name().into(),
        seed: format!("{seed:#x}"),
        sizes,
        cases,
    };
    let path = args.dir.join("index.json");
    std::fs::write(&path, serde_json::to_string_pretty(&index)?)
        .with_context(|| format!("writing {}", path.display()))?;
    println!(
        "cases export: {} cases written to {} (each program writes <case>.{}.npy; then run `harness cases verify {}`)",
        index.cases.len(),
        path.display(),
        contracts[0].outputs.iter().map(|b| b.role).collect::<Vec<_>>().join(".npy and <case>."),
        args.dir.display()
    );
    Ok(!index.cases.is_empty())
}

fn entry(buffer: &Buffer, file: String, len: usize) -> FileEntry {
    FileEntry { role: buffer.role.into(), file, dtype: buffer.dtype.name().into(), len }
}

/// Creates `dir`, or clears an earlier export in it; refuses a folder that
/// holds anything an export did not write (it never deletes foreign files).
fn prepare_dir(dir: &Path) -> Result<()> {
    if !dir.exists() {
        return std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()));
    }
    let ours: Vec<String> = match std::fs::read_to_string(dir.join("index.json")) {
        Ok(text) => {
            let old: Index = serde_json::from_str(&text)
                .with_context(|| format!("{} holds an index.json that is not an export's", dir.display()))?;
            let mut names = vec!["index.json".to_string()];
            for c in old.cases {
                names.extend(c.inputs.into_iter().map(|f| f.file));
                names.extend(c.expected.into_iter().map(|f| f.file));
                names.extend(c.outputs.into_iter().map(|f| f.file));
            }
            names
        }
        Err(_) => Vec::new(),
    };
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    let mut foreign = Vec::new();
    for e in entries {
        let name = e?.file_name().to_string_lossy().into_owned();
        if !ours.contains(&name) {
            foreign.push(name);
        }
    }
    if !foreign.is_empty() {
        foreign.sort();
        bail!(
            "cases export: {} holds files an export did not write ({}); choose an empty or new folder",
            dir.display(),
            foreign.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
        );
    }
    for name in ours {
        match std::fs::remove_file(dir.join(&name)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("removing the earlier export's {name}")),
        }
    }
    Ok(())
}
