//! The check's extra sizes: the sanitizer sizes chosen from launch grids, the defaults past
//! 2^28 and 2^31, and the sizes a manifest's launches cannot take. No GPU needed.

use super::*;
use crate::check::expr::parse;
use crate::check::tests::folder;

fn sizes_of(grids: &[&str]) -> Vec<SanitizerSize> {
    let launches: Vec<(String, Expr)> =
        grids.iter().enumerate().map(|(i, g)| (format!("k{i}"), parse(g).expect("parses"))).collect();
    sanitizer_sizes(&launches, &[])
}

fn ns(sizes: &[SanitizerSize]) -> Vec<usize> {
    sizes.iter().map(|s| s.n).collect()
}

fn grid(text: &str, n: usize) -> i128 {
    parse(text).unwrap().eval(n).unwrap()
}

#[test]
fn a_tiled_grid_runs_one_block_several_partial_and_full() {
    let chosen = sizes_of(&["ceil_div(n, 1024)"]);
    assert_eq!(ns(&chosen), vec![1, 1024, 1025, 2048, 2049]);
    assert_eq!(grid("ceil_div(n, 1024)", 1024), 1, "1024: one full block");
    assert_eq!(grid("ceil_div(n, 1024)", 1025), 2, "1025: the second block holds one item");
    assert!(chosen[2].why.contains("k0: grid 2") && chosen[2].why.contains("partial"), "{:?}", chosen[2]);
}

#[test]
fn a_capped_grid_also_runs_at_and_past_its_cap() {
    let g = "min(ceil_div(n, 256), 132)";
    let chosen = ns(&sizes_of(&[g]));
    let cap = 131 * 256 + 1;
    assert_eq!(chosen, vec![1, 256, 257, 512, 513, cap, 3 * cap]);
    assert_eq!((grid(g, cap - 1), grid(g, cap)), (131, 132));
}

#[test]
fn a_grid_of_several_blocks_at_one_item_steps_from_there() {
    assert_eq!(ns(&sizes_of(&["ceil_div(n, 4096) + 1"])), vec![1, 4096, 4097, 8192, 8193]);
    assert!(sizes_of(&["ceil_div(n, 4096) + 1"])[0].why.contains("several blocks at n = 1"));
}

#[test]
fn constant_grids_fall_back_to_the_default_sizes() {
    let launches = vec![("one".to_string(), parse("1").unwrap()), ("two".to_string(), parse("2").unwrap())];
    let chosen = sanitizer_sizes(&launches, &crate::sweep::sizes::SANITIZE_SIZES);
    assert_eq!(ns(&chosen), crate::sweep::sizes::SANITIZE_SIZES.to_vec());
    assert!(chosen[1].why.contains("constant"), "{:?}", chosen[1]);
}

#[test]
fn several_launches_share_sizes_and_stay_within_the_cap() {
    let chosen = sizes_of(&["ceil_div(n, 1024)", "1", "ceil_div(n, 512)", "min(ceil_div(n, 256), 132)"]);
    let n = ns(&chosen);
    assert!(n.len() <= SANITIZER_MAX_SIZES, "{n:?}");
    assert!(n.windows(2).all(|w| w[0] < w[1]), "sorted, once each: {n:?}");
    for must in [1, 1024, 1025, 512, 513, 256, 257] {
        assert!(n.contains(&must), "{must} in {n:?}");
    }
    let with_defaults = sanitizer_sizes(
        &[("k".to_string(), parse("ceil_div(n, 1024)").unwrap())],
        &crate::sweep::sizes::SANITIZE_SIZES,
    );
    assert_eq!(with_defaults.len(), 11, "5 from the grid, 6 defaults (1 is shared)");
    assert!(with_defaults.iter().any(|s| s.n == 262_145 && s.why == "a default sanitizer size"));
}

#[test]
fn a_grid_that_needs_a_large_n_keeps_its_first_step_only() {
    let chosen = ns(&sizes_of(&["ceil_div(n, 8388608)"]));
    assert_eq!(chosen, vec![1, 1 << 23, (1 << 23) + 1], "past 2^22 only to reach a second block");
}

#[test]
fn non_monotone_and_failing_grids_do_not_break_the_search() {
    // Grows then wraps: the search still lands on a step of the grid.
    let chosen = sizes_of(&["n % 3000 / 1000 + 1"]);
    let g = |n| grid("n % 3000 / 1000 + 1", n);
    let step = chosen.iter().find(|s| s.why.contains("one more block")).expect("a step").n;
    assert!(g(step - 1) < 2 && g(step) >= 2, "{step}");
    // Division by zero at every n: no size from it, the defaults stand in.
    let bad = vec![("z".to_string(), parse("n / (n - n)").unwrap())];
    assert_eq!(ns(&sanitizer_sizes(&bad, &[1, 33])), vec![1, 33]);
}

const SCAN: &str = "primitive = \"scan\"\ncontract = \"exclusive.i32\"\n[module]\nptx = \"k.ptx\"\n\
    [[scratch]]\nname = \"sums\"\ndtype = \"int64\"\nlen = \"SCRATCH\"\n\
    [[launch]]\nkernel = \"scan3\"\nargs = [\"in\", \"out\", \"sums\"]\ngrid = \"ceil_div(n, 1024)\"\nblock = \"256\"\n";

#[test]
fn the_defaults_go_past_2_28_once_and_deep_past_2_31_once() {
    let sizes = default_sizes(7, false);
    assert!(sizes.contains(&PAST_2_28) && sizes.contains(&(1 << 28)) && !sizes.contains(&PAST_2_31));
    let sizes = default_sizes(7, true);
    assert!(sizes.contains(&PAST_2_28) && sizes.contains(&PAST_2_31) && sizes.contains(&PAST_2_32));
    assert_eq!(sizes.iter().filter(|&&n| n == PAST_2_31 || n == PAST_2_32).count(), 2);
    assert!(PAST_2_31 > 1 << 31 && PAST_2_31 <= u32::MAX as usize);
    assert!(PAST_2_32 > u32::MAX as usize && PAST_2_32 < 1 << 33, "an unsigned 32-bit index wraps there");
}

#[test]
fn past_2_32_is_dropped_for_a_kernel_given_n32_and_kept_for_one_given_n() {
    let dir = folder();
    let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n\
        .visible .entry wide(\n\t.param .u64 a,\n\t.param .u64 b,\n\t.param .u64 c\n)\n{ ret; }\n\
        .visible .entry narrow(\n\t.param .u64 a,\n\t.param .u64 b,\n\t.param .u32 c\n)\n{ ret; }\n";
    std::fs::write(dir.join("n.ptx"), ptx).expect("ptx written");
    let manifest = |kernel: &str, n: &str| {
        format!(
            "primitive = \"scan\"\ncontract = \"exclusive.i32\"\n[module]\nptx = \"n.ptx\"\n[[launch]]\n\
             kernel = \"{kernel}\"\nargs = [\"in\", \"out\", \"{n}\"]\ngrid = \"ceil_div(n, 1024)\"\nblock = \"256\"\n"
        )
    };
    let path = dir.join("check.toml");
    let sizes = vec![1, 33, PAST_2_31, PAST_2_32];
    // Given n (64 bits): every size stays.
    std::fs::write(&path, manifest("wide", "n")).expect("manifest written");
    let (_, kept, lines) = load_launchable(&path, sizes.clone(), None).expect("loads");
    assert_eq!((kept, lines.len()), (sizes.clone(), 0));
    // Given n32: 2^32 + 1000 is dropped, said so; past 2^31 stays (an unsigned int holds it).
    std::fs::write(&path, manifest("narrow", "n32")).expect("manifest written");
    let (_, kept, lines) = load_launchable(&path, sizes, None).expect("loads without 2^32");
    assert_eq!(kept, vec![1, 33, PAST_2_31]);
    assert_eq!(lines.len(), 1);
    assert!(lines[0].starts_with("n = 4294968296 (past 2^32, --deep) skipped: a launch passes n32"), "{}", lines[0]);
    // A size the user asked for is refused as before, by name.
    let e = load_launchable(&path, vec![1 << 33], None).unwrap_err();
    assert_eq!(e.to_string(), "an argument n32 cannot hold n = 8589934592; pass n (64-bit) instead");
}

#[test]
fn a_default_size_the_grid_cannot_launch_is_dropped_with_its_reason() {
    let dir = folder();
    let text = SCAN.replace("SCRATCH", "1").replace("grid = \"ceil_div(n, 1024)\"", "grid = \"n\"");
    std::fs::write(dir.join("check.toml"), text).expect("manifest written");
    let sizes = vec![1, 33, PAST_2_28, PAST_2_31];
    let (m, kept, lines) = load_launchable(&dir.join("check.toml"), sizes, None).expect("loads without 2^31");
    assert_eq!(kept, vec![1, 33, PAST_2_28]);
    assert_eq!(m.launches.len(), 1);
    assert_eq!(lines.len(), 1);
    assert!(lines[0].starts_with("n = 2147484648 skipped: the launch geometry does not hold there"), "{}", lines[0]);
    // A size the user asked for is refused as before.
    assert!(load_launchable(&dir.join("check.toml"), vec![1 << 31], None).is_err());
}

#[test]
fn a_deep_export_visits_the_sizes_of_a_default_check() {
    // `cases export --deep` (the Python package's deep=True) and a default
    // `check` visit the same sizes, the large ones included.
    for seed in [1u64, 0x5eed, u64::MAX] {
        let deep = crate::cases::export::deep_sizes(seed);
        assert_eq!(deep, default_sizes(seed, false), "seed {seed:#x}");
        for n in [1 << 24, 1 << 28, PAST_2_28] {
            assert!(deep.contains(&n), "seed {seed:#x}: {n} missing from {deep:?}");
        }
        assert!(!deep.contains(&PAST_2_31), "--deep of an export stops at 2^28+1");
    }
}
