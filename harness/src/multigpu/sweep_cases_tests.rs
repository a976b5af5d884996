//! Tests of the multi-GPU sweep cases: sharded case lists and their expected values (no GPU).

use super::*;

fn plan(sizes: Vec<usize>) -> SweepPlan {
    SweepPlan { seed: 1, sizes, quick: false, primitives: vec![], variants: vec![], one_family: false }
}

#[test]
fn sharded_sizes_straddle_the_shard_boundaries() {
    let p = plan(vec![1, 33, 4099, 1 << 24, 1 << 28]);
    let sizes = sharded_sizes(&p, false, 4);
    for n in [3, 4, 5, 4 * 4096 - 1, 4 * 4096, 4 * 4096 + 1, 4 * 262_144 + 1, 1 << 24, 33] {
        assert!(sizes.contains(&n), "{n} missing from {sizes:?}");
    }
    assert!(!sizes.contains(&(1 << 28)), "2^28 is left to the single-GPU sweep");
    assert!(!sizes.contains(&0));
    let one = sharded_sizes(&p, false, 1);
    assert!(one.contains(&1) && one.contains(&2) && one.contains(&4095) && one.contains(&262_145));
    assert_eq!(sharded_sizes(&p, true, 4), p.sizes, "explicit sizes are taken as given");
}

#[test]
fn sharded_cases_follow_the_filters() {
    let mut p = plan(vec![5, 9]);
    let all = sharded_cases(&p, true, 2);
    assert_eq!(all.len(), 2 * 5 * 3, "2 sizes x 5 families x (reduce, scan, emulated scan)");
    assert!(all.iter().any(|c| c.id.variant == "sharded.emulated_v4.decoupled_lookback.exclusive.i32"));
    assert!(all.iter().any(|c| c.id.variant == "sharded.k2.single_pass.i32"));
    assert!(all.iter().any(|c| c.id.variant == "sharded.k2.decoupled_lookback.exclusive.i32"));
    p.primitives = vec![Primitive::Scan];
    assert!(sharded_cases(&p, true, 2).iter().all(|c| c.id.primitive == "scan"));
    assert!(wants_sharded(&p, 2));
    p.primitives = vec![Primitive::Softmax];
    assert!(!wants_sharded(&p, 2), "no NCCL needed without reduce or scan");
    p.primitives.clear();
    p.variants = vec!["blelloch".into()];
    assert!(!wants_sharded(&p, 2));
    p.variants = vec!["sharded".into()];
    assert!(wants_sharded(&p, 2));
}

#[test]
fn a_sharded_rerun_line_names_the_gpu_count() {
    let id = crate::sweep::gpu::id(
        "scan",
        "sharded.k2.decoupled_lookback.exclusive.i32".into(),
        "9".into(),
        9,
        "small_ints",
        7,
    );
    assert_eq!(
        sharded_repro(&id, 2, 0x5eed),
        "harness sweep --gpu-only --gpus 2 --primitive scan --variant sharded.k2.decoupled_lookback.exclusive.i32 --sizes 9 --seed 0x5eed"
    );
}

#[test]
fn input_groups_split_where_the_input_changes() {
    let mk = |p: &str, n: usize, f: &str, s: u64| crate::sweep::gpu::id(p, "v".into(), n.to_string(), n, f, s);
    let ids = vec![mk("reduce", 1, "a", 1), mk("reduce", 1, "a", 1), mk("reduce", 1, "b", 2), mk("scan", 1, "b", 2)];
    assert_eq!(input_groups(&ids), vec![0..2, 2..3, 3..4]);
    assert!(input_groups(&[]).is_empty());
}

/// The checks on made-up GPU answers: the right ones pass, a wrong
/// element, a wrong gathered total or a wrong rank total fail.
#[test]
fn the_sharded_checks_catch_wrong_answers() {
    let k = 3;
    let ex = expected(DataFamily::FullRangeI32, 10, 9, k).unwrap();
    let shards = super::super::shard::partition(10, k, super::super::shard::ValueRange::ANY_I32).unwrap();
    let good: Vec<sharded_scan::RankScan> = shards
        .iter()
        .map(|s| sharded_scan::RankScan {
            shard: *s,
            output: ex.exclusive[s.range()].to_vec(),
            gathered: ex.shard_totals.clone(),
        })
        .collect();
    assert!(check_scan(&ex, &good).passed());
    let mut bad = good.clone();
    bad[1].output[0] ^= 1;
    match check_scan(&ex, &bad) {
        Verdict::Fail(m) => {
            assert_eq!(m.index, Some(shards[1].start));
            assert!(m.what.contains("offset of GPU 1"), "{}", m.what);
        }
        v => panic!("{v:?}"),
    }
    let mut bad = good.clone();
    bad[2].output[1] += 1;
    assert!(matches!(check_scan(&ex, &bad), Verdict::Fail(m) if m.index == Some(shards[2].start + 1)));
    let mut bad = good.clone();
    bad[2].gathered[0] += 1;
    assert!(!check_scan(&ex, &bad).passed());
    let reduce: Vec<sharded_reduce::RankReduce> = shards
        .iter()
        .enumerate()
        .map(|(r, s)| sharded_reduce::RankReduce { shard: *s, partial: ex.shard_totals[r], total: ex.sum })
        .collect();
    assert!(check_reduce(&ex, &reduce).passed());
    let mut bad = reduce.clone();
    bad[1].total += 1;
    assert!(matches!(check_reduce(&ex, &bad), Verdict::Fail(m) if m.what == "all-reduced total on GPU 1"));
    let virtual_shards =
        super::super::shard::partition(10, VIRTUAL_RANKS, super::super::shard::ValueRange::ANY_I32).unwrap();
    let totals: Vec<i64> =
        virtual_shards.iter().map(|s| model::reduce::reduce_i64(&ex.input[s.range()]).unwrap()).collect();
    let emulated = EmulatedScan { output: ex.exclusive.clone(), totals };
    assert!(check_emulated(&ex, &emulated).passed());
    let mut bad = emulated.clone();
    bad.output[9] -= 1;
    assert!(matches!(check_emulated(&ex, &bad), Verdict::Fail(m) if m.index == Some(9)));
    let mut bad = emulated.clone();
    bad.totals[3] += 1;
    assert!(!check_emulated(&ex, &bad).passed());
}
