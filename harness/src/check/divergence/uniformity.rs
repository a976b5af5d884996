//! The [`Fact`] of every register of a function: a fixpoint over all its
//! definitions, each fact starting at "the same for the whole block" and
//! weakened until every definition agrees with it.
//!
//! Rules relied on:
//! * an operation of equal inputs gives equal outputs: a value is the same
//!   across a warp, or across the warps lane by lane, when all it reads is;
//! * the thread index plus a uniform multiple of 32 ([`Level::Lane`]),
//!   shifted right by 5 or more bits, divided (unsigned) by a multiple of
//!   32, masked by a multiple of 32 or compared in order (`<`, `>=`, ...)
//!   with a uniform multiple of 32, is the same across a warp: a warp is 32
//!   consecutive thread indices from a multiple of 32, and with whole warps
//!   `blockDim.x` is a multiple of 32. Compared for equality it is not
//!   (`gid == 0` holds in one lane);
//! * a load reads one word for all lanes of one instruction at one address;
//!   a word that nothing writes while the kernel runs (kernel parameters,
//!   constant memory, `ld.global.nc`, `ldu`) or that no thread of the block
//!   writes (shared memory after a barrier: `shared_memory`) is the same
//!   for every thread that reads it at the same address; any other global
//!   word may change between two warps' loads, a local or generic one may
//!   be per thread, and a device function's parameters are its callers';
//! * a full-mask shuffle, vote or reduction reads only its own warp: of
//!   inputs that are the same in every warp lane by lane, its result is too
//!   (a butterfly of `smem[lane]` read after a barrier is the block's);
//! * a value chosen by a condition (a guarded definition, or a register
//!   read where definitions on several paths reach it, the branches they
//!   are under choosing between them) depends on that condition as well;
//!   each read is judged from the definitions that reach it (`reaching`).

use std::collections::{BTreeMap, BTreeSet};

use super::reaching::{defined, Reaching};
use super::{
    branch_predicate, parse_integer, registers, shared_memory, thread_function, warp_invariance, Cfg, Fact, Function,
    Launches, Level, Statement,
};

/// The start of the fixpoint: the same for the whole block, a multiple of 32.
const TOP: Fact = Fact { level: Level::Uniform, across: true, aligned: true };

/// The facts of a function's values, read at any statement.
pub(super) struct Facts<'a> {
    function: &'a Function,
    reaching: &'a Reaching,
    constant: &'a BTreeMap<String, i64>,
    whole_warps: bool,
    exact: BTreeMap<usize, Fact>,
    alike: BTreeSet<String>,
    /// Per statement: a shared-memory load there reads a word no thread writes.
    clean: Vec<bool>,
    /// Per statement: the blocks ending in the branches it is under.
    under: Vec<&'a BTreeSet<usize>>,
    /// Per block ending in a conditional branch: the statement and its predicate.
    branches: BTreeMap<usize, (usize, String)>,
    /// Per statement: the facts of the registers it defines, in order.
    defined: Vec<Vec<(String, Fact)>>,
    /// Per branch block: the fact of its condition.
    conditions: BTreeMap<usize, Fact>,
}

/// The facts of `function`'s values, a fixpoint over all its definitions.
pub(super) fn facts<'a>(
    function: &'a Function,
    cfg: &'a Cfg,
    under: &'a [BTreeSet<usize>],
    reaching: &'a Reaching,
    constant: &'a BTreeMap<String, i64>,
    launches: &Launches,
) -> Facts<'a> {
    let mut under_of = Vec::with_capacity(function.statements.len());
    let mut branches = BTreeMap::new();
    for (b, &(start, end)) in cfg.blocks.iter().enumerate() {
        under_of.extend((start..end).map(|_| &under[b]));
        if let Some(p) = branch_predicate(function, cfg, b) {
            branches.insert(b, (end - 1, p.to_string()));
        }
    }
    let defined_of = |s: &Statement| defined(s).into_iter().map(|r| (r, TOP)).collect();
    let mut pass = Facts {
        function,
        reaching,
        constant,
        whole_warps: launches.whole_warps(),
        exact: thread_function::exact_facts(function, reaching, launches.most_threads()),
        alike: warp_invariance::warp_invariant(function, constant),
        clean: shared_memory::clean_loads(function, cfg),
        under: under_of,
        defined: function.statements.iter().map(defined_of).collect(),
        conditions: branches.keys().map(|&b| (b, TOP)).collect(),
        branches,
    };
    pass.run();
    pass
}

impl Facts<'_> {
    fn run(&mut self) {
        loop {
            let mut changed = false;
            let function = self.function;
            for (i, s) in function.statements.iter().enumerate() {
                if self.defined[i].is_empty() {
                    continue;
                }
                let base = self.transfer(i, s);
                for k in 0..self.defined[i].len() {
                    let (register, slot) = self.defined[i][k].clone();
                    let weaker = slot.meet(self.definition(i, s, &register, base));
                    if weaker != slot {
                        self.defined[i][k].1 = weaker;
                        changed = true;
                    }
                }
            }
            let conditions: Vec<(usize, Fact)> =
                self.branches.iter().map(|(&b, (at, p))| (b, self.at(*at, p))).collect();
            for (b, fact) in conditions {
                changed |= self.conditions.insert(b, fact) != Some(fact);
            }
            if !changed {
                return;
            }
        }
    }

    /// The fact of `operand` as statement `at` reads it.
    pub(super) fn at(&self, at: usize, operand: &str) -> Fact {
        let found = registers(operand);
        if found.is_empty() {
            let value = parse_integer(operand).or_else(|| self.constant.get(operand.trim()).copied());
            return Fact::new(Level::Uniform, true, value.is_some_and(|v| v % 32 == 0));
        }
        found.iter().map(|r| self.special(r).unwrap_or_else(|| self.register_at(at, r))).fold(TOP, Fact::meet)
    }

    /// A register's fact where statement `at` reads it: that of every
    /// definition reaching it and, when several may, of the branches that
    /// choose between them; uniform when none does.
    fn register_at(&self, at: usize, register: &str) -> Fact {
        let defs = self.reaching.defs(at, register);
        let mut fact = TOP;
        for &d in defs {
            let known = self.defined[d].iter().find(|(r, _)| r == register).map_or(TOP, |(_, f)| *f);
            fact = fact.meet(known);
            if defs.len() > 1 {
                for b in self.under[d] {
                    fact = fact.meet(self.conditions.get(b).copied().unwrap_or(TOP).mixed());
                }
            }
        }
        fact
    }

    /// What statement `i` gives `register`: its exact or transferred fact,
    /// the warp's if all lanes hold it alike, and its guard's.
    fn definition(&self, i: usize, s: &Statement, register: &str, base: Fact) -> Fact {
        let mut value = self.exact.get(&i).copied().unwrap_or(base);
        if self.alike.contains(register) {
            value = Fact::new(value.level.min(Level::Warp), value.across, value.aligned);
        }
        if let Some((_, predicate)) = &s.guard {
            value = value.meet(self.at(i, predicate).mixed());
        }
        value
    }

    /// The fact of a special register.
    fn special(&self, register: &str) -> Option<Fact> {
        let name = register.trim_start_matches('%');
        let (base, dimension) = name.split_once('.').unwrap_or((name, ""));
        Some(match base {
            "tid" if dimension == "x" => Fact::new(Level::Lane, false, false),
            "tid" => Fact::VARYING,
            "laneid" | "lanemask_eq" | "lanemask_lt" | "lanemask_le" | "lanemask_gt" | "lanemask_ge" => {
                Fact::new(Level::Varying, true, false)
            }
            "warpid" => Fact::new(Level::Warp, false, false),
            "ntid" => Fact::new(Level::Uniform, true, dimension == "x" && self.whole_warps),
            "ctaid" | "nctaid" | "nwarpid" | "gridid" | "smid" | "nsmid" | "dynamic_smem_size" | "total_smem_size" => {
                Fact::UNIFORM
            }
            _ if base.starts_with("envreg") => Fact::UNIFORM,
            "clock" | "clock64" | "globaltimer" | "globaltimer_lo" | "globaltimer_hi" => Fact::VARYING,
            _ => return None,
        })
    }

    fn transfer(&self, i: usize, s: &Statement) -> Fact {
        let sources: Vec<Fact> = s.operands[1..].iter().map(|o| self.at(i, o)).collect();
        let all = sources.iter().copied().fold(TOP, Fact::meet);
        let root = s.opcode.split('.').next().unwrap_or("");
        match root {
            "ld" | "ldu" => self.load(i, s, all),
            "atom" => Fact::VARYING,
            "shfl" if self.full_mask(s.operands.last()) => Fact::new(Level::Varying, all.across, false),
            "shfl" => Fact::VARYING,
            "vote" | "redux" => Fact::new(Level::Warp, all.across, false),
            "match" if s.opcode.contains(".all") => Fact::new(Level::Warp, all.across, false),
            "match" => Fact::new(Level::Varying, all.across, false),
            "activemask" => Fact::new(Level::Warp, false, false),
            _ => Fact::new(self.arithmetic_level(s, &sources), all.across, self.aligned(s, &sources)),
        }
    }

    fn full_mask(&self, operand: Option<&String>) -> bool {
        let value = operand.and_then(|o| parse_integer(o).or_else(|| self.constant.get(o.trim()).copied()));
        matches!(value, Some(-1) | Some(0xffff_ffff))
    }

    /// A load from an address of fact `address` (see the module's rule).
    fn load(&self, i: usize, s: &Statement, address: Fact) -> Fact {
        let parts: Vec<&str> = s.opcode.split('.').collect();
        let has = |space: &str| parts.iter().any(|p| *p == space || p.starts_with(&format!("{space}::")));
        if has("param") {
            return if self.function.entry { Fact::UNIFORM } else { Fact::VARYING };
        }
        let cluster = parts.iter().any(|p| p.ends_with("::cluster"));
        let read_only = has("const")
            || (has("global") && (parts.contains(&"nc") || parts[0] == "ldu"))
            || (has("shared") && !cluster && self.clean[i]);
        if read_only {
            Fact::new(address.mixed().level, address.across, false)
        } else if has("global") || has("shared") {
            // One instruction of one warp reads one value at one address.
            let level = if address.level <= Level::Warp { Level::Warp } else { Level::Varying };
            Fact::new(level, false, false)
        } else {
            Fact::VARYING
        }
    }

    /// The level of an arithmetic, comparison or move (the module's rule
    /// for the thread index plus a uniform multiple of 32).
    fn arithmetic_level(&self, s: &Statement, sources: &[Fact]) -> Level {
        let lanes = sources.iter().filter(|f| f.level == Level::Lane).count();
        let most = sources.iter().map(|f| f.mixed().level).max().unwrap_or(Level::Uniform);
        if lanes == 0 {
            return most;
        }
        let parts: Vec<&str> = s.opcode.split('.').collect();
        let lane = |k: usize| sources.get(k).is_some_and(|f| f.level == Level::Lane);
        let aligned = |k: usize| sources.get(k).is_some_and(|f| f.aligned);
        let constant = |k: usize| s.operands.get(k + 1).and_then(|o| parse_integer(o));
        let whole = |k: usize| s.operands.get(k).is_some_and(|o| !o.contains('{'));
        let either = || (lane(0) && aligned(1)) || (lane(1) && aligned(0));
        let kept = match parts[0] {
            "mov" | "cvta" => lanes == 1 && sources.len() == 1 && whole(0) && whole(1),
            "cvt" => sources.len() == 1 && integer_conversion(&parts),
            "add" => sources.len() == 2 && either(),
            "sub" => sources.len() == 2 && lane(0) && aligned(1),
            "mad" if parts.contains(&"lo") || parts.contains(&"wide") => {
                lane(2) && (aligned(0) || aligned(1)) && sources[..2].iter().all(|f| f.level == Level::Uniform)
            }
            _ => false,
        };
        if kept {
            return Level::Lane;
        }
        let warp = match parts[0] {
            "shr" => lane(0) && constant(1).is_some_and(|k| k >= 5),
            "div" => {
                lane(0) && parts.iter().any(|p| p.starts_with('u')) && constant(1).is_some_and(|k| k > 0 && k % 32 == 0)
            }
            "and" => sources.len() == 2 && either(),
            "setp" | "set" => sources.len() == 2 && parts.get(1).is_some_and(|c| ORDERING.contains(c)) && either(),
            _ => false,
        };
        if warp {
            Level::Warp
        } else {
            Level::Varying
        }
    }

    /// Whether the value is a multiple of 32 whenever its inputs are as known.
    fn aligned(&self, s: &Statement, sources: &[Fact]) -> bool {
        let parts: Vec<&str> = s.opcode.split('.').collect();
        let al = |k: usize| sources.get(k).is_some_and(|f| f.aligned);
        let constant = |k: usize| s.operands.get(k + 1).and_then(|o| parse_integer(o));
        match parts[0] {
            "mov" | "cvta" | "neg" => sources.len() == 1 && al(0),
            "cvt" => integer_conversion(&parts) && al(0),
            "mul" if !parts.contains(&"hi") => al(0) || al(1),
            "shl" => al(0) || constant(1).is_some_and(|k| (5..64).contains(&k)),
            "add" | "sub" | "or" | "xor" | "min" | "max" => sources.len() == 2 && al(0) && al(1),
            "and" => al(0) || al(1),
            "mad" if parts.contains(&"lo") || parts.contains(&"wide") => (al(0) || al(1)) && al(2),
            "selp" => al(0) && al(1),
            _ => false,
        }
    }
}

/// Comparisons in order: they split the thread index at one point.
const ORDERING: [&str; 8] = ["lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"];

/// `cvt` between integer types, without saturation: it keeps the low bits.
fn integer_conversion(parts: &[&str]) -> bool {
    let integer = |p: &&&str| matches!(p.get(..1), Some("u" | "s" | "b")) && p[1..].parse::<u32>().is_ok();
    !parts.contains(&"sat") && parts.iter().skip(1).filter(integer).count() == 2
}
