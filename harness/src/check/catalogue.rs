//! The cases `check` runs on a user's kernel: the sweep's catalogue of the
//! manifest's contract ([`catalogue`](crate::sweep::raw::catalogue)) followed by its edge-value
//! families ([`crate::edge_families`]), with one data family per size past 2^24,
//! the families in turn, and the first past 2^31 ([`cases`]), and the extra families of the sanitizer sizes
//! ([`next_families`]).

use super::manifest::Manifest;
use crate::sweep::raw::RawSpec;
use crate::sweep::SweepPlan;
use std::collections::{BTreeMap, BTreeSet};

/// From this many elements on (past 2^31, where 32-bit signed indices wrap)
/// a catalogue keeps one data family per size: the first, the cheapest to
/// generate and check (the check of a user's kernel visits such a size; one
/// family there keeps it within minutes).
pub const LARGE_OFFSET: usize = 1 << 31;

/// Past this many elements (the sweep's 2^24 keeps every family) and below
/// [`LARGE_OFFSET`], a check runs one data family per size, the families
/// taking turns over those sizes (2^28 the first, 2^28 + 1 the second, ...):
/// a case there costs seconds of host work for its input, the model's answer
/// and the comparison of two runs, and what such a size tests (offsets,
/// tile counts, a partial last tile of a large grid) shows in any family,
/// while the values each family holds were all met at the smaller sizes.
/// Four such cases of a scan took 58 of its 62 s on the H100.
pub const ONE_FAMILY_PAST: usize = 1 << 24;

/// The cases of `manifest`'s contract under `plan`, cheapest first: the raw catalogue's
/// and the edge-value families' (at sizes up to 2^20), in the order of their sizes (a
/// stable sort: at one size, the catalogue's families, then the edge families), so that
/// the boundary sizes and the edge values, where most bugs show, come before the large
/// sizes, whose inputs cost seconds each. Unless `deep` (`check --deep`), past
/// [`ONE_FAMILY_PAST`] one family per size, in turn, and past 2^31 the first family.
/// A case whose answer the contract's outputs cannot hold (past 2^31, a
/// skewed histogram's one bin counts every sample: more than its int32
/// counts hold) is outside the contract and left out ([`outside_contract`]
/// says which, and why).
pub fn cases(plan: &SweepPlan, manifest: &Manifest, deep: bool) -> Vec<RawSpec> {
    let mut specs = catalogued(plan, manifest, deep);
    specs.retain(|s| unheld(manifest, &s.id).is_none());
    specs
}

/// One line for each case of [`cases`]' catalogue that it leaves out as
/// outside the contract, naming the case and why.
pub fn outside_contract(plan: &SweepPlan, manifest: &Manifest, deep: bool) -> Vec<String> {
    catalogued(plan, manifest, deep)
        .iter()
        .filter_map(|s| {
            unheld(manifest, &s.id).map(|why| {
                format!(
                    "n = {} family {}: left out, outside the contract: {why}, which its outputs cannot hold \
                     (no kernel could answer it)",
                    s.id.size, s.id.family
                )
            })
        })
        .collect()
}

/// The catalogue's cases (every family, or thinned unless `deep`), smallest first.
fn catalogued(plan: &SweepPlan, manifest: &Manifest, deep: bool) -> Vec<RawSpec> {
    let specs = crate::cases::rules::with_catalogue(plan, manifest.primitive, manifest.contract, &manifest.name);
    let mut specs =
        if deep { specs } else { families_in_turn(first_family_from(specs, LARGE_OFFSET), ONE_FAMILY_PAST) };
    specs.sort_by_key(|s| s.id.n);
    specs
}

/// Why the contract's outputs cannot hold the answer of case `id`, when the
/// case is one made from pieces and its maker knows so before any input.
fn unheld(manifest: &Manifest, id: &crate::sweep::case::CaseId) -> Option<String> {
    if id.n < super::streamed::WHOLE_FROM_PIECES {
        return None;
    }
    super::streamed::streamed(manifest.contract, id)?.unheld
}

/// `specs` with, at each size past `from`, only the cases of one family: the
/// k-th such size (smallest first) keeps the (k mod f)-th of its f families
/// (in the order met), so that over the sizes there every family is kept
/// once before any is kept twice.
fn families_in_turn(specs: Vec<RawSpec>, from: usize) -> Vec<RawSpec> {
    let mut families: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for s in specs.iter().filter(|s| s.id.n > from) {
        let at = families.entry(s.id.n).or_default();
        if !at.contains(&s.id.family) {
            at.push(s.id.family.clone());
        }
    }
    let kept: BTreeMap<usize, String> =
        families.into_iter().enumerate().map(|(k, (n, at))| (n, at[k % at.len()].clone())).collect();
    specs.into_iter().filter(|s| kept.get(&s.id.n).is_none_or(|family| family == &s.id.family)).collect()
}

/// `specs` with, at each size of at least `from` elements, only the cases
/// of the first family met at that size.
fn first_family_from(specs: Vec<RawSpec>, from: usize) -> Vec<RawSpec> {
    let mut first: BTreeMap<String, String> = BTreeMap::new();
    specs
        .into_iter()
        .filter(|s| {
            s.id.n < from || first.entry(s.id.size.clone()).or_insert_with(|| s.id.family.clone()) == &s.id.family
        })
        .collect()
}

/// The cases of `more` that add, at each size `specs` visits, up to `k`
/// families `specs` does not hold there (the first met in `more`'s order),
/// in `more`'s order. Sizes `specs` does not visit get nothing.
pub fn next_families(specs: &[RawSpec], more: Vec<RawSpec>, k: usize) -> Vec<RawSpec> {
    let held: BTreeSet<(&str, &str)> = specs.iter().map(|s| (s.id.size.as_str(), s.id.family.as_str())).collect();
    let sizes: BTreeSet<&str> = specs.iter().map(|s| s.id.size.as_str()).collect();
    let mut added: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for s in &more {
        let (size, family) = (s.id.size.as_str(), s.id.family.as_str());
        if sizes.contains(size) && !held.contains(&(size, family)) {
            let families = added.entry(size.to_string()).or_default();
            if families.len() < k && !families.iter().any(|f| f == family) {
                families.push(family.to_string());
            }
        }
    }
    more.into_iter().filter(|s| added.get(&s.id.size).is_some_and(|f| f.contains(&s.id.family))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Primitive;
    use crate::sweep::raw;

    fn spec(n: usize, family: &str) -> RawSpec {
        let id = crate::sweep::gpu::sized_id("scan", "v".into(), n, family, 0);
        RawSpec::new(id, || Err("not made".into()))
    }

    fn pairs(specs: &[RawSpec]) -> Vec<(usize, String)> {
        specs.iter().map(|s| (s.id.n, s.id.family.clone())).collect()
    }

    #[test]
    fn past_2_31_a_catalogue_keeps_its_first_family() {
        let big = LARGE_OFFSET + 1000;
        let all = vec![spec(5, "a"), spec(5, "b"), spec(big, "a"), spec(big, "b"), spec(big, "a")];
        let kept = first_family_from(all, LARGE_OFFSET);
        assert_eq!(pairs(&kept), vec![(5, "a".into()), (5, "b".into()), (big, "a".into()), (big, "a".into())]);
        let plan = SweepPlan::of_primitive(Primitive::Scan, &[big, 33], 1);
        let contract = raw::contract(Primitive::Scan, "exclusive.i32").unwrap();
        let scan = first_family_from(raw::catalogue(&plan, Primitive::Scan, contract, "u"), LARGE_OFFSET);
        assert_eq!(scan.iter().filter(|s| s.id.n == big).count(), 1, "one family past 2^31");
        assert!(scan.iter().filter(|s| s.id.n == 33).count() >= 5, "every family at 33");
    }

    #[test]
    fn past_2_24_the_families_take_turns_over_the_sizes() {
        let (a, b) = ((1 << 28) + 1, 1 << 28);
        let all = vec![
            spec(5, "x"),
            spec(5, "y"),
            spec(a, "x"),
            spec(a, "y"),
            spec(a, "x"),
            spec(b, "x"),
            spec(b, "y"),
            spec(1 << 24, "x"),
            spec(1 << 24, "y"),
        ];
        // 2^28 (the first size past 2^24) keeps x, 2^28 + 1 keeps y; 2^24 and below keep both.
        let kept = families_in_turn(all, ONE_FAMILY_PAST);
        assert_eq!(
            pairs(&kept),
            vec![
                (5, "x".into()),
                (5, "y".into()),
                (a, "y".into()),
                (b, "x".into()),
                (1 << 24, "x".into()),
                (1 << 24, "y".into())
            ]
        );
        // On a real catalogue: one family at each default size past 2^24, each family once.
        let sizes = [33, 1 << 24, 1 << 28, (1 << 28) + 1];
        let plan = SweepPlan::of_primitive(Primitive::Scan, &sizes, 1);
        let contract = raw::contract(Primitive::Scan, "inclusive.i32").unwrap();
        let scan = families_in_turn(raw::catalogue(&plan, Primitive::Scan, contract, "u"), ONE_FAMILY_PAST);
        let at = |n: usize| scan.iter().filter(|s| s.id.n == n).map(|s| s.id.family.clone()).collect::<Vec<_>>();
        assert_eq!(at(1 << 28).len(), 1);
        assert_eq!(at((1 << 28) + 1).len(), 1);
        assert_ne!(at(1 << 28), at((1 << 28) + 1), "each family once past 2^24");
        assert!(at(1 << 24).len() >= 2, "2^24 keeps every family");
    }

    #[test]
    fn a_checks_cases_are_the_catalogues_then_the_edge_families_up_to_2_20() {
        let dir = crate::check::tests::folder();
        let text = "primitive = \"arg_reduce\"\ncontract = \"argmax.f32\"\n[module]\nptx = \"k.ptx\"\n\
            [[launch]]\nkernel = \"scan3\"\nargs = [\"in\", \"index\", \"n\"]\ngrid = \"ceil_div(n, 1024)\"\nblock = \"256\"\n";
        std::fs::write(dir.join("check.toml"), text).expect("manifest written");
        let big = (1 << 20) + 1;
        let sizes = [33, big];
        let manifest = super::super::manifest::load(&dir.join("check.toml"), &sizes, None).expect("valid");
        let specs = cases(&SweepPlan::of_primitive(Primitive::ArgReduce, &sizes, 7), &manifest, false);
        let families =
            |n: usize| specs.iter().filter(|s| s.id.n == n).map(|s| s.id.family.as_str()).collect::<Vec<_>>();
        // The catalogue's two f32 families, then the three edge families (finite: the contract
        // rejects NaN and ±inf); past 2^20 the catalogue's only.
        let edges = ["float_edges", "signed_zero_ties", "alternating_extremes"];
        assert_eq!(families(33), [&["uniform_float", "many_ties_f32"][..], &edges].concat());
        assert_eq!(families(big), ["uniform_float", "many_ties_f32"]);
        // At one size the catalogue's families come first, then the edge families; the
        // small size's cases all come before the large size's.
        let first_edge = specs.iter().position(|s| s.id.family == edges[0]).expect("an edge case");
        let last_small = specs.iter().rposition(|s| s.id.n == 33).expect("a case at 33");
        assert!(specs[first_edge..=last_small].iter().all(|s| edges.contains(&s.id.family.as_str())));
        assert!(specs.windows(2).all(|w| w[0].id.n <= w[1].id.n), "cheapest first");
    }

    #[test]
    fn a_case_the_contract_cannot_hold_is_left_out_and_named() {
        use crate::check::extra_sizes::PAST_2_31;
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../examples/check/bugs/61_hist_upper_inclusive/check.toml");
        let manifest = super::super::manifest::load(&path, &[33, PAST_2_31], None).expect("valid");
        let plan = SweepPlan::of_primitive(Primitive::Histogram, &[33, PAST_2_31], 5);
        let kept = cases(&plan, &manifest, true);
        let skewed = |s: &RawSpec| s.id.family.ends_with(".skewed");
        // Past 2^31 every skewed sample in one bin counts more than int32 holds: left out, said so.
        assert!(kept.iter().any(|s| s.id.n == 33 && skewed(s)), "33 keeps its skewed case");
        assert!(!kept.iter().any(|s| s.id.n == PAST_2_31 && skewed(s)), "past 2^31 it is left out");
        assert!(kept.iter().any(|s| s.id.n == PAST_2_31), "and the rest run there");
        let lines = outside_contract(&plan, &manifest, true);
        assert!(
            !lines.is_empty() && lines.iter().all(|l| l.contains(".skewed") && l.contains("does not fit int32")),
            "{lines:?}"
        );
        assert!(lines[0].starts_with(&format!("n = {PAST_2_31} family ")), "{lines:?}");
    }

    #[test]
    fn next_families_add_the_first_unheld_families_at_held_sizes() {
        let held = vec![spec(1, "a"), spec(2, "b")];
        let more = vec![spec(1, "a"), spec(1, "b"), spec(1, "c"), spec(2, "a"), spec(2, "b"), spec(3, "a")];
        assert_eq!(pairs(&next_families(&held, more, 1)), vec![(1, "b".into()), (2, "a".into())]);
        let more = vec![spec(1, "b"), spec(1, "c"), spec(1, "b")];
        assert_eq!(pairs(&next_families(&held, more, 2)), vec![(1, "b".into()), (1, "c".into()), (1, "b".into())]);
    }
}
