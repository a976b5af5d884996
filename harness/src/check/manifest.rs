//! The check manifest (TOML) and its validation against the registry's
//! contract and the module. Relative paths resolve against the manifest's
//! folder. Geometry is validated at every size the check will visit.
//!
//! ```toml
//! name = "my_scan"               # variant label in failure lines (default "user")
//! primitive = "scan"               # or a row kind: layernorm, rmsnorm, cross_entropy
//! contract = "exclusive.i32"        # row kinds: e.g. "layernorm.bf16.bf16.affine.stats"
//! # or a typed contract (see `cases::typed`), by name or by its parts:
//! # contract = "inclusive"       # scan: inclusive or exclusive; arg_reduce: argmax or argmin
//! # op = "max"                   # sum, min, max (reduce and scan)
//! # dtype_in = "float32"         # int32, int64, bfloat16, float32, float64
//! # dtype_out = "float32"        # default: dtype_in (arg_reduce: int64)
//! # accumulator = "float32"      # float sums: default the widest of in, out and float32
//! # rtol = 1e-5                  # float sums: atol + rtol |exact| instead of the order-free bound
//! # atol = 0.0
//! # ulp = 4                      # float sums: or within 4 ulp of the exact value
//! # nan_rule = "nan_first"       # float arg_reduce: nan_first or nan_ignored (default: inputs finite);
//! #                              # float min, max: nan_propagate or nan_ignored (default: no NaN)
//! [module]
//! cuda = "scan.cu"               # or ptx = "scan.ptx", or cubin = "scan.cubin"
//! defines = ["TILE=1024"]        # CUDA only: -DNAME[=VALUE] options (default none)
//! [[scratch]]
//! name = "tile_sums"
//! dtype = "int64"
//! len = "ceil_div(n, 1024)"
//! zero = true                    # zeroed before each case (else poisoned)
//! [[launch]]
//! kernel = "scan_tiles"
//! args = ["in", "out", "tile_sums", "n"]   # buffers, parameters (bins, rows, ...), scratch, n
//! grid = "ceil_div(n, 1024)"
//! block = "256"
//! shared = "0"                   # dynamic shared bytes (default 0)
//! zero = []                      # scratch buffers zeroed before this launch
//! ```

use super::error::ManifestError;
use super::expr::{self, Expr};
use super::module::{self, Kind, Module};
use crate::cases::typed::rows::Named;
use crate::registry::Primitive;
use crate::sweep::raw::{Contract, Dtype};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    name: Option<String>,
    primitive: String,
    contract: Option<String>,
    /// A typed contract's parts (`cases::typed`): any of them makes the contract typed.
    op: Option<String>,
    dtype_in: Option<String>,
    dtype_out: Option<String>,
    accumulator: Option<String>,
    rtol: Option<f64>,
    atol: Option<f64>,
    ulp: Option<u32>,
    nan_rule: Option<String>,
    /// The framework whose rule over `contract` to check (`torch`, `numpy`).
    framework: Option<String>,
    module: RawModule,
    #[serde(default)]
    scratch: Vec<RawScratch>,
    #[serde(default)]
    launch: Vec<RawLaunch>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModule {
    cuda: Option<String>,
    ptx: Option<String>,
    cubin: Option<String>,
    arch: Option<String>,
    #[serde(default)]
    defines: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScratch {
    name: String,
    dtype: String,
    len: String,
    #[serde(default)]
    zero: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLaunch {
    kernel: String,
    args: Vec<String>,
    grid: String,
    block: String,
    shared: Option<String>,
    #[serde(default)]
    zero: Vec<String>,
}

/// A kernel argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// The contract's input buffer of this index.
    Input(usize),
    /// The contract's output buffer of this index.
    Output(usize),
    /// The contract's scalar parameter of this index, by value.
    Param(usize),
    /// The scratch buffer of this index.
    Scratch(usize),
    /// n as a 64-bit unsigned integer (`unsigned long long`, `size_t`).
    N,
    /// n as a 32-bit unsigned integer (`unsigned int`; sizes must fit).
    N32,
}

/// A scratch buffer.
#[derive(Debug, Clone)]
pub struct Scratch {
    /// Its name in `args`.
    pub name: String,
    /// Element type.
    pub dtype: Dtype,
    /// Elements, as a function of n.
    pub len: Expr,
    /// Zeroed before each case (else every byte is the poison byte).
    pub zero: bool,
}

/// One kernel launch of the sequence.
#[derive(Debug, Clone)]
pub struct Launch {
    /// Entry point.
    pub kernel: String,
    /// Arguments in order.
    pub args: Vec<Arg>,
    /// Blocks.
    pub grid: Expr,
    /// Threads per block.
    pub block: Expr,
    /// Dynamic shared memory bytes.
    pub shared: Expr,
    /// Scratch buffers (indices) zeroed just before this launch.
    pub zero: Vec<usize>,
}

/// A validated manifest.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// The manifest file.
    pub path: PathBuf,
    /// Variant label in failure lines.
    pub name: String,
    /// The primitive.
    pub primitive: Primitive,
    /// Its contract.
    pub contract: &'static Contract,
    /// The module with its entries.
    pub module: Module,
    /// Scratch buffers.
    pub scratch: Vec<Scratch>,
    /// The launch sequence.
    pub launches: Vec<Launch>,
}

impl Manifest {
    /// The primitive as the user reads it: a row contract's kind
    /// (`layernorm`), else the registry's name.
    pub fn primitive_name(&self) -> String {
        crate::cases::typed::rows::shown(self.primitive, &[self.contract])
    }
}

/// The virtual architecture CUDA sources are compiled for when neither the
/// manifest nor a GPU says (the H200's).
pub const DEFAULT_ARCH: &str = "compute_90";

/// The largest block a kernel may be launched with.
pub const MAX_BLOCK: i128 = 1024;
/// The rules of the three geometry fields, as errors state them.
pub const GRID_RULE: &str = "a grid must have 1 to 2^31-1 blocks";
/// See [`GRID_RULE`].
pub const BLOCK_RULE: &str = "a block must have 1 to 1024 threads";
/// See [`GRID_RULE`].
pub const SHARED_RULE: &str = "dynamic shared memory must be 0 to 227 KiB";
/// The most blocks a grid's x dimension may have.
pub const MAX_GRID: i128 = i32::MAX as i128;
/// The most dynamic shared memory a block may ask for (227 KiB, the H200's opt-in limit).
pub const MAX_SHARED: i128 = 232_448;

/// Defines are for CUDA sources only, each `NAME` or `NAME=VALUE` with NAME
/// a C identifier outside `PRIMLAB_` (the prefix of our own tuning policy and
/// mutant defines, which the user must not override).
fn check_defines(kind: Kind, defines: &[String]) -> Result<(), ManifestError> {
    if kind != Kind::Cuda && !defines.is_empty() {
        return Err(ManifestError::Invalid("module defines apply to a CUDA source only (cuda = ...)".into()));
    }
    for define in defines {
        let name = define.split('=').next().unwrap_or_default();
        let identifier = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !identifier || name.starts_with("PRIMLAB_") {
            return Err(ManifestError::Invalid(format!(
                "module define '{define}': want NAME or NAME=VALUE, NAME a C identifier not starting with PRIMLAB_"
            )));
        }
    }
    Ok(())
}

/// The typed contract's parts the manifest gives, if it gives any.
fn typed_request(raw: &RawManifest) -> Option<crate::cases::typed::Request> {
    crate::cases::typed::Request {
        kind: None,
        op: raw.op.clone(),
        dtype_in: raw.dtype_in.clone(),
        dtype_out: raw.dtype_out.clone(),
        accumulator: raw.accumulator.clone(),
        rtol: raw.rtol,
        atol: raw.atol,
        ulp: raw.ulp,
        nan: raw.nan_rule.clone(),
    }
    .given()
}

/// Reads and validates the manifest at `path` for the sizes `sizes`;
/// `gpu_arch` is the GPU's virtual architecture when one is present.
pub fn load(path: &Path, sizes: &[usize], gpu_arch: Option<&str>) -> Result<Manifest, ManifestError> {
    let text = crate::bounded::read_text(path, crate::bounded::MANIFEST_LIMIT)
        .map_err(|reason| ManifestError::Read { path: path.to_path_buf(), reason })?;
    let raw: RawManifest = toml::from_str(&text).map_err(|e| ManifestError::Toml {
        path: path.to_path_buf(),
        message: e.to_string().trim().replace('\n', " "),
    })?;
    // A row kind (`layernorm`, ...) names the registry's row-shaped primitive and its own contracts.
    let named = Named::parse(&raw.primitive)
        .ok_or_else(|| ManifestError::UnknownPrimitive { name: raw.primitive.clone(), known: Named::names() })?;
    let primitive = named.primitive;
    let request = typed_request(&raw);
    let contract_name =
        named.contract(raw.contract.as_deref()).map_err(|message| ManifestError::UnknownContract { message })?;
    let (contract, _) = crate::cases::rules::contract_requested(
        primitive,
        contract_name.as_deref(),
        request.as_ref(),
        raw.framework.as_deref(),
    )
    .map_err(|message| ManifestError::UnknownContract { message })?;
    // The geometry must fit every case's n (some catalogues add sizes or visit shapes of their own).
    let sizes = &crate::cases::rules::case_sizes(primitive, contract, sizes)[..];
    let folder = path.parent().unwrap_or(Path::new("."));
    let named: Vec<(Kind, &String)> =
        [(Kind::Cuda, &raw.module.cuda), (Kind::Ptx, &raw.module.ptx), (Kind::Cubin, &raw.module.cubin)]
            .into_iter()
            .filter_map(|(k, f)| f.as_ref().map(|f| (k, f)))
            .collect();
    let [(kind, file)] = named.as_slice() else {
        return Err(ManifestError::Module {
            found: if named.is_empty() { "none".into() } else { format!("{} files", named.len()) },
        });
    };
    let arch = raw.module.arch.as_deref().or(gpu_arch).unwrap_or(DEFAULT_ARCH);
    check_defines(*kind, &raw.module.defines)?;
    let module = module::load(*kind, &folder.join(file), arch, &raw.module.defines)?;

    let mut scratch: Vec<Scratch> = Vec::new();
    for (i, s) in raw.scratch.iter().enumerate() {
        if contract.roles().contains(&s.name.as_str())
            || contract.params.iter().any(|p| p.name == s.name)
            || s.name == "n"
            || s.name == "n32"
            || scratch.iter().any(|t| t.name == s.name)
        {
            return Err(ManifestError::Invalid(format!(
                "scratch {}: the name '{}' is taken (by the contract, n, n32 or another scratch buffer)",
                i + 1,
                s.name
            )));
        }
        let dtype = Dtype::from_name(&s.dtype).ok_or_else(|| {
            ManifestError::Invalid(format!(
                "scratch {} ({}): dtype '{}' is not one of {}",
                i + 1,
                s.name,
                s.dtype,
                Dtype::ALL.map(Dtype::name).join(", ")
            ))
        })?;
        let field = format!("scratch {} ({}) len", i + 1, s.name);
        let len = parsed(&field, &s.len)?;
        check_range(
            &field,
            &s.len,
            &len,
            sizes,
            0,
            i128::from(u32::MAX) * 1024,
            "a length must be between 0 and 2^42 elements",
        )?;
        scratch.push(Scratch { name: s.name.clone(), dtype, len, zero: s.zero });
    }

    if raw.launch.is_empty() {
        return Err(ManifestError::Invalid("the manifest has no [[launch]]: list the kernels to run, in order".into()));
    }
    let roles = contract.roles();
    let mut known: Vec<String> = roles.iter().map(|r| r.to_string()).collect();
    known.extend(contract.params.iter().map(|p| p.name.to_string()));
    known.extend(scratch.iter().map(|s| s.name.clone()));
    known.extend(["n".to_string(), "n32".to_string()]);
    let mut launches = Vec::new();
    for (i, l) in raw.launch.iter().enumerate() {
        let number = i + 1;
        let entry = module.entries.iter().find(|e| e.name == l.kernel).ok_or_else(|| ManifestError::MissingEntry {
            launch: number,
            kernel: l.kernel.clone(),
            module: module.path.display().to_string(),
            found: module.entries.iter().map(|e| e.name.as_str()).collect::<Vec<_>>().join(", "),
        })?;
        let mut args = Vec::new();
        for a in &l.args {
            args.push(argument(a, contract, &scratch).ok_or_else(|| ManifestError::UnknownArgument {
                launch: number,
                kernel: l.kernel.clone(),
                arg: a.clone(),
                known: known.join(", "),
            })?);
        }
        if let Some(takes) = entry.params.as_ref().map(Vec::len).filter(|&p| p != args.len()) {
            return Err(ManifestError::ArgumentCount {
                launch: number,
                kernel: l.kernel.clone(),
                given: args.len(),
                takes,
            });
        }
        let sizes_declared = entry.params.iter().flatten();
        for (position, ((arg, name), declared)) in args.iter().zip(&l.args).zip(sizes_declared).enumerate() {
            let (bytes, what) = passed(*arg, contract);
            if let Some(declared) = declared.filter(|&d| d != bytes) {
                return Err(ManifestError::ArgumentSize {
                    launch: number,
                    kernel: l.kernel.clone(),
                    position: position + 1,
                    arg: name.clone(),
                    what,
                    bytes,
                    declared,
                });
            }
        }
        let field = |what: &str| format!("launch {number} ({}) {what}", l.kernel);
        // The geometry may name the contract's integer parameters (a block per row).
        let names: Vec<&str> = contract.params.iter().filter(|p| p.dtype != Dtype::Float32).map(|p| p.name).collect();
        let parsed = |field: &str, text: &str| parsed_with(field, text, &names);
        let grid = parsed(&field("grid"), &l.grid)?;
        check_range(&field("grid"), &l.grid, &grid, sizes, 1, MAX_GRID, GRID_RULE)?;
        let block = parsed(&field("block"), &l.block)?;
        check_range(&field("block"), &l.block, &block, sizes, 1, MAX_BLOCK, BLOCK_RULE)?;
        let shared_text = l.shared.clone().unwrap_or_else(|| "0".into());
        let shared = parsed(&field("shared"), &shared_text)?;
        check_range(&field("shared"), &shared_text, &shared, sizes, 0, MAX_SHARED, SHARED_RULE)?;
        let mut zero = Vec::new();
        for z in &l.zero {
            zero.push(scratch.iter().position(|s| &s.name == z).ok_or_else(|| {
                ManifestError::Invalid(format!(
                    "launch {number} ({}): zero names '{z}', which is not a scratch buffer",
                    l.kernel
                ))
            })?);
        }
        launches.push(Launch { kernel: l.kernel.clone(), args, grid, block, shared, zero });
    }
    if args_use_n32(&launches) {
        if let Some(&n) = sizes.iter().find(|&&n| n > u32::MAX as usize) {
            return Err(ManifestError::NarrowN { n });
        }
    }
    for (r, role) in roles.iter().enumerate() {
        let want = if r < contract.inputs.len() { Arg::Input(r) } else { Arg::Output(r - contract.inputs.len()) };
        if !launches.iter().any(|l| l.args.contains(&want)) {
            return Err(ManifestError::MissingRole {
                role: role.to_string(),
                primitive: crate::cases::typed::rows::shown(primitive, &[contract]),
                contract: contract.name.into(),
                roles: roles.join(", "),
            });
        }
    }
    Ok(Manifest {
        path: path.to_path_buf(),
        name: raw.name.unwrap_or_else(|| "user".into()),
        primitive,
        contract,
        module,
        scratch,
        launches,
    })
}

/// The bytes an argument passes by value and what it is, in words.
fn passed(arg: Arg, contract: &Contract) -> (usize, String) {
    match arg {
        Arg::Input(_) | Arg::Output(_) | Arg::Scratch(_) => (8, "a buffer (a device pointer)".into()),
        Arg::N => (8, "n as a 64-bit integer (unsigned long long)".into()),
        Arg::N32 => (4, "n as a 32-bit integer (unsigned int)".into()),
        Arg::Param(k) => {
            let dtype = contract.params.get(k).map(|p| p.dtype).unwrap_or(Dtype::Int64);
            let c = match dtype {
                Dtype::Int32 => "int",
                Dtype::Float32 => "float",
                _ => "long long",
            };
            (dtype.size(), format!("the contract's {} parameter ({c})", dtype.name()))
        }
    }
}

fn args_use_n32(launches: &[Launch]) -> bool {
    launches.iter().any(|l| l.args.contains(&Arg::N32))
}

fn argument(name: &str, contract: &Contract, scratch: &[Scratch]) -> Option<Arg> {
    if let Some(i) = contract.inputs.iter().position(|b| b.role == name) {
        return Some(Arg::Input(i));
    }
    if let Some(k) = contract.outputs.iter().position(|b| b.role == name) {
        return Some(Arg::Output(k));
    }
    if let Some(k) = contract.params.iter().position(|p| p.name == name) {
        return Some(Arg::Param(k));
    }
    match name {
        "n" => Some(Arg::N),
        "n32" => Some(Arg::N32),
        _ => scratch.iter().position(|s| s.name == name).map(Arg::Scratch),
    }
}

fn parsed(field: &str, text: &str) -> Result<Expr, ManifestError> {
    parsed_with(field, text, &[])
}

fn parsed_with(field: &str, text: &str, names: &[&str]) -> Result<Expr, ManifestError> {
    expr::parse_with(text, names).map_err(|e| ManifestError::Parse {
        field: field.into(),
        expr: text.into(),
        at: e.to_string(),
    })
}

fn check_range(
    field: &str,
    text: &str,
    e: &Expr,
    sizes: &[usize],
    low: i128,
    high: i128,
    rule: &str,
) -> Result<(), ManifestError> {
    // An expression of the case's parameters has a value only per case: it
    // is checked against the same range before each case's launches
    // (`launch::geometry`), and a case outside it fails by name.
    if e.names_a_parameter() {
        return Ok(());
    }
    for &n in sizes {
        let value = match e.eval(n) {
            Ok(v) if (low..=high).contains(&v) => continue,
            Ok(v) => v.to_string(),
            Err(why) => format!("undefined ({why})"),
        };
        return Err(ManifestError::Geometry { field: field.into(), expr: text.into(), value, n, rule: rule.into() });
    }
    Ok(())
}

/// The value of a validated expression at n (validated at every size the
/// check visits, so the range checks above hold).
pub fn at(e: &Expr, n: usize) -> u64 {
    e.eval(n).ok().and_then(|v| u64::try_from(v).ok()).unwrap_or(0)
}
