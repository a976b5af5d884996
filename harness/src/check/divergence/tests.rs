//! The divergence pass on planted PTX (each shape of the bug and of its
//! correct twin) and on the user-kernel gallery compiled by NVRTC.

use super::*;

/// A kernel body in PTX: `prelude` computes %r1 = tid.x, %r2 = tid.x / 32
/// (the warp), %rd1 = blockIdx.x * blockDim.x + tid.x (the item) and
/// %rd2 = n; `body` follows.
pub(super) fn kernel(body: &str) -> String {
    format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(\n\t.param .u64 k_param_0\n)\n{{\n\
         \t.reg .pred %p<9>;\n\t.reg .b32 %r<20>;\n\t.reg .b64 %rd<9>;\n\
         \tld.param.u64 %rd2, [k_param_0];\n\tmov.u32 %r3, %ctaid.x;\n\tmov.u32 %r4, %ntid.x;\n\
         \tmul.wide.u32 %rd3, %r3, %r4;\n\tmov.u32 %r1, %tid.x;\n\tcvt.u64.u32 %rd4, %r1;\n\
         \tadd.s64 %rd1, %rd3, %rd4;\n\tshr.u32 %r2, %r1, 5;\n\tmov.u32 %r9, -1;\n{body}\n}}\n"
    )
}

fn kinds(ptx: &str) -> Vec<Kind> {
    analyze(ptx).into_iter().map(|f| f.kind).collect()
}

/// Each finding's kind and certainty.
pub(super) fn verdicts(ptx: &str) -> Vec<(Kind, Certainty)> {
    analyze(ptx).into_iter().map(|f| (f.kind, f.certainty)).collect()
}

/// NVRTC, or a failure that says how to get it: a compile test that did
/// not run must never pass.
pub(super) fn require_nvrtc() {
    if let Err(e) = kernels::compile::ensure_nvrtc() {
        panic!("{e}: run `make verify` (or scripts/install_nvrtc.sh and set LD_LIBRARY_PATH)");
    }
}

/// `source` compiled as `check` compiles a user's CUDA (compute_90, -lineinfo).
pub(super) fn compiled(source: &str) -> String {
    require_nvrtc();
    kernels::user_source::compile_user_ptx("kernel.cu", source, "compute_90", &[]).expect("compiles").ptx
}

#[test]
fn an_early_return_before_a_barrier_is_found() {
    let ptx = kernel(
        "\tsetp.ge.u64 %p1, %rd1, %rd2;\n\t@%p1 bra $L_end;\n\tbar.sync 0;\n\tst.global.u32 [%rd2], %r1;\n$L_end:\n\tret;",
    );
    let found = analyze(&ptx);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].kind, found[0].certainty), (Kind::Barrier, Certainty::Proven));
    assert!(found[0].statement.starts_with("bar.sync"));
    // The launch that shows it: n = 1 keeps thread 0 and returns thread 1.
    assert_eq!(
        found[0].witness.as_deref(),
        Some("threads 0 and 1 of a block of 32, block 0 of 1, k_param_0 = 1 take different sides")
    );
    // Predicated return, the same shape.
    let ptx = kernel("\tsetp.ge.u64 %p1, %rd1, %rd2;\n\t@%p1 ret;\n\tbar.sync 0;\n\tret;");
    assert_eq!(verdicts(&ptx), vec![(Kind::Barrier, Certainty::Proven)]);
}

#[test]
fn a_barrier_in_a_warp_branch_is_found_and_a_warp_collective_there_is_not() {
    let warp_branch = |inside: &str| {
        kernel(&format!("\tsetp.ne.s32 %p1, %r2, 0;\n\t@%p1 bra $L_join;\n\t{inside}\n$L_join:\n\tret;"))
    };
    assert_eq!(verdicts(&warp_branch("bar.sync 0;")), vec![(Kind::Barrier, Certainty::Proven)]);
    assert!(kinds(&warp_branch("shfl.sync.down.b32 %r5|%p2, %r1, 16, 31, %r9;")).is_empty());
    assert!(kinds(&warp_branch("vote.sync.ballot.b32 %r6, %p1, -1;")).is_empty());
    // `threadIdx.x < 32` is warp 0 whole: the same.
    let first_warp = kernel(
        "\tsetp.ge.u32 %p1, %r1, 32;\n\t@%p1 bra $L_j;\n\tshfl.sync.bfly.b32 %r5|%p2, %r1, 1, 31, -1;\n$L_j:\n\tret;",
    );
    assert!(kinds(&first_warp).is_empty());
}

#[test]
fn a_full_mask_collective_under_a_lane_branch_is_found() {
    let ptx = kernel(
        "\tsetp.ge.u64 %p1, %rd1, %rd2;\n\t@%p1 bra $L_end;\n\tshfl.sync.down.b32 %r5|%p2, %r1, 16, 31, %r9;\n\
         \tbar.warp.sync -1;\n$L_end:\n\tret;",
    );
    assert_eq!(verdicts(&ptx), vec![(Kind::FullMask, Certainty::Proven); 2]);
}

#[test]
fn a_computed_mask_shuffle_under_a_lane_branch_is_found() {
    let ptx = kernel(
        "\tsetp.ge.u64 %p1, %rd1, %rd2;\n\t@%p1 bra $L_end;\n\tactivemask.b32 %r6;\n\
         \tshfl.sync.down.b32 %r5|%p2, %r1, 16, 31, %r6;\n$L_end:\n\tret;",
    );
    assert_eq!(verdicts(&ptx), vec![(Kind::PartialMaskShuffle, Certainty::Proven)]);
}

#[test]
fn collectives_after_the_branch_joins_and_in_uniform_loops_are_not_found() {
    // if (i < n) load; then the block's shuffles and barrier: every thread is back.
    let ptx = kernel(
        "\tmov.u32 %r7, 0;\n\tsetp.ge.u64 %p1, %rd1, %rd2;\n\t@%p1 bra $L_join;\n\tld.global.u32 %r7, [%rd2];\n\
         $L_join:\n\tshfl.sync.down.b32 %r5|%p2, %r7, 16, 31, -1;\n\tbar.sync 0;\n\tret;",
    );
    assert!(kinds(&ptx).is_empty(), "{:?}", analyze(&ptx));
    // A loop bounded by a parameter, a barrier in its body.
    let ptx = kernel(
        "\tmov.u64 %rd5, 0;\n$L_loop:\n\tbar.sync 0;\n\tadd.s64 %rd5, %rd5, 1;\n\tsetp.lt.u64 %p1, %rd5, %rd2;\n\
         \t@%p1 bra $L_loop;\n\tret;",
    );
    assert!(kinds(&ptx).is_empty(), "{:?}", analyze(&ptx));
    // The same loop bounded by the item index: its barrier is found, as
    // undecided (the counter is carried by the loop, which the witness
    // search does not evaluate).
    let ptx = kernel(
        "\tmov.u64 %rd5, 0;\n$L_loop:\n\tbar.sync 0;\n\tadd.s64 %rd5, %rd5, 1;\n\tsetp.lt.u64 %p1, %rd5, %rd1;\n\
         \t@%p1 bra $L_loop;\n\tret;",
    );
    assert_eq!(verdicts(&ptx), vec![(Kind::Barrier, Certainty::Undecided)]);
}

#[test]
fn a_finding_names_its_lines_and_a_marked_line_is_intended() {
    let ptx = ".file 1 \"k.cu\"\n".to_string()
        + &kernel("\t.loc 1 7 3\n\tsetp.ge.u64 %p1, %rd1, %rd2;\n\t@%p1 bra $L_e;\n\t.loc 1 9 5\n\tbar.sync 0;\n$L_e:\n\tret;");
    let found = analyze(&ptx);
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].source, found[0].branch.1), (Some((1, 9)), Some((1, 7))));
    assert_eq!(files(&ptx).get(&1).map(String::as_str), Some("k.cu"));
    let source: Vec<String> =
        (1..=9).map(|l| if l == 9 { "__syncthreads(); // primlab: intended".into() } else { String::new() }).collect();
    assert!(intended(&found[0], &ptx, Some(&source)));
    assert!(!intended(&found[0], &ptx, Some(&source[..8])));
}

/// The gallery's kernels, compiled as `check` compiles them: the divergent
/// collectives it plants are proven (failures), the branch on a segment's
/// bounds loaded from global memory before a barrier is undecided (a
/// warning), and every control, and every other bug, has no finding.
#[test]
fn the_gallery_s_divergent_collectives_are_found_and_its_controls_are_clean() {
    require_nvrtc();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/check/bugs");
    let mut found: BTreeMap<String, Vec<(Kind, Certainty)>> = BTreeMap::new();
    for entry in std::fs::read_dir(&root).expect("the gallery").flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let Ok(text) = std::fs::read_to_string(entry.path().join("kernel.cu")) else { continue };
        found.insert(name, verdicts(&compiled(&text)));
    }
    assert!(found.len() >= 40, "{} kernels", found.len());
    let has = |name: &str, kind: Kind| found.get(name).is_some_and(|k| k.contains(&(kind, Certainty::Proven)));
    assert!(has("14_scan_early_return_barrier", Kind::Barrier), "{found:?}");
    assert!(has("14_scan_early_return_barrier", Kind::FullMask), "{found:?}");
    assert!(has("22_reduce_full_mask_in_branch", Kind::FullMask), "{found:?}");
    assert!(has("81_fsum_activemask_tail", Kind::PartialMaskShuffle), "{found:?}");
    assert!(has("83_fsum_shuffle_in_thread_zero", Kind::FullMask), "{found:?}");
    let with = |certainty: Certainty| -> Vec<&str> {
        found.iter().filter(|(_, k)| k.iter().any(|v| v.1 == certainty)).map(|(n, _)| n.as_str()).collect()
    };
    let proven = [
        "14_scan_early_return_barrier",
        "22_reduce_full_mask_in_branch",
        "81_fsum_activemask_tail",
        "83_fsum_shuffle_in_thread_zero",
    ];
    assert_eq!(with(Certainty::Proven), proven, "{found:?}");
    // `if (begin == end) continue;` on offsets[s] read by every thread from
    // global memory, which another block could write: not provably uniform.
    assert_eq!(with(Certainty::Undecided), ["50_segsum_empty_segment_skipped"], "{found:?}");
    assert!(found["50_segsum_empty_segment_skipped"].iter().all(|&(k, _)| k == Kind::Barrier), "{found:?}");
}

/// Our own kernels are correct: the pass finds nothing in any family,
/// neither a failure nor a warning.
#[test]
fn our_kernels_have_no_divergent_collective() {
    require_nvrtc();
    for family in kernels::KernelFamily::ALL {
        let unit = kernels::sources::translation_unit(family.file()).expect("resolves");
        let ptx =
            kernels::user_source::compile_user_ptx(family.file(), &unit, "compute_90", &[]).expect("compiles").ptx;
        let found = analyze(&ptx);
        let lines: Vec<String> = found
            .iter()
            .map(|f| format!("{} line {} {:?} {:?}: {}", f.function, f.ptx_line, f.kind, f.certainty, f.statement))
            .collect();
        assert!(found.is_empty(), "{}: {}", family.file(), lines.join("\n"));
    }
}

/// A warp's lanes of one full butterfly reduction hold one value: a branch on
/// it is warp-uniform. Four of the five steps leave lanes apart.
#[test]
fn a_branch_on_a_butterfly_all_reduction_or_a_broadcast_is_warp_uniform() {
    let butterfly = |steps: &[u32]| {
        let mut body = String::from("\tld.global.u32 %r10, [%rd1];\n");
        let mut value = "%r10".to_string();
        for (i, m) in steps.iter().enumerate() {
            let (shuffled, sum) = (format!("%r{}", 11 + 2 * i), format!("%r{}", 12 + 2 * i));
            body += &format!(
                "\tshfl.sync.bfly.b32 {shuffled}|%p{}, {value}, {m}, 31, -1;\n\tadd.s32 {sum}, {value}, {shuffled};\n",
                2 + i % 6
            );
            value = sum;
        }
        body + &format!("\tsetp.eq.s32 %p1, {value}, 0;\n\t@%p1 bra $L_e;\n\tshfl.sync.down.b32 %r5|%p8, %r1, 1, 31, -1;\n$L_e:\n\tret;")
    };
    assert!(kinds(&kernel(&butterfly(&[16, 8, 4, 2, 1]))).is_empty());
    assert!(kinds(&kernel(&butterfly(&[1, 2, 4, 8, 16]))).is_empty());
    // Loaded data: the pass cannot tell whether the lanes split.
    assert_eq!(verdicts(&kernel(&butterfly(&[16, 8, 4, 2]))), vec![(Kind::FullMask, Certainty::Undecided)]);
    // A broadcast from lane 0, and from a lane the data chose.
    let broadcast = |lane: &str| {
        kernel(&format!(
            "\tld.global.u32 %r10, [%rd1];\n\tshfl.sync.idx.b32 %r11|%p2, %r10, {lane}, 31, -1;\n\tsetp.eq.s32 %p1, %r11, 0;\n\
             \t@%p1 bra $L_e;\n\tbar.warp.sync -1;\n$L_e:\n\tret;"
        ))
    };
    assert!(kinds(&broadcast("0")).is_empty());
    assert_eq!(verdicts(&broadcast("%r1")), vec![(Kind::FullMask, Certainty::Undecided)]);
}

/// Conditions on the thread index are evaluated for every index a block can
/// have: `threadIdx.x / 32 == 0` as the compiler writes it is warp-uniform;
/// `threadIdx.x + 5 < 32` is not.
#[test]
fn thread_index_conditions_are_evaluated_exactly() {
    let under = |condition: &str| {
        kernel(&format!("{condition}\t@%p1 bra $L_e;\n\tshfl.sync.down.b32 %r5|%p2, %r1, 1, 31, -1;\n$L_e:\n\tret;"))
    };
    let signed_first_warp = "\tadd.s32 %r10, %r1, 31;\n\tsetp.gt.u32 %p1, %r10, 62;\n";
    assert!(kinds(&under(signed_first_warp)).is_empty());
    let shifted = "\tadd.s32 %r10, %r1, 5;\n\tsetp.lt.u32 %p1, %r10, 32;\n";
    assert_eq!(verdicts(&under(shifted)), vec![(Kind::FullMask, Certainty::Proven)]);
    let lane_zero = "\tand.b32 %r10, %r1, 31;\n\tsetp.eq.s32 %p1, %r10, 0;\n";
    assert_eq!(verdicts(&under(lane_zero)), vec![(Kind::FullMask, Certainty::Proven)]);
    let odd_warps = "\tshr.u32 %r10, %r1, 5;\n\tand.b32 %r11, %r10, 1;\n\tsetp.eq.s32 %p1, %r11, 1;\n";
    assert!(kinds(&under(odd_warps)).is_empty());
    // A barrier under a warp-uniform condition is still divergent for the block.
    let ptx = kernel(&format!("{signed_first_warp}\t@%p1 bra $L_e;\n\tbar.sync 0;\n$L_e:\n\tret;"));
    assert_eq!(verdicts(&ptx), vec![(Kind::Barrier, Certainty::Proven)]);
}
