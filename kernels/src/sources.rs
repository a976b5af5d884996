//! The CUDA sources, embedded at build time, and the resolution of their
//! `#include "..."` lines into one translation unit per family.

use std::collections::HashSet;

include!(concat!(env!("OUT_DIR"), "/cuda_sources.rs"));

/// The text of one embedded source, by its path relative to `kernels/cuda`.
pub fn source(path: &str) -> Option<&'static str> {
    CUDA_SOURCES.iter().find(|(p, _)| *p == path).map(|(_, text)| *text)
}

/// Resolves the quoted includes of an ad-hoc source text (tests, probes).
pub fn resolve_includes(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut seen = HashSet::new();
    inline_text("<inline>", text, &mut out, &mut seen)?;
    Some(out)
}

/// Inlines every quoted include of our own headers (once each, like
/// `#pragma once`) and keeps `#line` markers so NVRTC's messages and
/// `-lineinfo` still point at the original files.
pub fn translation_unit(entry: &str) -> Option<String> {
    let mut out = String::new();
    let mut seen = HashSet::new();
    inline(entry, &mut out, &mut seen)?;
    Some(out)
}

fn inline(path: &str, out: &mut String, seen: &mut HashSet<String>) -> Option<()> {
    if !seen.insert(path.to_string()) {
        return Some(());
    }
    let text = source(path)?;
    inline_text(path, text, out, seen)
}

fn inline_text(path: &str, text: &str, out: &mut String, seen: &mut HashSet<String>) -> Option<()> {
    out.push_str(&format!("#line 1 \"{path}\"\n"));
    for (number, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#pragma once") {
            out.push('\n');
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("#include \"") {
            if let Some(included) = rest.split('"').next() {
                if source(included).is_some() {
                    inline(included, out, seen)?;
                    out.push_str(&format!("#line {} \"{path}\"\n", number + 2));
                    continue;
                }
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_quoted_include_resolves_to_an_embedded_source() {
        for (path, text) in CUDA_SOURCES {
            for line in text.lines() {
                if let Some(rest) = line.trim_start().strip_prefix("#include \"") {
                    let included = rest.split('"').next().unwrap_or_default();
                    assert!(source(included).is_some(), "{path} includes missing {included}");
                }
            }
        }
    }

    #[test]
    fn translation_units_inline_each_header_once() {
        for (path, _) in CUDA_SOURCES.iter().filter(|(p, _)| p.ends_with(".cu")) {
            let unit = translation_unit(path).expect("entry exists");
            assert!(!unit.contains("#include \""), "{path}: unresolved quoted include");
            assert_eq!(unit.matches("#line 1 \"common/config.cuh\"").count(), 1, "{path}");
        }
    }

    #[test]
    fn source_hash_is_sha256_hex() {
        assert_eq!(SOURCE_HASH.len(), 64);
        assert!(SOURCE_HASH.chars().all(|c| c.is_ascii_hexdigit()));
    }
}
