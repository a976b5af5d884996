//! `harness cases export`: every raw case of a primitive (one contract or
//! all) as `.npy` inputs and expected outputs, plus `index.json`.

use super::index::{CaseEntry, FileEntry, Index, ParamEntry, FORMAT};
use super::npy;
use crate::progress::Progress;
use crate::registry::Primitive;
use crate::sweep::raw::{self, Buffer, Contract};
use crate::sweep::{sizes, SweepPlan};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

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

/// One past 2^28: the first size past the sweep's largest (also `check`'s
/// largest default size).
pub const PAST_2_28: usize = (1 << 28) + 1;

/// The sizes of `--deep`: the sweep's boundary, random and large sizes (2^24
/// and 2^28), then [`PAST_2_28`], as a default `check` visits them.
pub fn deep_sizes(seed: u64) -> Vec<usize> {
    let mut all = sizes::sweep_sizes(&[], seed, false, true);
    if !all.contains(&PAST_2_28) {
        all.push(PAST_2_28);
    }
    all
}

/// Host bytes one element of a case may take at most while it is generated,
/// encoded and compared (inputs, the model's wide outputs, their `.npy`
/// copies): sizes are refused before any allocation when they cannot fit.
pub const HOST_BYTES_PER_ELEMENT: usize = 64;

/// The largest size of any primitive: every primitive documents `n <= u32::MAX`.
pub const MAX_SIZE: usize = u32::MAX as usize;

/// Rejects sizes no export or verification can hold: zero, past
/// [`MAX_SIZE`], or more than the host's memory at [`HOST_BYTES_PER_ELEMENT`].
pub fn check_host_sizes(sizes: &[usize]) -> Result<()> {
    crate::sweep::check_sizes(sizes)?;
    if let Some(&n) = sizes.iter().find(|&&n| n > MAX_SIZE) {
        bail!("--sizes: n = {n} is more than the {MAX_SIZE} elements (u32::MAX) any primitive takes");
    }
    let memory = host_memory();
    if let Some(&n) = sizes.iter().find(|&&n| n.saturating_mul(HOST_BYTES_PER_ELEMENT) > memory) {
        bail!(
            "--sizes: n = {n} needs up to {:.1} GB of host memory ({HOST_BYTES_PER_ELEMENT} bytes per element), \
             more than this machine's {:.1} GB",
            n.saturating_mul(HOST_BYTES_PER_ELEMENT) as f64 / 1e9,
            memory as f64 / 1e9
        );
    }
    Ok(())
}

/// Bytes of host memory (`MemTotal` of `/proc/meminfo`; 16 GiB when unreadable).
fn host_memory() -> usize {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let kib = text
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok());
    kib.map_or(16 << 30, |k| k.saturating_mul(1024))
}

/// The contracts an export of `primitive` covers: `name` (a registry contract,
/// a named rule or a typed contract, [`super::rules`]), or the typed contract
/// `request` composes (its kind from `name`); with `framework`, as that
/// framework states it ([`super::rules::contract_for`], said on stderr); or
/// all of the registry's.
pub fn contracts_of(
    primitive: Primitive,
    name: Option<&str>,
    request: Option<&super::typed::Request>,
    framework: Option<&str>,
) -> Result<Vec<&'static Contract>> {
    match (name, request) {
        (Some(_), _) | (_, Some(_)) => {
            let (contract, note) =
                super::rules::contract_requested(primitive, name, request, framework).map_err(anyhow::Error::msg)?;
            if let Some(note) = note {
                eprintln!("cases export: {note}");
            }
            Ok(vec![contract])
        }
        (None, None) if framework.is_some() => {
            bail!("--framework states a contract's rule: name the contract too")
        }
        (None, None) => {
            let all = raw::contracts(primitive);
            if all.is_empty() {
                bail!("{}", raw::contract(primitive, "").err().unwrap_or_default());
            }
            Ok(all.iter().collect())
        }
    }
}

/// Every case of an export, in file order (case `c{i:05}` is the i-th): for each
/// contract, the raw catalogue's cases and then its edge-value families'
/// (and a named rule's own, [`super::rules::with_catalogue`]: the list `check`
/// runs). `cases verify` regenerates the same list.
pub fn specs(
    primitive: Primitive,
    contracts: &[&'static Contract],
    plan: &SweepPlan,
) -> Vec<(&'static Contract, raw::RawSpec)> {
    contracts
        .iter()
        .flat_map(|c| super::rules::with_catalogue(plan, primitive, c, LABEL).into_iter().map(move |s| (*c, s)))
        .collect()
}

/// The name of the i-th case, the stem of its files.
pub fn case_name(i: usize) -> String {
    format!("c{i:05}")
}

/// Whether `name` is one an export writes: `index.json` or
/// `c<digits>.<role>[.expected].npy`, a plain name in the folder (no
/// separator, no `..`, not absolute). An index naming anything else is not
/// ours, and nothing it names is deleted.
pub fn is_export_name(name: &str) -> bool {
    if name == "index.json" {
        return true;
    }
    let Some(stem) = name.strip_prefix('c').and_then(|n| n.strip_suffix(".npy")) else { return false };
    let mut parts = stem.split('.');
    let digits = parts.next().unwrap_or("");
    let rest: Vec<&str> = parts.collect();
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && matches!(rest.len(), 1 | 2)
        && rest.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'))
        && (rest.len() == 1 || rest[1] == "expected")
}

/// The index entry of case `i` with its generated `data`.
pub fn entry_of(i: usize, contract: &Contract, spec: &raw::RawSpec, data: &raw::RawCase) -> Result<CaseEntry, String> {
    let name = case_name(i);
    let file = |role: &str| format!("{name}.{role}.npy");
    let inputs = contract.inputs.iter().zip(&data.inputs).map(|(b, a)| entry(b, file(b.role), a.count())).collect();
    let mut expected = Vec::new();
    let mut outputs = Vec::new();
    for (k, (buffer, array)) in contract.outputs.iter().zip(&data.expected).enumerate() {
        let model_type = Buffer { dtype: contract.expected_dtype(k), ..*buffer };
        expected.push(entry(&model_type, format!("{name}.{}.expected.npy", buffer.role), array.count()));
        outputs.push(entry(buffer, file(buffer.role), array.count()));
    }
    let mut params = Vec::new();
    for (p, v) in contract.params.iter().zip(&data.params) {
        if v.dtype() != p.dtype {
            return Err(format!(
                "{}: parameter {} is {} where the contract says {}",
                spec.id.key(),
                p.name,
                v.dtype().name(),
                p.dtype.name()
            ));
        }
        params.push(ParamEntry { name: p.name.into(), dtype: p.dtype.name().into(), value: v.to_json() });
    }
    Ok(CaseEntry {
        case: name,
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
        tolerance: super::rules::tolerance_name(contract).into(),
        rule: super::rules::rule_words(contract).into(),
    })
}

/// Files this export has written so far: removed if it stops before its
/// index is written (an error, a panic), so no orphan is left behind.
struct Written {
    dir: PathBuf,
    names: Vec<String>,
    done: bool,
}

impl Drop for Written {
    fn drop(&mut self) {
        if !self.done {
            for name in &self.names {
                let _ = std::fs::remove_file(self.dir.join(name));
            }
        }
    }
}

impl Written {
    fn write(&mut self, name: String, array: &raw::Array) -> Result<()> {
        self.names.push(name.clone());
        npy::write(&self.dir.join(&name), array).map_err(anyhow::Error::msg)
    }
}

/// What `harness cases export` writes (its options, as plain values).
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// The primitive whose cases to write.
    pub primitive: crate::registry::Primitive,
    /// One contract (every contract of the primitive when `None`).
    pub contract: Option<String>,
    /// A typed contract's parts ([`super::typed::Request`]; its kind from `contract`).
    pub request: Option<super::typed::Request>,
    /// The framework whose rule over `contract` to check (`torch`, `numpy`).
    pub framework: Option<String>,
    /// Sizes (default: the sweep's boundary and random sizes up to 2^20).
    pub sizes: Vec<usize>,
    /// Seed of the inputs (a fresh one, printed, when `None`).
    pub seed: Option<u64>,
    /// Without `sizes`: the large sizes too ([`deep_sizes`]).
    pub deep: bool,
    /// The folder to write (created; it must be empty or hold an earlier export).
    pub dir: std::path::PathBuf,
}

/// Runs `cases export`; Ok(false) when no case was written.
pub fn run(args: &ExportOptions) -> Result<bool> {
    if args.deep && !args.sizes.is_empty() {
        bail!("--deep chooses the sizes itself; give it or --sizes, not both");
    }
    let contracts =
        contracts_of(args.primitive, args.contract.as_deref(), args.request.as_ref(), args.framework.as_deref())?;
    let seed = args.seed.unwrap_or_else(crate::sweep::fresh_seed);
    let sizes = match (args.sizes.is_empty(), args.deep) {
        (false, _) => args.sizes.clone(),
        (true, true) => deep_sizes(seed),
        (true, false) => default_sizes(seed),
    };
    check_host_sizes(&sizes)?;
    let plan = SweepPlan::of_primitive(args.primitive, &sizes, seed);
    prepare_dir(&args.dir)?;
    // A row contract's kind is the primitive its user named (`layernorm`), never the row shape's.
    let primitive = super::typed::rows::shown(args.primitive, &contracts);
    println!("cases export: {primitive} seed {seed:#x} sizes {sizes:?} into {}", args.dir.display());
    let specs = specs(args.primitive, &contracts, &plan);
    let progress = Progress::new("cases export", specs.len() as u64);
    let mut written = Written { dir: args.dir.clone(), names: Vec::new(), done: false };
    let mut cases = Vec::with_capacity(specs.len());
    for (i, (contract, spec)) in specs.iter().enumerate() {
        let data = (spec.make)().map_err(|e| anyhow::anyhow!("{}: generating the case: {e}", spec.id.key()))?;
        let case = entry_of(i, contract, spec, &data).map_err(anyhow::Error::msg)?;
        for (file, array) in case.inputs.iter().zip(&data.inputs).chain(case.expected.iter().zip(&data.expected)) {
            written.write(file.file.clone(), array)?;
        }
        cases.push(case);
        progress.step(&spec.id.marker());
    }
    progress.finish();
    let index = Index {
        format: FORMAT.into(),
        primitive,
        contracts: contracts.iter().map(|c| c.name.to_string()).collect(),
        seed: format!("{seed:#x}"),
        sizes,
        cases,
    };
    let path = args.dir.join("index.json");
    crate::receipts::write_atomic(&path, serde_json::to_string_pretty(&index)?.as_bytes())?;
    written.done = true;
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

/// The names an earlier export's `index.json` in `dir` records, each
/// checked to be one an export writes ([`is_export_name`]); none when
/// there is no index. An index naming anything else is refused.
fn earlier_export(dir: &Path) -> Result<Vec<String>> {
    let path = dir.join("index.json");
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(Vec::new());
    }
    let text = crate::bounded::read_text(&path, crate::bounded::JSON_LIMIT).map_err(anyhow::Error::msg)?;
    let old: Index = serde_json::from_str(&text)
        .with_context(|| format!("{} holds an index.json that is not an export's", dir.display()))?;
    let mut names = vec!["index.json".to_string()];
    for c in old.cases {
        names.extend(c.inputs.into_iter().chain(c.expected).chain(c.outputs).map(|f| f.file));
    }
    if let Some(bad) = names.iter().find(|n| !is_export_name(n)) {
        bail!(
            "cases export: {}/index.json names '{bad}', which no export writes (a path outside the folder or \
             another name); nothing was deleted: choose an empty or new folder",
            dir.display()
        );
    }
    Ok(names)
}

/// Creates `dir`, or clears an earlier export in it: only plain files its
/// own index names are deleted; a folder holding anything else (a foreign
/// file, a link, a sub-folder) is refused and left as it is.
fn prepare_dir(dir: &Path) -> Result<()> {
    match std::fs::symlink_metadata(dir) {
        Err(_) => return std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display())),
        Ok(m) if !m.is_dir() => bail!("cases export: {} is not a folder", dir.display()),
        Ok(_) => {}
    }
    let ours = earlier_export(dir)?;
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    let mut foreign = Vec::new();
    for e in entries {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        if !ours.contains(&name) || !e.file_type()?.is_file() {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_of_an_export_that_stops_early_are_removed() {
        let dir = crate::test_dir::fresh_temp_dir("cases-orphans");
        {
            let mut written = Written { dir: dir.clone(), names: Vec::new(), done: false };
            written.write(case_name(0) + ".in.npy", &raw::Array::Int32(vec![1])).unwrap();
            written.write(case_name(1) + ".in.npy", &raw::Array::Int32(vec![2])).unwrap();
            assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
        }
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "an error path left orphans");
        let mut kept = Written { dir: dir.clone(), names: Vec::new(), done: false };
        kept.write(case_name(0) + ".in.npy", &raw::Array::Int32(vec![1])).unwrap();
        kept.done = true;
        drop(kept);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    }
}
