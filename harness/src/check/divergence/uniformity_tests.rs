//! The uniform patterns the pass proves (no finding), their divergent twins
//! (failures) and what it cannot decide (warnings), on planted PTX and on
//! CUDA compiled by NVRTC.

use super::tests::{compiled, kernel, verdicts};
use super::*;

const PROVEN_WARP: (Kind, Certainty) = (Kind::FullMask, Certainty::Proven);
const UNDECIDED_BARRIER: (Kind, Certainty) = (Kind::Barrier, Certainty::Undecided);

/// PTX of a butterfly all-reduction of `value` by the `steps`, in registers
/// from `%r{first}` on; returns it and the register holding the result.
fn butterfly(value: &str, first: usize, steps: &[u32]) -> (String, String) {
    let mut text = String::new();
    let mut value = value.to_string();
    for (i, m) in steps.iter().enumerate() {
        let (shuffled, sum) = (format!("%r{}", first + 2 * i), format!("%r{}", first + 2 * i + 1));
        text += &format!(
            "\tshfl.sync.bfly.b32 {shuffled}|%p7, {value}, {m}, 31, -1;\n\tmax.s32 {sum}, {value}, {shuffled};\n"
        );
        value = sum;
    }
    (text, value)
}

/// The block maximum of the softmax: a butterfly per warp, lane 0 writes its
/// warp's total to shared memory, `barrier`, every warp reads the totals
/// back at `address` (`lane < warps`, else the identity) and does the
/// `second` butterfly; then `if (m == 0) return;` before a barrier.
fn block_max(barrier: &str, address: &str, second: &[u32]) -> String {
    let (first_steps, warp_total) = butterfly("%r10", 20, &[16, 8, 4, 2, 1]);
    let (second_steps, m) = butterfly("%r7", 40, second);
    kernel(&format!(
        "\tld.global.u32 %r10, [%rd1];\n{first_steps}\tand.b32 %r5, %r1, 31;\n\tsetp.ne.s32 %p3, %r5, 0;\n\
         \tmov.u64 %rd6, smem;\n\t@%p3 bra $L_w;\n\tmul.wide.u32 %rd5, %r2, 4;\n\tadd.s64 %rd7, %rd6, %rd5;\n\
         \tst.shared.u32 [%rd7], {warp_total};\n$L_w:\n{barrier}\tshr.u32 %r6, %r4, 5;\n\
         \tsetp.ge.u32 %p4, %r5, %r6;\n\tmov.u32 %r7, 0;\n\t@%p4 bra $L_r;\n\tmul.wide.u32 %rd8, {address}, 4;\n\
         \tadd.s64 %rd9, %rd6, %rd8;\n\tld.shared.u32 %r7, [%rd9];\n$L_r:\n{second_steps}\
         \tsetp.eq.s32 %p5, {m}, 0;\n\t@%p5 bra $L_e;\n\tbar.sync 0;\n$L_e:\n\tret;"
    ))
}

/// Each warp's second butterfly reads the warp totals lane by lane after a
/// barrier: every thread of the block holds the same maximum, and a branch
/// on it keeps the block together. Each ingredient is needed.
#[test]
fn a_butterfly_over_shared_totals_read_after_a_barrier_is_block_uniform() {
    let all = [16, 8, 4, 2, 1];
    assert!(verdicts(&block_max("\tbar.sync 0;\n", "%r5", &all)).is_empty());
    // No barrier between the totals' writes and their reads.
    assert_eq!(verdicts(&block_max("", "%r5", &all)), vec![UNDECIDED_BARRIER]);
    // A write to shared memory after the barrier, before the reads.
    assert_eq!(
        verdicts(&block_max("\tbar.sync 0;\n\tst.shared.u32 [smem], %r1;\n", "%r5", &all)),
        vec![UNDECIDED_BARRIER]
    );
    // Each warp reads its own total (by the warp index, not the lane).
    assert_eq!(verdicts(&block_max("\tbar.sync 0;\n", "%r2", &all)), vec![UNDECIDED_BARRIER]);
    // Four butterfly steps leave lanes apart.
    assert_eq!(verdicts(&block_max("\tbar.sync 0;\n", "%r5", &all[..4])), vec![UNDECIDED_BARRIER]);
}

/// The same in CUDA, as users write it: `if (m == -INFINITY) return;`
/// between the block maximum and a later barrier.
#[test]
fn the_softmax_block_maximum_compiled_by_nvrtc_keeps_the_block_together() {
    let source = |read: &str| {
        format!(
            "extern \"C\" __global__ void k(const float* in, float* out) {{\n\
             __shared__ float partials[32];\n\
             const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;\n\
             float v = in[blockIdx.x * blockDim.x + threadIdx.x];\n\
             for (unsigned k = 16; k > 0; k >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, k));\n\
             if (lane == 0) partials[warp] = v;\n\
             __syncthreads();\n\
             v = lane < warps ? partials[{read}] : -__int_as_float(0x7f800000);\n\
             for (unsigned k = 16; k > 0; k >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, k));\n\
             if (v == -__int_as_float(0x7f800000)) return;\n\
             __syncthreads();\n\
             out[blockIdx.x * blockDim.x + threadIdx.x] = v;\n}}\n"
        )
    };
    assert!(verdicts(&compiled(&source("lane"))).is_empty());
    // Each warp's own total: warp-uniform only, and not provably divergent.
    assert_eq!(verdicts(&compiled(&source("warp"))), vec![UNDECIDED_BARRIER]);
}

/// A flag thread 0 writes to shared memory, read by every thread after a
/// barrier (the last-block pattern): a branch on it keeps the block
/// together. Without the barrier, or with a shared write between the
/// barrier and the read, the pass cannot tell.
#[test]
fn a_shared_word_read_after_a_barrier_is_block_uniform() {
    let flag = |between: &str| {
        kernel(&format!(
            "\tsetp.ne.s32 %p3, %r1, 0;\n\t@%p3 bra $L_w;\n\tld.global.u32 %r10, [%rd2];\n\tst.shared.u32 [flag], %r10;\n\
             $L_w:\n{between}\tld.shared.u32 %r11, [flag];\n\tsetp.eq.s32 %p4, %r11, 0;\n\t@%p4 bra $L_e;\n\
             \tbar.sync 0;\n$L_e:\n\tret;"
        ))
    };
    assert!(verdicts(&flag("\tbar.sync 0;\n")).is_empty());
    assert_eq!(verdicts(&flag("")), vec![UNDECIDED_BARRIER]);
    assert_eq!(verdicts(&flag("\tbar.sync 0;\n\tst.shared.u32 [other], %r1;\n")), vec![UNDECIDED_BARRIER]);
    // A partial barrier (a thread count) does not order the whole block.
    assert_eq!(verdicts(&flag("\tbar.sync 1, 64;\n")), vec![UNDECIDED_BARRIER]);
}

/// `gid == 0` and `threadIdx.x == 0` hold in one lane: proven, whatever
/// the lane-level value is compared with.
#[test]
fn equality_of_a_lane_index_with_a_constant_is_proven_divergent() {
    let under = |condition: &str| {
        kernel(&format!("{condition}\t@%p1 bra $L_e;\n\tshfl.sync.bfly.b32 %r5|%p2, %r1, 1, 31, -1;\n$L_e:\n\tret;"))
    };
    let gid_zero = analyze(&under("\tsetp.ne.s64 %p1, %rd1, 0;\n"));
    assert_eq!(gid_zero.iter().map(|f| (f.kind, f.certainty)).collect::<Vec<_>>(), vec![PROVEN_WARP]);
    assert!(gid_zero[0].witness.as_deref().is_some_and(|w| w.starts_with("threads 0 and 1 ")), "{gid_zero:?}");
    assert_eq!(verdicts(&under("\tsetp.ne.s32 %p1, %r1, 0;\n")), vec![PROVEN_WARP]);
    assert_eq!(verdicts(&under("\tsetp.ne.s64 %p1, %rd1, 64;\n")), vec![PROVEN_WARP]);
    // In order against a multiple of 32, with an offset that is one too: warp-uniform.
    assert!(verdicts(&under("\tsetp.ge.u64 %p1, %rd1, 64;\n")).is_empty());
    assert!(verdicts(&under("\tsetp.ge.u32 %p1, %r1, 32;\n")).is_empty());
    // An offset of unknown alignment (n): `(threadIdx.x + n) / 32` splits warps.
    let shifted =
        "\tcvt.u32.u64 %r6, %rd2;\n\tadd.s32 %r7, %r1, %r6;\n\tshr.u32 %r8, %r7, 5;\n\tsetp.ne.s32 %p1, %r8, 0;\n";
    assert_eq!(verdicts(&under(shifted)), vec![PROVEN_WARP]);
    // `threadIdx.x < n`: n = 1 splits the first warp.
    assert_eq!(verdicts(&under("\tcvt.u32.u64 %r6, %rd2;\n\tsetp.ge.u32 %p1, %r1, %r6;\n")), vec![PROVEN_WARP]);
}

/// `threadIdx.x < 32` keeps warps whole but splits a block of more than one
/// warp: a barrier under it is proven divergent for such blocks only.
#[test]
fn a_warp_uniform_branch_splits_a_block_only_when_the_block_has_more_warps() {
    let ptx = kernel("\tsetp.ge.u32 %p1, %r1, 32;\n\t@%p1 bra $L_e;\n\tbar.sync 0;\n$L_e:\n\tret;");
    assert_eq!(verdicts(&ptx), vec![(Kind::Barrier, Certainty::Proven)]);
    let one_warp = |_: &str| Launches { block_sizes: vec![32] };
    assert!(analyze_with(&ptx, &one_warp).is_empty());
    let blocks_of_64 = |_: &str| Launches { block_sizes: vec![64] };
    let found = analyze_with(&ptx, &blocks_of_64);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].witness.as_deref(), Some("threads 0 and 32 of a block of 64 take different sides"));
}

/// A branch on data loaded per thread before a barrier: the pass cannot
/// decide it (a warning, never a failure).
#[test]
fn a_branch_on_loaded_data_is_undecided() {
    let ptx = kernel(
        "\tld.global.u32 %r10, [%rd1];\n\tsetp.eq.s32 %p1, %r10, 0;\n\t@%p1 bra $L_e;\n\tbar.sync 0;\n$L_e:\n\tret;",
    );
    let found = analyze(&ptx);
    assert_eq!(found.iter().map(|f| (f.kind, f.certainty)).collect::<Vec<_>>(), vec![UNDECIDED_BARRIER]);
    assert_eq!(found[0].witness, None);
    assert!(found[0].what().contains("cannot prove"), "{}", found[0].what());
}

/// Branches on the block index, the block size and the parameters keep
/// the block together.
#[test]
fn branches_on_parameters_and_the_block_index_are_block_uniform() {
    let ptx = kernel(
        "\tsetp.ge.u32 %p1, %r3, 7;\n\t@%p1 bra $L_e;\n\tcvt.u32.u64 %r6, %rd2;\n\tsetp.eq.s32 %p2, %r6, 5;\n\
         \t@%p2 bra $L_e;\n\tmul.lo.s32 %r7, %r3, %r4;\n\tsetp.lt.u32 %p3, %r7, %r6;\n\t@%p3 bra $L_e;\n\
         \tbar.sync 0;\n\tshfl.sync.bfly.b32 %r5|%p4, %r1, 1, 31, -1;\n$L_e:\n\tret;",
    );
    assert!(verdicts(&ptx).is_empty(), "{:?}", analyze(&ptx));
}

/// A word loaded at one address by every thread: from read-only memory
/// (`ld.global.nc`, constant memory) it is the same in the block; from
/// plain global memory only within one warp's instruction (another block
/// may write it between two warps' loads).
#[test]
fn a_uniform_address_load_is_block_uniform_only_from_read_only_memory() {
    let on = |load: &str, collective: &str| {
        kernel(&format!(
            "\t{load} %r10, [%rd2];\n\tsetp.eq.s32 %p1, %r10, 0;\n\t@%p1 bra $L_e;\n\t{collective}\n$L_e:\n\tret;"
        ))
    };
    assert!(verdicts(&on("ld.global.nc.u32", "bar.sync 0;")).is_empty());
    assert!(verdicts(&on("ld.const.u32", "bar.sync 0;")).is_empty());
    assert_eq!(verdicts(&on("ld.global.u32", "bar.sync 0;")), vec![UNDECIDED_BARRIER]);
    assert!(verdicts(&on("ld.global.u32", "shfl.sync.bfly.b32 %r5|%p2, %r1, 1, 31, -1;")).is_empty());
    // Local memory is each thread's own.
    let local = on("ld.local.u32", "shfl.sync.bfly.b32 %r5|%p2, %r1, 1, 31, -1;");
    assert_eq!(verdicts(&local), vec![(Kind::FullMask, Certainty::Undecided)]);
}

/// A device function's parameters are its callers' arguments, which may
/// differ thread by thread.
#[test]
fn a_device_function_s_parameter_is_not_uniform() {
    let function = |header: &str| {
        format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n{header} f(\n\t.param .u32 f_param_0\n)\n{{\n\
             \tld.param.u32 %r1, [f_param_0];\n\tsetp.eq.s32 %p1, %r1, 0;\n\t@%p1 bra $L_e;\n\tbar.sync 0;\n$L_e:\n\tret;\n}}\n"
        )
    };
    assert!(verdicts(&function(".visible .entry")).is_empty());
    assert_eq!(verdicts(&function(".func")), vec![UNDECIDED_BARRIER]);
    // Its caller may have written shared memory just before the call: a
    // shared word it reads before any barrier of its own is not known alike.
    let shared = function(".func").replace("ld.param.u32 %r1, [f_param_0]", "ld.shared.u32 %r1, [flag]");
    assert_eq!(verdicts(&shared), vec![UNDECIDED_BARRIER]);
    let after_a_barrier = shared.replace("\tld.shared", "\tbar.sync 0;\n\tld.shared");
    assert!(verdicts(&after_a_barrier).is_empty());
}

/// The compiler reuses the thread index's register as a loop counter
/// further on: each read is judged by the definitions that reach it.
#[test]
fn a_register_reused_later_is_judged_where_it_is_read() {
    let ptx = kernel(
        "\tmov.u32 %r11, %tid.x;\n\tshr.u32 %r12, %r11, 5;\n\tsetp.ne.s32 %p1, %r12, 0;\n\t@%p1 bra $L_j;\n\
         \tshfl.sync.bfly.b32 %r5|%p2, %r11, 1, 31, -1;\n$L_j:\n\tadd.s32 %r11, %r11, %r4;\n\
         \tsetp.lt.u32 %p3, %r11, 1000;\n\t@%p3 bra $L_j;\n\tret;",
    );
    assert!(verdicts(&ptx).is_empty(), "{:?}", analyze(&ptx));
    // A value chosen by a lane-dependent branch depends on it.
    let chosen = kernel(
        "\tmov.u32 %r11, 0;\n\tsetp.ne.s32 %p1, %r1, 0;\n\t@%p1 bra $L_j;\n\tmov.u32 %r11, 64;\n$L_j:\n\
         \tshr.u32 %r12, %r11, 5;\n\tsetp.eq.s32 %p2, %r12, 0;\n\t@%p2 bra $L_e;\n\tbar.warp.sync -1;\n$L_e:\n\tret;",
    );
    assert_eq!(verdicts(&chosen), vec![(Kind::FullMask, Certainty::Undecided)]);
}

/// A proof keeps to the launches that reach the branch: under
/// `if (n % 32 == 0)`, `gid < n` keeps warps whole for every n that gets
/// there (undecided, as the pass cannot prove it), while under
/// `if (n % 2 == 0)` it splits one (n = 2).
#[test]
fn a_proof_meets_the_conditions_on_the_way_to_the_branch() {
    let under = |modulus: u32| {
        kernel(&format!(
            "\tcvt.u32.u64 %r6, %rd2;\n\trem.u32 %r7, %r6, {modulus};\n\tsetp.ne.s32 %p1, %r7, 0;\n\t@%p1 bra $L_e;\n\
             \tsetp.ge.u64 %p2, %rd1, %rd2;\n\t@%p2 bra $L_e;\n\tshfl.sync.bfly.b32 %r5|%p3, %r1, 1, 31, -1;\n$L_e:\n\tret;"
        ))
    };
    assert_eq!(verdicts(&under(32)), vec![(Kind::FullMask, Certainty::Undecided)]);
    let found = analyze(&under(2));
    assert_eq!(found.iter().map(|f| (f.kind, f.certainty)).collect::<Vec<_>>(), vec![PROVEN_WARP]);
    assert!(found[0].witness.as_deref().is_some_and(|w| w.contains("k_param_0 = 2")), "{found:?}");
}
