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
//! - A primitive's digest also covers every primitive its own files use in
//!   code, followed to the closure: a path through another primitive's name
//!   or file stem (`arg_reduce::`, `crate::scan::block_scan`, `mod scan`), an
//!   `#include` of its file (`#include "scan.cu"`), or a type named after it
//!   in CamelCase (`ScanPlan`, which also covers a type re-exported at a
//!   crate's root). Rust and CUDA reach another module's code only in these
//!   ways. Comments and string literals are prose, not uses: before they
//!   were stripped, a `histogram` launch label in `topk.rs` and "a scan" in a
//!   comment tied 7 of the 10 primitives to `reduce`, so a one-kernel change
//!   timed most of the bench. A shared file that routes one primitive's code
//!   into another's is not followed: it is shared, and any change to it
//!   times everything.
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

/// `text` without its comments (`//` to the end of the line, `/* */`) and with each
/// string literal emptied (`"..."`, one line, escapes honoured): what is left is code.
/// A quote inside a character literal (`'"'`) at worst empties the rest of its line.
fn code_of(text: &str) -> String {
    let mut code = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                while chars.peek().is_some_and(|&n| n != '\n') {
                    chars.next();
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = ' ';
                for n in chars.by_ref() {
                    if last == '*' && n == '/' {
                        break;
                    }
                    last = n;
                }
                code.push(' ');
            }
            '"' => {
                let mut end = '"';
                while let Some(n) = chars.next() {
                    match n {
                        '\\' => {
                            chars.next();
                        }
                        '"' | '\n' => {
                            end = n;
                            break;
                        }
                        _ => {}
                    }
                }
                code.push_str("\"\"");
                if end == '\n' {
                    code.push('\n');
                }
            }
            _ => code.push(c),
        }
    }
    code
}

/// What a file uses of other modules in code: the names before a `::`, after `mod`,
/// the stems of its `#include`d files, and every token (for CamelCase type names).
struct Uses<'a> {
    paths: BTreeSet<String>,
    tokens: BTreeSet<&'a str>,
}

impl<'a> Uses<'a> {
    fn of(text: &str, code: &'a str) -> Uses<'a> {
        let mut paths: BTreeSet<String> = BTreeSet::new();
        for line in text.lines() {
            if let Some(target) = line.trim_start().strip_prefix("#include").and_then(|rest| rest.split('"').nth(1)) {
                paths.insert(stem(target).to_string());
            }
        }
        let words: Vec<(usize, &str)> = code
            .match_indices(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .scan(0, |start, (at, sep)| {
                let word = (*start, &code[*start..at]);
                *start = at + sep.len();
                Some(word)
            })
            .filter(|(_, w)| !w.is_empty())
            .collect();
        for (i, &(at, word)) in words.iter().enumerate() {
            if code[at + word.len()..].starts_with("::") {
                paths.insert(word.to_string());
            }
            if word == "mod" {
                if let Some(&(_, module)) = words.get(i + 1) {
                    paths.insert(module.to_string());
                }
            }
        }
        Uses { paths, tokens: tokens(code) }
    }
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
        let code = code_of(&text);
        let uses = Uses::of(&text, &code);
        for q in Primitive::ALL.into_iter().filter(|q| q != p) {
            let camels: Vec<String> = names_of(q).iter().map(|n| camel(n)).collect();
            let by_stem = stems.get(&q).is_some_and(|s| s.iter().any(|s| uses.paths.contains(s)));
            let by_name = names_of(q).iter().any(|n| uses.paths.contains(*n));
            let by_type = uses.tokens.iter().any(|t| camels.iter().any(|c| t.starts_with(c.as_str())));
            if by_stem || by_name || by_type {
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
    let (hash, files) = files_of_tree(root)?;
    Ok(of_files(&files, &hash))
}

/// Files of a tree in scope: (relative path, bytes).
type TreeFiles = Vec<(String, Vec<u8>)>;

/// The verdict hash of the workspace at `root` and its files in scope.
fn files_of_tree(root: &Path) -> Result<(String, TreeFiles), String> {
    let (hash, paths) = scope::verdict_hash_of(root)?;
    let mut files = Vec::with_capacity(paths.len());
    for path in paths {
        let bytes = std::fs::read(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        let relative = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        files.push((relative, bytes));
    }
    Ok((hash, files))
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
            // Prose and labels name no code: a comment, a string, a field.
            ("kernels/src/histogram.rs", "struct S { scan: u32 } // like a scan\nlet l = \"reduce::x\";"),
            ("kernels/src/arg_reduce.rs", "use crate::reduce::block_reduce;"),
            ("kernels/cuda/softmax.cu", "/* scan.cu */\n#include \"common/shuffle.cuh\"\n#include \"scan.cu\""),
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
        // arg_reduce uses reduce by a path: a reduce change moves both, not histogram (a
        // string and a field name it).
        let reduce = edited("kernels/cuda/reduce.cu");
        assert_eq!(
            (changed(&reduce), reduce.shared == before.shared),
            (vec!["arg_reduce".into(), "reduce".into()], true)
        );
        // Compaction uses ScanPlan and softmax includes scan.cu: a scan change moves all three,
        // not histogram (a comment and a field name it).
        assert_eq!(changed(&edited("kernels/cuda/scan.cu")), ["compact", "scan", "softmax"].map(String::from).to_vec());
        // A shared header moves the shared digest only.
        let shared = edited("kernels/cuda/common/shuffle.cuh");
        assert!(changed(&shared).is_empty() && shared.shared != before.shared);
        assert_eq!(before.primitives.len(), Primitive::ALL.len());
        assert_eq!(before.verdict_hash, "h");
    }

    /// The primitives whose digests move when one kernel file of this checkout changes:
    /// what `bench ab` times (plus a control) for such a change. `make gate-trial` plants
    /// its slowdown in float_reduce.cu because this is two primitives.
    #[test]
    fn a_one_kernel_change_in_this_checkout_times_few_primitives() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let (hash, files) = files_of_tree(&root).expect("the workspace is readable");
        let before = of_files(&files, &hash);
        let moved = |path: &str| -> Vec<String> {
            let edited: Vec<(String, Vec<u8>)> = files
                .iter()
                .map(|(p, t)| (p.clone(), if p == path { b"edited".to_vec() } else { t.clone() }))
                .collect();
            let after = of_files(&edited, &hash);
            before.primitives.iter().filter(|(k, v)| after.primitives[*k] != **v).map(|(k, _)| k.clone()).collect()
        };
        assert_eq!(moved("kernels/cuda/float_reduce.cu"), ["exact_sum", "float_reduce"]);
        assert_eq!(moved("kernels/cuda/topk.cu"), ["topk"]);
        // Since each primitive's files bear its name in every layer, two model files that were
        // shared are owned: segmented_reduce's model (`model/src/segmented_reduce.rs`, once
        // `segmented.rs`) folds each segment with reduce's, and float_reduce's fixtures
        // (`model/src/fixtures/float_reduce.rs`, once `float_sum.rs`) name `ExactSum`; so a
        // reduce change times segmented_reduce and, through it, exact_sum and float_reduce
        // (before, any change to either model file timed every primitive).
        let reduce = moved("kernels/cuda/reduce.cu");
        assert_eq!(
            reduce,
            ["arg_reduce", "exact_sum", "float_reduce", "reduce", "scan", "segmented_reduce", "softmax"]
                .map(String::from)
        );
    }

    #[test]
    fn code_is_what_is_left_without_comments_and_strings() {
        let text = "a::b(\"x::y\", '\"'); // c::d\n/* e::f\n g */ h::i \"j\\\"k::l\" m";
        let code = code_of(text);
        assert_eq!(code, "a::b(\"\", '\"\"\n  h::i \"\" m");
        let uses = Uses::of("#include \"dir/scan.cu\"\nmod topk;", "mod topk; reduce::x; y:: ::z");
        let paths: Vec<&str> = uses.paths.iter().map(String::as_str).collect();
        assert_eq!(paths, ["reduce", "scan", "topk", "y"]);
    }

    #[test]
    fn the_digests_of_this_checkout_are_vouched_for_by_the_build() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let digests = of_tree(&root).expect("the workspace is readable");
        assert_eq!(digests.verdict_hash, crate::verdict_hash::of_tree(&root).unwrap().0);
        assert_eq!(beside(Path::new("/a/harness")), Path::new("/a/harness.digests.json"));
    }
}
