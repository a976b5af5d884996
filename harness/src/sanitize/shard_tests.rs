use super::*;
use crate::sanitize::{expected_cases, sanitizer_plan, DEFAULT_SEED, SANITIZE_SIZES};
use std::collections::BTreeSet;

fn markers(cases: &[CaseId]) -> Vec<String> {
    let mut m: Vec<String> = cases.iter().map(CaseId::marker).collect();
    m.sort();
    m
}

fn whole_run(primitive: Primitive, variants: &[String]) -> Vec<CaseId> {
    expected_cases(&sanitizer_plan(primitive.name(), &SANITIZE_SIZES, DEFAULT_SEED, variants).unwrap())
}

/// Every primitive, split or not: the shards together hold exactly the whole
/// run's cases, each once, and no shard is empty.
#[test]
fn the_shards_of_every_primitive_hold_each_case_once() {
    for primitive in Primitive::ALL {
        let shards = shards(primitive, &SANITIZE_SIZES, DEFAULT_SEED, &[]).unwrap();
        let held: Vec<CaseId> = shards.iter().flat_map(|s| s.expected.clone()).collect();
        assert_eq!(markers(&held), markers(&whole_run(primitive, &[])), "{}", primitive.name());
        assert!(shards.iter().all(|s| !s.expected.is_empty()), "{}", primitive.name());
        let labels: BTreeSet<&str> = shards.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels.len(), shards.len(), "{}: labels name the logs", primitive.name());
        assert!(shards.len() <= primitive.sanitizer_shards());
    }
}

#[test]
fn top_k_is_split_into_balanced_shards_of_whole_variants() {
    let shards = shards(Primitive::Topk, &SANITIZE_SIZES, DEFAULT_SEED, &[]).unwrap();
    assert_eq!(shards.len(), Primitive::Topk.sanitizer_shards());
    assert_eq!(shards[0].label, format!("topk-1of{}", shards.len()));
    // A variant lies in one shard only.
    for (i, a) in shards.iter().enumerate() {
        for b in &shards[i + 1..] {
            assert!(a.expected.iter().all(|c| b.expected.iter().all(|d| d.variant != c.variant)));
        }
    }
    // Greedy balance: no shard exceeds the mean by more than the heaviest variant.
    let total: u64 = shards.iter().map(|s| s.work).sum();
    let heaviest_variant =
        shards.iter().flat_map(|s| &s.variants).map(|v| work_of(&s_cases(&shards, v))).max().unwrap();
    let most = shards.iter().map(|s| s.work).max().unwrap();
    assert!(most <= total / shards.len() as u64 + heaviest_variant, "{most} vs {total} / {}", shards.len());
}

fn s_cases(shards: &[Shard], variant: &str) -> Vec<CaseId> {
    shards.iter().flat_map(|s| s.expected.iter().filter(|c| c.variant == variant).cloned()).collect()
}

/// A mutant's filter ("sample") is kept: the shards split only its cases.
#[test]
fn a_filtered_run_is_split_within_its_filter() {
    let filter = vec!["sample".to_string()];
    let shards = shards(Primitive::Topk, &SANITIZE_SIZES, DEFAULT_SEED, &filter).unwrap();
    assert!(shards.len() > 1);
    let held: Vec<CaseId> = shards.iter().flat_map(|s| s.expected.clone()).collect();
    assert_eq!(markers(&held), markers(&whole_run(Primitive::Topk, &filter)));
    assert!(held.iter().all(|c| c.variant.contains("sample")));
}

#[test]
fn a_primitive_taken_whole_keeps_its_name_and_filters() {
    let filter = vec!["decoupled".to_string()];
    let shards = shards(Primitive::Scan, &SANITIZE_SIZES, DEFAULT_SEED, &filter).unwrap();
    assert_eq!(shards.len(), 1);
    assert_eq!(shards[0].label, "scan");
    assert_eq!(shards[0].variants, filter);
    assert_eq!(shards[0].expected, whole_run(Primitive::Scan, &filter));
}

#[test]
fn balance_deals_the_heaviest_first_to_the_lightest_group() {
    let names: Vec<(String, u64)> = [("a", 5), ("b", 4), ("c", 3), ("d", 3)].map(|(n, w)| (n.to_string(), w)).to_vec();
    // a -> 0 (5), b -> 1 (4), c -> 1 (7), d -> 0 (8); each group in the names' order.
    assert_eq!(balance(&names, 2), vec![vec!["a".to_string(), "d".into()], vec!["b".into(), "c".into()]]);
    assert_eq!(balance(&names, 4), vec![vec!["a".to_string()], vec!["b".into()], vec!["c".into()], vec!["d".into()]]);
}

#[test]
fn heavy_jobs_start_first_and_ties_keep_the_catalogue_order() {
    let jobs = [(100, Tool::Memcheck), (10, Tool::Racecheck), (100, Tool::Synccheck), (30, Tool::Initcheck)];
    // Weights 100, 160, 100, 120.
    assert_eq!(start_order(&jobs), vec![1, 3, 0, 2]);
}
