//! Reaching definitions: for each statement and each register it reads, the
//! statements whose definition of that register may be the one it reads.
//! PTX from a compiler reuses registers (the thread index's register
//! becomes a loop counter further on), so a register's value is judged at
//! each use, from the definitions that reach it, not from all of them.
//!
//! Rule relied on: a definition reaches a statement when a path leads from
//! it to the statement with no unguarded definition of the same register in
//! between (a guarded one may not execute, so it kills nothing).

use std::collections::BTreeMap;

use super::{has_destination, registers, Cfg, Function, Statement};

/// The reaching definitions of every read of a function.
pub(super) struct Reaching {
    /// Per statement: each register it reads, with the defining statements
    /// that may reach the read.
    reads: Vec<Vec<(String, Vec<usize>)>>,
}

impl Reaching {
    /// The statements whose definition of `register` may reach statement `at`.
    pub(super) fn defs(&self, at: usize, register: &str) -> &[usize] {
        let reads = self.reads.get(at).map(Vec::as_slice).unwrap_or(&[]);
        reads.iter().find(|(r, _)| r == register).map_or(&[], |(_, d)| d.as_slice())
    }
}

/// The registers a statement defines (none for a store, branch or barrier).
pub(super) fn defined(s: &Statement) -> Vec<String> {
    if has_destination(&s.opcode) && !s.operands.is_empty() {
        registers(&s.operands[0])
    } else {
        Vec::new()
    }
}

/// The registers a statement reads: its sources and its guard.
fn read(s: &Statement) -> Vec<String> {
    let from = usize::from(has_destination(&s.opcode));
    let mut out: Vec<String> = s.operands.iter().skip(from).flat_map(|o| registers(o)).collect();
    out.extend(s.guard.as_ref().map(|(_, p)| p.clone()));
    out.sort();
    out.dedup();
    out
}

/// A set of definitions (indices into `Defs::all`).
#[derive(Clone, PartialEq, Eq)]
struct Set(Vec<u64>);

impl Set {
    fn empty(size: usize) -> Set {
        Set(vec![0; size.div_ceil(64)])
    }
    fn has(&self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 == 1
    }
    fn add(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn remove(&mut self, i: usize) {
        self.0[i / 64] &= !(1 << (i % 64));
    }
    fn union(&mut self, other: &Set) {
        self.0.iter_mut().zip(&other.0).for_each(|(a, b)| *a |= b);
    }
}

/// Every definition: (statement, register), and each register's definitions.
struct Defs {
    all: Vec<(usize, String)>,
    of_register: BTreeMap<String, Vec<usize>>,
    /// Per statement, the definitions it makes.
    at: Vec<Vec<usize>>,
}

impl Defs {
    fn new(function: &Function) -> Defs {
        let mut defs = Defs { all: Vec::new(), of_register: BTreeMap::new(), at: Vec::new() };
        for (i, s) in function.statements.iter().enumerate() {
            let mut here = Vec::new();
            for register in defined(s) {
                let id = defs.all.len();
                defs.of_register.entry(register.clone()).or_default().push(id);
                defs.all.push((i, register));
                here.push(id);
            }
            defs.at.push(here);
        }
        defs
    }

    /// `set` after statement `i`.
    fn step(&self, set: &mut Set, i: usize, guarded: bool) {
        for &id in &self.at[i] {
            if !guarded {
                self.of_register[&self.all[id].1].iter().for_each(|&other| set.remove(other));
            }
            set.add(id);
        }
    }
}

/// `register` with the statements of its definitions in `set`.
fn reaching_of(defs: &Defs, set: &Set, register: String) -> (String, Vec<usize>) {
    let ids = defs.of_register.get(&register).map_or(&[][..], Vec::as_slice);
    let statements = ids.iter().filter(|&&id| set.has(id)).map(|&id| defs.all[id].0).collect();
    (register, statements)
}

/// The reaching definitions of `function`.
pub(super) fn reaching(function: &Function, cfg: &Cfg) -> Reaching {
    let defs = Defs::new(function);
    let size = defs.all.len();
    let mut predecessors: Vec<Vec<usize>> = vec![Vec::new(); cfg.blocks.len()];
    for (b, successors) in cfg.successors.iter().enumerate() {
        successors.iter().flatten().for_each(|&s| predecessors[s].push(b));
    }
    let through = |set: &Set, b: usize| {
        let mut out = set.clone();
        let (start, end) = cfg.blocks[b];
        (start..end).for_each(|i| defs.step(&mut out, i, function.statements[i].guard.is_some()));
        out
    };
    let mut entry = vec![Set::empty(size); cfg.blocks.len()];
    let mut exit: Vec<Set> = (0..cfg.blocks.len()).map(|b| through(&entry[b], b)).collect();
    loop {
        let mut changed = false;
        for b in 0..cfg.blocks.len() {
            let mut set = Set::empty(size);
            predecessors[b].iter().for_each(|&p| set.union(&exit[p]));
            if set != entry[b] {
                exit[b] = through(&set, b);
                entry[b] = set;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut reads = vec![Vec::new(); function.statements.len()];
    for (b, &(start, end)) in cfg.blocks.iter().enumerate() {
        let mut set = entry[b].clone();
        for (i, s) in function.statements.iter().enumerate().take(end).skip(start) {
            reads[i] = read(s).into_iter().map(|r| reaching_of(&defs, &set, r)).collect();
            defs.step(&mut set, i, s.guard.is_some());
        }
    }
    Reaching { reads }
}
