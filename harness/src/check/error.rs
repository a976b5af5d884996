//! Why a manifest cannot be checked: each error names the field and what to change.

use std::path::PathBuf;

/// A manifest problem, found before any GPU work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestError {
    /// The manifest or a file it names cannot be read.
    #[error("{}: cannot be read: {reason}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
    /// The manifest is not valid TOML or lacks a field.
    #[error("{}: {message}", path.display())]
    Toml {
        /// The manifest.
        path: PathBuf,
        /// The TOML parser's message (with line and column).
        message: String,
    },
    /// `primitive` is not in the registry.
    #[error("unknown primitive '{name}': choose from {known}")]
    UnknownPrimitive {
        /// What the manifest says.
        name: String,
        /// The registry's names.
        known: String,
    },
    /// `contract` is not one of the primitive's.
    #[error("contract: {message}")]
    UnknownContract {
        /// Which contracts exist.
        message: String,
    },
    /// `[module]` does not name exactly one of `cuda`, `ptx`, `cubin`.
    #[error("[module]: name exactly one of cuda = \"file.cu\", ptx = \"file.ptx\" or cubin = \"file.cubin\" (found {found})")]
    Module {
        /// What it names.
        found: String,
    },
    /// NVRTC rejected the CUDA source.
    #[error("{}: NVRTC failed to compile it for {arch}:\n{log}", path.display())]
    Compile {
        /// The source.
        path: PathBuf,
        /// The virtual architecture.
        arch: String,
        /// NVRTC's log.
        log: String,
    },
    /// NVRTC cannot be loaded, so the CUDA source cannot be compiled here.
    #[error("{}: cannot be compiled here: {reason}", path.display())]
    NoCompiler {
        /// The source.
        path: PathBuf,
        /// Why NVRTC is unavailable.
        reason: String,
    },
    /// A launch names a kernel the module does not hold.
    #[error("launch {launch}: entry point '{kernel}' is not in {module} (its entry points: {found})")]
    MissingEntry {
        /// 1-based launch number.
        launch: usize,
        /// The kernel named.
        kernel: String,
        /// The module file.
        module: String,
        /// The entries it holds.
        found: String,
    },
    /// An expression does not parse.
    #[error("{field} = \"{expr}\": does not parse {at}")]
    Parse {
        /// Which field, e.g. `launch 1 grid`.
        field: String,
        /// The text.
        expr: String,
        /// Where and why (`at column C: ...`).
        at: String,
    },
    /// A geometry expression is zero, negative or too large at some n.
    #[error("{field} = \"{expr}\" is {value} at n = {n}: {rule}")]
    Geometry {
        /// Which field.
        field: String,
        /// The text.
        expr: String,
        /// Its value (or why it has none).
        value: String,
        /// The size where it fails.
        n: usize,
        /// The rule it breaks.
        rule: String,
    },
    /// A role of the contract is passed to no kernel.
    #[error("no launch passes the contract's buffer '{role}' (the {primitive} {contract} contract has {roles}); add it to a launch's args")]
    MissingRole {
        /// The role.
        role: String,
        /// Primitive.
        primitive: String,
        /// Contract.
        contract: String,
        /// Every role.
        roles: String,
    },
    /// An argument is neither a contract role or parameter, a scratch buffer nor `n`/`n32`.
    #[error("launch {launch} ({kernel}): argument '{arg}' is not a buffer or parameter of the contract, a scratch buffer or n (known: {known})")]
    UnknownArgument {
        /// 1-based launch number.
        launch: usize,
        /// The kernel.
        kernel: String,
        /// The argument.
        arg: String,
        /// What may be named.
        known: String,
    },
    /// The argument list's length differs from the entry point's parameters.
    #[error("launch {launch} ({kernel}): {given} arguments are listed but the entry point takes {takes}")]
    ArgumentCount {
        /// 1-based launch number.
        launch: usize,
        /// The kernel.
        kernel: String,
        /// Arguments in the manifest.
        given: usize,
        /// Parameters in the module.
        takes: usize,
    },
    /// An argument's size differs from the entry point's parameter at its position.
    #[error("launch {launch} ({kernel}): argument {position} '{arg}' is {what}, {bytes} bytes, but the entry point's parameter {position} takes {declared} bytes")]
    ArgumentSize {
        /// 1-based launch number.
        launch: usize,
        /// The kernel.
        kernel: String,
        /// 1-based argument position.
        position: usize,
        /// The argument named.
        arg: String,
        /// What it passes, in words.
        what: String,
        /// Bytes it passes.
        bytes: usize,
        /// Bytes the PTX declares.
        declared: usize,
    },
    /// A launch passes n as 32 bits at a size past `u32::MAX`.
    #[error("an argument n32 cannot hold n = {n}; pass n (64-bit) instead")]
    NarrowN {
        /// The size.
        n: usize,
    },
    /// Something else in the manifest is inconsistent (duplicate names, no launch, bad type).
    #[error("{0}")]
    Invalid(String),
}
