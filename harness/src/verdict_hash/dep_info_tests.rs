//! The hash scope against what is compiled, so the two cannot drift apart:
//! every workspace file cargo's dep-info (`target/*/deps/*.d`) says the
//! kernels, model and types crates were built from is hashed, and every one
//! the harness was built from is hashed or named in
//! [`HARNESS_OUTSIDE_SCOPE`] (a decision, not an omission). Without
//! dep-info (a fresh checkout), the same holds for every Rust file of those
//! crates' trees and for the closure of `include_str!`, `#[path]` and CUDA
//! `#include` of every hashed file.

use super::scope::{scoped_files, HARNESS_OUTSIDE_SCOPE};
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::canonicalize(&dir).unwrap_or(dir)
}

/// Documentation compiled into tests only (`include_str!` of a `.md` in a
/// test module) decides no verdict.
fn documentation(relative: &str) -> bool {
    relative.ends_with(".md")
}

/// Workspace files named by a dep-info file, relative to the workspace
/// (generated files under `target/` left out).
fn dep_info_paths(d_file: &Path, root: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(d_file).unwrap_or_default();
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((_, deps)) = line.split_once(": ").or_else(|| line.strip_suffix(':').map(|l| (l, ""))) else {
            continue;
        };
        for dep in deps.replace("\\ ", "\u{0}").split_whitespace() {
            // Cargo writes workspace members' files relative to the workspace root.
            let path = root.join(dep.replace('\u{0}', " "));
            if let Ok(relative) = path.strip_prefix(root) {
                let relative = relative.to_string_lossy().replace('\\', "/");
                // A dep-info of an older build may name files since deleted.
                if !relative.starts_with("target/") && root.join(&relative).is_file() {
                    out.push(relative);
                }
            }
        }
    }
    out
}

/// Dep-info files of `krate` under the workspace's target folder.
fn dep_info_files(root: &Path, krate: &str) -> Vec<PathBuf> {
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
    let mut out = Vec::new();
    for profile in ["debug", "release"] {
        let Ok(entries) = std::fs::read_dir(target.join(profile).join("deps")) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if name.ends_with(".d") && name.rsplit_once('-').is_some_and(|(stem, _)| stem == krate) {
                out.push(entry.path());
            }
        }
    }
    out
}

#[test]
fn every_file_cargo_compiled_is_hashed_or_deliberately_left_out() {
    let root = workspace();
    // What the walk hashes, not what the scope's rule would accept: the walk
    // is where files went missing (folders skipped at any depth, links).
    let hashed = scoped_files(&root).expect("the workspace is in scope");
    let mut checked = 0;
    for krate in ["kernels", "model", "primlab_types", "harness"] {
        for d_file in dep_info_files(&root, krate) {
            for relative in dep_info_paths(&d_file, &root) {
                checked += 1;
                let outside = krate == "harness" && HARNESS_OUTSIDE_SCOPE.iter().any(|p| relative.starts_with(p));
                assert!(
                    hashed.contains(&relative) || outside || documentation(&relative),
                    "{relative} is compiled into {krate} ({}) but not hashed: add it to the scope \
                     (verdict_hash/scope.rs) or, for the harness, to HARNESS_OUTSIDE_SCOPE with the reason",
                    d_file.display()
                );
            }
        }
    }
    // This test's own build wrote the harness dep-info, unless the target
    // folder is elsewhere; the walk below covers that case.
    eprintln!("dep-info: {checked} compiled files classified");
    if checked == 0 {
        eprintln!("dep-info: no dep-info under target/ (a fresh checkout): the walks below stand in");
    }
}

/// Files named by `include_str!("..")`, `include_bytes!("..")`, `#[path = ".."]`
/// (Rust) or `#include ".."` (CUDA) in `text`.
fn includes(text: &str, cuda: bool) -> Vec<String> {
    let markers: &[&str] =
        if cuda { &["#include \""] } else { &["include_str!(\"", "include_bytes!(\"", "#[path = \""] };
    let mut out = Vec::new();
    for marker in markers {
        for (at, _) in text.match_indices(marker) {
            let rest = &text[at + marker.len()..];
            if let Some(end) = rest.find('"') {
                out.push(rest[..end].to_string());
            }
        }
    }
    out
}

fn relative_to(root: &Path, path: &Path) -> Option<String> {
    let canonical = std::fs::canonicalize(path).ok()?;
    Some(canonical.strip_prefix(root).ok()?.to_string_lossy().replace('\\', "/"))
}

#[test]
fn every_included_file_of_a_hashed_file_is_hashed() {
    let root = workspace();
    let hashed = scoped_files(&root).expect("the workspace is in scope");
    for file in &hashed {
        let path = root.join(file);
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let cuda = file.ends_with(".cu") || file.ends_with(".cuh");
        let dir = path.parent().expect("a file has a folder");
        for name in includes(&text, cuda) {
            // Only files: the quoted text of a marker in a string (as in this file) names none.
            let candidates = [dir.join(&name), root.join("kernels/cuda").join(&name)].map(|c| c.is_file().then_some(c));
            let candidates: Vec<PathBuf> = candidates.into_iter().flatten().collect();
            let Some(found) = candidates.iter().find_map(|c| relative_to(&root, c)) else { continue };
            assert!(
                hashed.contains(&found) || documentation(&found),
                "{file} includes {found}, which is not hashed: add it to the scope (verdict_hash/scope.rs)"
            );
        }
    }
}

#[test]
fn every_rust_file_of_the_kernels_model_and_types_crates_is_hashed() {
    let root = workspace();
    let hashed = scoped_files(&root).expect("the workspace is in scope");
    let mut stack: Vec<PathBuf> = ["kernels", "model", "types"].iter().map(|c| root.join(c)).collect();
    let mut seen = 0;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("a crate folder").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs" || e == "cu" || e == "cuh") {
                let relative = relative_to(&root, &path).expect("inside the workspace");
                assert!(hashed.contains(&relative), "{relative} is compiled but not hashed");
                seen += 1;
            }
        }
    }
    assert!(seen > 20, "{seen}");
}

/// Every file NVRTC compiles into a kernel family, as the kernels crate
/// resolves its includes (each inlined file leaves a `#line 1 "path"`
/// marker), is hashed: a header added anywhere the kernels can include it
/// from is in the scope, or this fails naming it.
#[test]
fn every_file_of_every_translation_unit_is_hashed() {
    let root = workspace();
    let hashed = scoped_files(&root).expect("the workspace is in scope");
    let mut seen = 0;
    for family in kernels::KernelFamily::ALL {
        let unit = kernels::sources::translation_unit(family.file()).expect("the family's sources resolve");
        for line in unit.lines().filter(|l| l.starts_with("#line 1 \"")) {
            let path = line.trim_start_matches("#line 1 \"").trim_end_matches('"');
            let relative = format!("kernels/cuda/{path}");
            assert!(hashed.contains(&relative), "{} compiles {relative}, which is not hashed", family.file());
            seen += 1;
        }
    }
    assert!(seen > kernels::KernelFamily::ALL.len(), "{seen} files");
}
