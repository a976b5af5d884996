//! Narrowing the registered entries to what a run asked for (`--sizes`,
//! `--shape`, `--variant`; [`Selection`]).

use super::{Registry, CEILINGS};
use crate::bench::record::BenchSize;
use crate::bench::select::Selection;
use anyhow::{bail, Result};

impl Registry {
    /// Narrows the registry (registered with `selection`'s sizes and shapes
    /// already in the config): keeps the ceilings, drops row entries when
    /// only sizes were given and 1-D entries when only shapes were, keeps
    /// only the named variants. Errors when a named value selects nothing.
    pub fn select(self, selection: &Selection) -> Result<Registry> {
        let Registry { entries, skipped } = self;
        let primitive_entry = |primitive: &str| primitive != CEILINGS;
        // Every (variant, size) the registry knows, run or skipped, outside the ceilings.
        let known: Vec<(String, String, bool)> = entries
            .iter()
            .filter(|e| primitive_entry(e.id.primitive))
            .map(|e| (e.id.variant.clone(), e.id.size.label(), matches!(e.id.size, BenchSize::Rows { .. })))
            .chain(skipped.iter().filter(|s| primitive_entry(&s.primitive)).map(|s| {
                let rows = s.size.starts_with('[');
                (s.variant.clone(), s.size.clone(), rows)
            }))
            .collect();
        let mut variants: Vec<&str> = known.iter().map(|(v, _, _)| v.as_str()).collect();
        variants.sort_unstable();
        variants.dedup();
        for wanted in &selection.variants {
            if !variants.contains(&wanted.as_str()) {
                bail!("--variant {wanted} selects no entry of the selected primitives; valid: {}", variants.join(", "));
            }
        }
        if !selection.shapes.is_empty() && !known.iter().any(|(_, _, rows)| *rows) {
            bail!("--shape selects row entries, and none of the selected primitives has row shapes");
        }
        let keep_rows = !selection.shapes.is_empty() || selection.sizes_log2.is_empty();
        let keep_elements = !selection.sizes_log2.is_empty() || selection.shapes.is_empty();
        let keeps = |primitive: &str, variant: &str, rows: bool| {
            !primitive_entry(primitive)
                || ((if rows { keep_rows } else { keep_elements })
                    && (selection.variants.is_empty() || selection.variants.iter().any(|v| v == variant)))
        };
        let entries: Vec<_> = entries
            .into_iter()
            .filter(|e| keeps(e.id.primitive, &e.id.variant, matches!(e.id.size, BenchSize::Rows { .. })))
            .collect();
        let skipped: Vec<_> =
            skipped.into_iter().filter(|s| keeps(&s.primitive, &s.variant, s.size.starts_with('['))).collect();
        let selected = entries.iter().filter(|e| primitive_entry(e.id.primitive)).count()
            + skipped.iter().filter(|s| primitive_entry(&s.primitive)).count();
        if selected == 0 {
            let sizes: Vec<&str> = {
                let mut s: Vec<&str> = known.iter().map(|(_, size, _)| size.as_str()).collect();
                s.sort_unstable();
                s.dedup();
                s
            };
            bail!(
                "the selection ({}) matches no entry; valid variants: {}; valid sizes and shapes: {}",
                selection.reasons().join(", "),
                variants.join(", "),
                sizes.join(", ")
            );
        }
        Ok(Registry { entries, skipped })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::entries::{EntryId, Outcome};

    fn registry() -> Registry {
        let mut r = Registry::default();
        let body = |_: &mut crate::bench::entries::EntryContext<'_, '_>| -> Result<Outcome> { bail!("not run") };
        for (primitive, variant, size) in [
            (CEILINGS, "memcpy_d2d", BenchSize::Elements(1 << 20)),
            ("scan", "decoupled_lookback", BenchSize::Elements(1 << 20)),
            ("scan", "reduce_then_scan", BenchSize::Elements(1 << 20)),
            ("softmax", "online_block", BenchSize::Rows { rows: 4096, cols: 1024 }),
        ] {
            r.add(EntryId::primlab(primitive, "op", variant, size, "f32"), 0, body);
        }
        r
    }

    fn error_of(result: Result<Registry>) -> String {
        match result {
            Ok(_) => panic!("the selection should have been refused"),
            Err(e) => e.to_string(),
        }
    }

    fn variants(r: &Registry) -> Vec<&str> {
        r.entries.iter().map(|e| e.id.variant.as_str()).collect()
    }

    #[test]
    fn variants_filter_and_an_unknown_one_lists_the_valid_values() {
        let only = Selection { variants: vec!["reduce_then_scan".into()], ..Default::default() };
        assert_eq!(variants(&registry().select(&only).unwrap()), ["memcpy_d2d", "reduce_then_scan"]);
        let wrong = Selection { variants: vec!["nope".into()], ..Default::default() };
        let err = error_of(registry().select(&wrong));
        assert!(err.contains("valid: decoupled_lookback, online_block, reduce_then_scan"), "{err}");
    }

    #[test]
    fn sizes_alone_drop_row_entries_and_shapes_alone_drop_1d_ones() {
        let sizes = Selection { sizes_log2: vec![20], ..Default::default() };
        assert_eq!(
            variants(&registry().select(&sizes).unwrap()),
            ["memcpy_d2d", "decoupled_lookback", "reduce_then_scan"]
        );
        let shapes = Selection { shapes: vec![(4096, 1024)], ..Default::default() };
        assert_eq!(variants(&registry().select(&shapes).unwrap()), ["memcpy_d2d", "online_block"]);
        // A variant of the 1-D entries with only a shape selects nothing.
        let none =
            Selection { shapes: vec![(4096, 1024)], variants: vec!["decoupled_lookback".into()], ..Default::default() };
        let err = error_of(registry().select(&none));
        assert!(err.contains("matches no entry") && err.contains("[4096, 1024]"), "{err}");
        assert!(Selection::default().reasons().is_empty());
        assert_eq!(none.reasons(), ["--shape 4096x1024", "--variant decoupled_lookback"]);
    }
}
