//! The axes a bench run may be narrowed to: `--sizes`, `--shape` and
//! `--variant`. Sizes and shapes replace the run's 1-D sizes and row shapes
//! (and, given alone, leave out the other kind of entry); variants filter
//! the registered entries. The ceilings always stay (every ratio and plot
//! needs them). A value that selects no entry is an error that lists the
//! valid values.

use super::entries::{Registry, CEILINGS};
use super::record::BenchSize;
use anyhow::{bail, Result};

/// The largest log2 size: the baselines take log2(n) in [0, 30].
pub const MAX_SIZE_LOG2: u32 = 30;
/// Values below this are log2 exponents; from it on, element counts.
pub const FIRST_ELEMENT_COUNT: u64 = 64;

/// Parses one `--sizes` value: a log2 exponent (`20`, any value below 64, or
/// `2^20`) or an element count (`1048576`, a power of two from 64 on, as the
/// baselines take log2 sizes). Returns the log2 size. Zero, a non-power of
/// two and sizes above 2^30 are refused.
pub fn parse_size(raw: &str) -> Result<u32, String> {
    let raw = raw.trim();
    let (value, is_log2) = match raw.strip_prefix("2^") {
        Some(k) => (k, true),
        None => (raw, false),
    };
    let v: u64 = value.parse().map_err(|_| format!("'{raw}' is not a number (use 20, 2^20 or 1048576)"))?;
    let k = if is_log2 || v < FIRST_ELEMENT_COUNT {
        u32::try_from(v).map_err(|_| format!("'{raw}': log2 size too large"))?
    } else if v.is_power_of_two() {
        v.trailing_zeros()
    } else {
        return Err(format!("'{raw}' is not a power of two (the baselines take log2 sizes)"));
    };
    if k == 0 {
        return Err(format!("'{raw}': sizes must be nonzero (2^0 = 1 element is not a benchmark)"));
    }
    if k > MAX_SIZE_LOG2 {
        return Err(format!("'{raw}' is above 2^{MAX_SIZE_LOG2}, the largest size the baselines take"));
    }
    Ok(k)
}

/// Parses `ROWSxCOLS` (e.g. `8192x32000`), both nonzero.
pub fn parse_shape(text: &str) -> Result<(usize, usize), String> {
    let (rows, cols) = text.split_once(['x', 'X']).ok_or_else(|| format!("'{text}' is not ROWSxCOLS"))?;
    let number = |s: &str| s.trim().parse::<usize>().ok().filter(|&v| v > 0);
    match (number(rows), number(cols)) {
        (Some(r), Some(c)) => Ok((r, c)),
        _ => Err(format!("'{text}': rows and cols must be nonzero whole numbers")),
    }
}

/// The selection a run asks for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selection {
    /// log2 sizes of `--sizes` (empty: not given).
    pub sizes_log2: Vec<u32>,
    /// `--shape` values (empty: not given).
    pub shapes: Vec<(usize, usize)>,
    /// `--variant` values (empty: not given).
    pub variants: Vec<String>,
}

impl Selection {
    /// The coverage reasons of this selection (each makes a run partial).
    pub fn reasons(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.sizes_log2.is_empty() {
            let list: Vec<String> = self.sizes_log2.iter().map(|k| format!("2^{k}")).collect();
            out.push(format!("--sizes {}", list.join(",")));
        }
        if !self.shapes.is_empty() {
            let list: Vec<String> = self.shapes.iter().map(|(r, c)| format!("{r}x{c}")).collect();
            out.push(format!("--shape {}", list.join(",")));
        }
        if !self.variants.is_empty() {
            out.push(format!("--variant {}", self.variants.join(",")));
        }
        out
    }

    /// Narrows `registry` (registered with this selection's sizes and shapes
    /// already in the config): keeps the ceilings, drops row entries when
    /// only sizes were given and 1-D entries when only shapes were, keeps
    /// only the named variants. Errors when a named value selects nothing.
    pub fn apply(&self, registry: Registry) -> Result<Registry> {
        let Registry { entries, skipped } = registry;
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
        for wanted in &self.variants {
            if !variants.contains(&wanted.as_str()) {
                bail!("--variant {wanted} selects no entry of the selected primitives; valid: {}", variants.join(", "));
            }
        }
        if !self.shapes.is_empty() && !known.iter().any(|(_, _, rows)| *rows) {
            bail!("--shape selects row entries, and none of the selected primitives has row shapes");
        }
        let keep_rows = !self.shapes.is_empty() || self.sizes_log2.is_empty();
        let keep_elements = !self.sizes_log2.is_empty() || self.shapes.is_empty();
        let keeps = |primitive: &str, variant: &str, rows: bool| {
            !primitive_entry(primitive)
                || ((if rows { keep_rows } else { keep_elements })
                    && (self.variants.is_empty() || self.variants.iter().any(|v| v == variant)))
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
                self.reasons().join(", "),
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

    #[test]
    fn sizes_read_as_log2_or_element_counts_and_zero_is_refused() {
        let sizes: Vec<u32> = ["20", "2^10", "1048576", "16777216"].iter().map(|s| parse_size(s).unwrap()).collect();
        assert_eq!(sizes, [20, 10, 20, 24]);
        assert!(parse_size("0").unwrap_err().contains("nonzero"));
        assert!(parse_size("1000").unwrap_err().contains("power of two"));
        assert!(parse_size("31").unwrap_err().contains("above 2^30"));
        assert!(parse_size("ten").unwrap_err().contains("not a number"));
        assert!(parse_size("").is_err());
    }

    #[test]
    fn shapes_read_as_rows_x_cols() {
        assert_eq!(parse_shape("8192x32000"), Ok((8192, 32000)));
        assert!(parse_shape("8192").is_err());
        assert!(parse_shape("0x5").is_err());
    }

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
        assert_eq!(variants(&only.apply(registry()).unwrap()), ["memcpy_d2d", "reduce_then_scan"]);
        let wrong = Selection { variants: vec!["nope".into()], ..Default::default() };
        let err = error_of(wrong.apply(registry()));
        assert!(err.contains("valid: decoupled_lookback, online_block, reduce_then_scan"), "{err}");
    }

    #[test]
    fn sizes_alone_drop_row_entries_and_shapes_alone_drop_1d_ones() {
        let sizes = Selection { sizes_log2: vec![20], ..Default::default() };
        assert_eq!(
            variants(&sizes.apply(registry()).unwrap()),
            ["memcpy_d2d", "decoupled_lookback", "reduce_then_scan"]
        );
        let shapes = Selection { shapes: vec![(4096, 1024)], ..Default::default() };
        assert_eq!(variants(&shapes.apply(registry()).unwrap()), ["memcpy_d2d", "online_block"]);
        // A variant of the 1-D entries with only a shape selects nothing.
        let none =
            Selection { shapes: vec![(4096, 1024)], variants: vec!["decoupled_lookback".into()], ..Default::default() };
        let err = error_of(none.apply(registry()));
        assert!(err.contains("matches no entry") && err.contains("[4096, 1024]"), "{err}");
        assert!(Selection::default().reasons().is_empty());
        assert_eq!(none.reasons(), ["--shape 4096x1024", "--variant decoupled_lookback"]);
    }
}
