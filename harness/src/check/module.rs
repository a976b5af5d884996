//! The user's module: CUDA C++ (compiled to PTX by NVRTC with our `common/`
//! headers), PTX, or a cubin; and the entry points it holds with their
//! parameters' sizes (read from the PTX `.entry` lines; a cubin's entries
//! come from its ELF symbol table, whose parameters are not read).

use super::error::ManifestError;
use std::path::{Path, PathBuf};

/// A loaded module, ready for `cuModuleLoadData`.
#[derive(Debug, Clone)]
pub enum Image {
    /// PTX text (from the user or from NVRTC).
    Ptx(String),
    /// Machine code.
    Cubin(Vec<u8>),
}

/// One entry point: its name and parameters (None when unknown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The symbol name.
    pub name: String,
    /// Each parameter's size in bytes (None for a declaration whose size is
    /// not read), when the format states the parameters.
    pub params: Option<Vec<Option<usize>>>,
}

/// The bytes of one PTX parameter declaration (`.param .u64 a`,
/// `.param .align 8 .b8 s[16]`): its first sized type times its array length.
fn param_bytes(decl: &str) -> Option<usize> {
    let size =
        decl.split_whitespace().find_map(|t| match t.get(2..).filter(|_| t.len() > 2 && t.starts_with('.')) {
            Some("64") => Some(8),
            Some("32") => Some(4),
            Some("16") => Some(2),
            Some("8") => Some(1),
            _ => None,
        })?;
    let count = match (decl.find('['), decl.find(']')) {
        (Some(open), Some(close)) if open < close => decl[open + 1..close].trim().parse().ok()?,
        _ => 1,
    };
    Some(size * count)
}

/// A module with its entries.
#[derive(Debug, Clone)]
pub struct Module {
    /// The file it came from.
    pub path: PathBuf,
    /// The `-D` defines a CUDA source was compiled with (empty otherwise).
    pub defines: Vec<String>,
    /// What to load.
    pub image: Image,
    /// Its entry points.
    pub entries: Vec<Entry>,
}

/// Which kind of file the manifest names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// CUDA C++ source.
    Cuda,
    /// PTX text.
    Ptx,
    /// A cubin (ELF).
    Cubin,
}

/// The most bytes of a module file (CUDA, PTX or cubin) read: a bound, so
/// that a device or FIFO named as a module is refused, not read forever.
pub const MODULE_LIMIT: u64 = 256 << 20;

/// Reads (and for CUDA compiles, for virtual architecture `arch` with
/// `defines` as `-D` options) the module at `path`.
pub fn load(kind: Kind, path: &Path, arch: &str, defines: &[String]) -> Result<Module, ManifestError> {
    let read_error = |reason: String| ManifestError::Read { path: path.to_path_buf(), reason };
    let image = match kind {
        Kind::Cubin => Image::Cubin(crate::bounded::read(path, MODULE_LIMIT).map_err(read_error)?),
        Kind::Ptx => Image::Ptx(crate::bounded::read_text(path, MODULE_LIMIT).map_err(read_error)?),
        Kind::Cuda => {
            let text = crate::bounded::read_text(path, MODULE_LIMIT).map_err(read_error)?;
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "kernel.cu".into());
            let compiled =
                kernels::user_source::compile_user_ptx(&name, &text, arch, defines).map_err(|e| match e {
                    kernels::GpuError::NvrtcUnavailable { reason } => {
                        ManifestError::NoCompiler { path: path.to_path_buf(), reason }
                    }
                    kernels::GpuError::Compile { log, .. } => {
                        ManifestError::Compile { path: path.to_path_buf(), arch: arch.to_string(), log }
                    }
                    other => ManifestError::Compile {
                        path: path.to_path_buf(),
                        arch: arch.to_string(),
                        log: other.to_string(),
                    },
                })?;
            Image::Ptx(compiled.ptx)
        }
    };
    let entries = match &image {
        Image::Ptx(text) => ptx_entries(text),
        Image::Cubin(bytes) => elf_functions(bytes)
            .map_err(|reason| ManifestError::Read {
                path: path.to_path_buf(),
                reason: format!("not a cubin: {reason}"),
            })?
            .into_iter()
            .map(|name| Entry { name, params: None })
            .collect(),
    };
    Ok(Module { path: path.to_path_buf(), defines: defines.to_vec(), image, entries })
}

/// The `.entry name(.param ..., .param ...)` declarations of PTX text.
pub fn ptx_entries(text: &str) -> Vec<Entry> {
    let mut entries = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(".entry ") {
        let after = &rest[at + ".entry ".len()..];
        let name: String =
            after.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$').collect();
        let params = after.find('(').zip(after.find(')')).filter(|(open, close)| open < close).map(|(open, close)| {
            after[open + 1..close].split(',').filter(|d| d.contains(".param")).map(param_bytes).collect()
        });
        // An entry without a parameter list takes none.
        let params = params.or(Some(Vec::new()));
        if !name.is_empty() {
            entries.push(Entry { name, params });
        }
        rest = after;
    }
    entries
}

/// The names of the function symbols of an ELF64 little-endian file.
pub fn elf_functions(bytes: &[u8]) -> Result<Vec<String>, String> {
    let u16_at = |o: usize| bytes.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as usize);
    let u32_at = |o: usize| bytes.get(o..o + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
    let u64_at = |o: usize| {
        bytes.get(o..o + 8).map(|b| u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]) as usize)
    };
    if bytes.get(..4) != Some(b"\x7fELF") || bytes.get(4) != Some(&2) || bytes.get(5) != Some(&1) {
        return Err("no 64-bit little-endian ELF header".into());
    }
    let cut = || "the ELF file is cut short".to_string();
    let (shoff, shentsize, shnum) =
        (u64_at(0x28).ok_or_else(cut)?, u16_at(0x3a).ok_or_else(cut)?, u16_at(0x3c).ok_or_else(cut)?);
    let section = |i: usize| -> Option<(usize, usize, usize, usize, usize)> {
        let base = shoff.checked_add(i.checked_mul(shentsize)?)?;
        // (type, offset, size, link, entsize)
        Some((
            u32_at(base + 4)?,
            u64_at(base + 0x18)?,
            u64_at(base + 0x20)?,
            u32_at(base + 0x28)?,
            u64_at(base + 0x38)?,
        ))
    };
    let mut names = Vec::new();
    for i in 0..shnum {
        let (kind, offset, size, link, entsize) = section(i).ok_or_else(cut)?;
        // SHT_SYMTAB = 2; symbols of type STT_FUNC = 2.
        if kind != 2 || entsize == 0 {
            continue;
        }
        let (_, str_offset, str_size, _, _) = section(link).ok_or_else(cut)?;
        for s in 0..size / entsize {
            let sym = offset + s * entsize;
            let (name, info) = (u32_at(sym).ok_or_else(cut)?, *bytes.get(sym + 4).ok_or_else(cut)?);
            if info & 0xf != 2 || name >= str_size {
                continue;
            }
            let start = str_offset + name;
            let text = bytes.get(start..str_offset + str_size).ok_or_else(cut)?;
            let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
            names.push(String::from_utf8_lossy(&text[..end]).into_owned());
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_entries_and_their_parameter_counts() {
        let ptx = ".visible .entry scan_tiles(\n\t.param .u64 .ptr .global .align 4 a,\n\t.param .f32 b,\n\t\
                   .param .align 8 .b8 c[16]\n)\n{ ret; }\n\
                   .visible .entry done()\n{ ret; }\n.func helper(.param .u32 x) { ret; }\n";
        assert_eq!(
            ptx_entries(ptx),
            vec![
                Entry { name: "scan_tiles".into(), params: Some(vec![Some(8), Some(4), Some(16)]) },
                Entry { name: "done".into(), params: Some(vec![]) }
            ]
        );
    }

    #[test]
    fn a_file_that_is_no_elf_is_refused() {
        assert!(elf_functions(b"not elf at all").is_err());
    }
}
