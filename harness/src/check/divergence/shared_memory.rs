//! Which shared-memory loads read a word that no thread of the block can be
//! writing: those that every path from the kernel's start reaches through a
//! block barrier (or the kernel's start itself) with no shared-memory write
//! after it.
//!
//! Rule relied on: a barrier orders every write its threads made before it
//! ahead of every read after it, so all threads that read one word after the
//! barrier, before any write to shared memory, read the one value it holds
//! (a write by another thread between the barrier and a read, in program
//! order after the read, is a race, which racecheck reports and this pass
//! assumes away). An asynchronous copy (`cp.async`) counts as a write where
//! it is issued: a read of a word it may still be landing in, unordered by
//! its wait and a barrier, is such a race too.

use super::{Cfg, Function, Statement};

/// After statement `s`, given whether no shared-memory write happened
/// since the start or the last barrier before it.
fn clean_after(clean: bool, s: &Statement) -> bool {
    if is_full_barrier(s) {
        return true;
    }
    clean && !writes_shared(&s.opcode)
}

/// A barrier that every thread of the block waits at (`bar.sync 0`; a
/// thread count makes it a barrier of some threads only).
fn is_full_barrier(s: &Statement) -> bool {
    let op = s.opcode.as_str();
    let waits = op.starts_with("bar.sync")
        || op.starts_with("barrier.sync")
        || op.starts_with("bar.red")
        || op.starts_with("barrier.red")
        || op == "bar";
    // `bar.sync 0` and `bar.red.popc.u32 %r, 0, %p` name no thread count.
    let most = if op.contains(".red") { 3 } else { 1 };
    waits && !op.starts_with("bar.warp") && s.operands.len() <= most
}

/// Whether `op` may write shared memory: a store, atomic or reduction whose
/// state space is shared or generic, an asynchronous copy into it, a matrix
/// store, an mbarrier update, or a call (a device function may write it).
fn writes_shared(op: &str) -> bool {
    let root = op.split('.').next().unwrap_or(op);
    let other_space = op.split('.').any(|p| matches!(p, "global" | "local" | "param" | "const"));
    match root {
        "st" | "atom" | "red" | "stmatrix" => op.contains(".shared") || !other_space,
        "cp" => op.contains(".shared") && !op.contains(".commit") && !op.contains(".wait"),
        "mbarrier" | "call" => true,
        _ => false,
    }
}

/// For each statement, whether a shared-memory load there reads a word no
/// thread writes (see the module's rule).
pub(super) fn clean_loads(function: &Function, cfg: &Cfg) -> Vec<bool> {
    let blocks = cfg.blocks.len();
    let mut predecessors: Vec<Vec<usize>> = vec![Vec::new(); blocks];
    for (b, successors) in cfg.successors.iter().enumerate() {
        for &s in successors.iter().flatten() {
            predecessors[s].push(b);
        }
    }
    let out_of = |clean: bool, b: usize| {
        let (start, end) = cfg.blocks[b];
        function.statements[start..end].iter().fold(clean, clean_after)
    };
    // Clean everywhere at first, weakened to the fixpoint (a must-analysis).
    let mut entry = vec![true; blocks];
    loop {
        let mut changed = false;
        // A kernel starts clean; a device function's caller may have written
        // shared memory just before the call.
        for b in 0..blocks {
            let start = b != 0 || function.entry;
            let clean = start && predecessors[b].iter().all(|&p| out_of(entry[p], p));
            if clean != entry[b] {
                entry[b] = clean;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut clean = vec![false; function.statements.len()];
    for (b, &(start, end)) in cfg.blocks.iter().enumerate() {
        let mut state = entry[b];
        for (i, s) in function.statements[start..end].iter().enumerate() {
            clean[start + i] = state;
            state = clean_after(state, s);
        }
    }
    clean
}
