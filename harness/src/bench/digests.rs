//! Which primitives' sources a build was built from: a digest per primitive
//! and one of the shared code, over the files of the verdict hash's scope
//! ([`crate::verdict_hash::scope`]), so that `bench ab` times only the
//! primitives whose sources differ between two builds.
//!
//! Rules relied on:
//! - A file belongs to a primitive by its name, as the registry names it
//!   ([`Primitive::name`] and the stems of [`Primitive::families`]' files):
//!   the project repeats one name per primitive in every layer (`scan` is
//!   `kernels/cuda/scan.cu`, `kernels/src/scan.rs`, `model/src/scan.rs`,
//!   `harness/src/sweep/gpu/scan.rs`), so a file whose stem is that name, or
//!   starts with it and `_` (`scan_tests.rs`, `topk_sample.rs`; the longest
//!   name wins), is that primitive's. Every other file in scope is shared.
//! - A primitive's digest also covers every primitive its own files name: a
//!   token (a run of letters, digits and `_`) equal to the stem of another
//!   primitive's file (`arg_reduce::`, `#include "scan.cu"`, a prose
//!   mention) or starting with its name in CamelCase (`ScanPlan`), followed
//!   to the closure. Naming errs towards timing more, never less. A shared
//!   file that routes one primitive's code into another's is not followed:
//!   it is shared, and any change to it times everything.
//! - A build vouches for digests only of a tree whose verdict hash is its
//!   own ([`for_this_build`]): the hash covers every file in scope, so the
//!   same hash means the same files.

use crate::registry::Primitive;
use crate::verdict_hash::{scope, VERDICT_HASH};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Version of the digest document.
pub const DIGESTS_SCHEMA: u32 = 1;

/// The digests of one tree: what `harness bench --digests` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Digests {
    /// [`DIGESTS_SCHEMA`].
    pub schema: u32,
    /// The verdict hash of the tree (the build's own when it vouches for them).
    pub verdict_hash: String,
    /// SHA-256 of the shared files (those no one primitive owns).
    pub shared: String,
    /// SHA-256 per primitive name of its files and those of every primitive they name.
    pub primitives: BTreeMap<String, String>,
}

/// The names that mark a file as `p`'s: its own and its kernel families' file stems.
fn names_of(p: Primitive) -> Vec<&'static str> {
    let mut names = vec![p.name()];
    for family in p.families() {
        let stem = family.file().split('.').next().unwrap_or("");
        if !names.contains(&stem) {
            names.push(stem);
        }
    }
    names
}

/// The stem of the last component of `relative` (`scan` of `kernels/cuda/scan.cu`).
fn stem(relative: &str) -> &str {
    let file = relative.rsplit('/').next().unwrap_or(relative);
    file.split('.').next().unwrap_or(file)
}

/// The primitive that owns the file at `relative`, if exactly one does: the
/// one with the longest name that its stem equals or starts with (then `_`).
pub fn owner(relative: &str) -> Option<Primitive> {
    let stem = stem(relative);
    let matches = |name: &str| stem == name || stem.strip_prefix(name).is_some_and(|rest| rest.starts_with('_'));
    let mut best: Option<(usize, Primitive)> = None;
    let mut tie = false;
    for p in Primitive::ALL {
        for name in names_of(p).into_iter().filter(|n| matches(n)) {
            match best {
                Some((len, q)) if len == name.len() && q != p => tie = true,
                Some((len, _)) if len >= name.len() => {}
                _ => {
                    best = Some((name.len(), p));
                    tie = false;
                }
            }
        }
    }
    if tie {
        None
    } else {
        best.map(|(_, p)| p)
    }
}

/// `snake_case` as `CamelCase` (`arg_reduce` -> `ArgReduce`).
fn camel(snake: &str) -> String {
    snake
        .split('_')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or(String::new(), |c| c.to_ascii_uppercase().to_string() + chars.as_str())
        })
        .collect()
}

/// The tokens of `text`: maximal runs of ASCII letters, digits and `_`.
fn tokens(text: &str) -> BTreeSet<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|t| !t.is_empty()).collect()
}

/// The primitives each primitive's own files name (itself left out).
fn named_by(files: &[(String, Vec<u8>)], owners: &[Option<Primitive>]) -> BTreeMap<Primitive, BTreeSet<Primitive>> {
    let mut stems: BTreeMap<Primitive, BTreeSet<String>> = BTreeMap::new();
    for ((path, _), owner) in files.iter().zip(owners) {
        if let Some(p) = owner {
            stems.entry(*p).or_default().insert(stem(path).to_string());
        }
    }
    let mut named: BTreeMap<Primitive, BTreeSet<Primitive>> = BTreeMap::new();
    for ((_, bytes), owner) in files.iter().zip(owners) {
        let Some(p) = owner else { continue };
        let text = String::from_utf8_lossy(bytes);
        let found = tokens(&text);
        for q in Primitive::ALL.into_iter().filter(|q| q != p) {
            let camels: Vec<String> = names_of(q).iter().map(|n| camel(n)).collect();
            let by_stem = stems.get(&q).is_some_and(|s| s.iter().any(|s| found.contains(s.as_str())));
            let by_type = found.iter().any(|t| camels.iter().any(|c| t.starts_with(c.as_str())));
            if by_stem || by_type || names_of(q).iter().any(|n| found.contains(n)) {
                named.entry(*p).or_default().insert(q);
            }
        }
    }
    named
}

/// `p` and every primitive it names, followed to the closure.
fn closure(p: Primitive, named: &BTreeMap<Primitive, BTreeSet<Primitive>>) -> BTreeSet<Primitive> {
    let mut seen = BTreeSet::from([p]);
    let mut todo = vec![p];
    while let Some(q) = todo.pop() {
        for r in named.get(&q).into_iter().flatten() {
            if seen.insert(*r) {
                todo.push(*r);
            }
        }
    }
    seen
}

/// SHA-256 (hex) over (path, length, bytes) of `files`, as the verdict hash does.
fn digest<'a>(files: impl Iterator<Item = &'a (String, Vec<u8>)>) -> String {
    let mut hasher = Sha256::new();
    for (path, bytes) in files {
        hasher.update((path.len() as u64).to_le_bytes());
        hasher.update(path.as_bytes());
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    }
    hasher.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The digests of `files` (relative path, bytes; in scope, sorted), for a
/// tree of verdict hash `verdict_hash`.
pub fn of_files(files: &[(String, Vec<u8>)], verdict_hash: &str) -> Digests {
    let owners: Vec<Option<Primitive>> = files.iter().map(|(path, _)| owner(path)).collect();
    let named = named_by(files, &owners);
    let shared = digest(files.iter().zip(&owners).filter(|(_, o)| o.is_none()).map(|(f, _)| f));
    let primitives = Primitive::ALL
        .into_iter()
        .map(|p| {
            let covered = closure(p, &named);
            let own = files.iter().zip(&owners).filter(|(_, o)| o.is_some_and(|o| covered.contains(&o)));
            (p.name().to_string(), digest(own.map(|(f, _)| f)))
        })
        .collect();
    Digests { schema: DIGESTS_SCHEMA, verdict_hash: verdict_hash.to_string(), shared, primitives }
}

/// The digests of the workspace at `root` (its verdict hash included).
pub fn of_tree(root: &Path) -> Result<Digests, String> {
    let (hash, paths) = scope::verdict_hash_of(root)?;
    let mut files = Vec::with_capacity(paths.len());
    for path in paths {
        let bytes = std::fs::read(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        let relative = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        files.push((relative, bytes));
    }
    Ok(of_files(&files, &hash))
}

/// The file beside a binary that holds its digests (`harness.digests.json`
/// beside `harness`), written by `make gate` from the tree it was built from.
pub fn beside(binary: &Path) -> PathBuf {
    let mut name = binary.file_name().unwrap_or_default().to_os_string();
    name.push(".digests.json");
    binary.with_file_name(name)
}

/// The digests of the sources this build was built from, from the first
/// place that vouches for them by carrying this build's verdict hash: the
/// file [`beside`] the binary, the workspace it was built in, or the
/// current folder. An error saying where it looked otherwise.
pub fn for_this_build() -> Result<Digests, String> {
    let mut looked = Vec::new();
    if let Ok(exe) = std::env::current_exe() {
        let file = beside(&exe);
        match std::fs::read_to_string(&file).map(|t| serde_json::from_str::<Digests>(&t)) {
            Ok(Ok(d)) if d.verdict_hash == VERDICT_HASH => return Ok(d),
            Ok(Ok(_)) => looked.push(format!("{} (digests of other sources)", file.display())),
            Ok(Err(e)) => looked.push(format!("{} ({e})", file.display())),
            Err(_) => looked.push(format!("{} (absent)", file.display())),
        }
    }
    let built_in = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for root in [built_in, PathBuf::from(".")] {
        match of_tree(&root) {
            Ok(d) if d.verdict_hash == VERDICT_HASH => return Ok(d),
            Ok(_) => looked.push(format!("{} (other sources)", root.display())),
            Err(e) => looked.push(format!("{} ({e})", root.display())),
        }
    }
    Err(format!(
        "this build (verdict hash {VERDICT_HASH}) finds no copy of its sources to vouch for: looked at {}",
        looked.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_belong_to_the_primitive_the_registry_names() {
        for (path, owner_name) in [
            ("kernels/cuda/scan.cu", Some("scan")),
            ("kernels/src/scan_tests.rs", Some("scan")),
            ("kernels/src/segmented_reduce.rs", Some("segmented_reduce")),
            ("model/src/reduce.rs", Some("reduce")),
            ("harness/src/sweep/gpu/topk_sample.rs", Some("topk")),
            ("kernels/cuda/exact_segmented_sum.cu", Some("exact_sum")),
            ("kernels/src/softmax_tolerance.rs", Some("softmax")),
            ("kernels/cuda/common/block_reduce.cuh", None),
            ("kernels/src/launch.rs", None),
            ("harness/src/registry/mod.rs", None),
            ("Cargo.lock", None),
        ] {
            assert_eq!(owner(path).map(Primitive::name), owner_name, "{path}");
        }
    }

    fn tree(extra: &[(&str, &str)]) -> Vec<(String, Vec<u8>)> {
        let mut files: Vec<(String, Vec<u8>)> = [
            ("Cargo.lock", "lock"),
            ("kernels/cuda/common/shuffle.cuh", "shared"),
            ("kernels/cuda/reduce.cu", "reduce kernel"),
            ("kernels/cuda/scan.cu", "scan kernel"),
            ("kernels/src/compact.rs", "use crate::ScanPlan; // flags, then a scan"),
            ("kernels/src/histogram.rs", "bins"),
        ]
        .iter()
        .chain(extra)
        .map(|(p, t)| (p.to_string(), t.as_bytes().to_vec()))
        .collect();
        files.sort();
        files
    }

    #[test]
    fn a_primitive_s_digest_follows_its_files_and_the_primitives_they_name() {
        let before = of_files(&tree(&[]), "h");
        let edited = |path: &str| {
            let files: Vec<(String, Vec<u8>)> =
                tree(&[]).into_iter().map(|(p, t)| if p == path { (p, b"edited".to_vec()) } else { (p, t) }).collect();
            of_files(&files, "h")
        };
        let changed = |after: &Digests| -> Vec<String> {
            before.primitives.iter().filter(|(k, v)| after.primitives[*k] != **v).map(|(k, _)| k.clone()).collect()
        };
        let reduce = edited("kernels/cuda/reduce.cu");
        assert_eq!((changed(&reduce), reduce.shared == before.shared), (vec!["reduce".to_string()], true));
        // Compaction names the scan (ScanPlan, "scan"): a scan change moves both.
        assert_eq!(changed(&edited("kernels/cuda/scan.cu")), ["compact", "scan"].map(String::from).to_vec());
        // A shared header moves the shared digest only.
        let shared = edited("kernels/cuda/common/shuffle.cuh");
        assert!(changed(&shared).is_empty() && shared.shared != before.shared);
        assert_eq!(before.primitives.len(), Primitive::ALL.len());
        assert_eq!(before.verdict_hash, "h");
    }

    #[test]
    fn the_digests_of_this_checkout_are_vouched_for_by_the_build() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let digests = of_tree(&root).expect("the workspace is readable");
        assert_eq!(digests.verdict_hash, crate::verdict_hash::of_tree(&root).unwrap().0);
        assert_eq!(beside(Path::new("/a/harness")), Path::new("/a/harness.digests.json"));
    }
}
