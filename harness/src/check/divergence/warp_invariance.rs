//! Values that every lane of a warp holds alike although they come from data:
//! a butterfly all-reduction (`v = v + __shfl_xor_sync(~0u, v, m)` for
//! m = 16, 8, 4, 2, 1), a broadcast (`__shfl_sync(~0u, v, 0)`), a vote,
//! and whatever is computed from such values only.
//!
//! Each register gets the set of lane-index bits it is invariant under:
//! `v(lane) == v(lane ^ g)` for every g made of those bits. The rules:
//! * any operation keeps the bits all its operands share (a function of
//!   equal inputs is equal);
//! * a full-warp `shfl.bfly` by m reads `v(lane ^ m)`: it keeps v's bits,
//!   and it is remembered as "v, read across m";
//! * a commutative operation of v read across x and v read across y adds the
//!   bits of x ^ y (when that is one bit): `f(v(l^x), v(l^y))` is unchanged
//!   by `l -> l ^ x ^ y` because f's two arguments swap;
//! * a load reads one value for all lanes of one instruction at one address
//!   of global, shared or constant memory or the kernel's parameters (not
//!   local memory, each thread's own, nor a generic address, which may be
//!   local, nor a device function's parameters, its callers');
//! * a full-warp `shfl.idx` from an invariant lane, a vote, a ballot, the
//!   active mask and `redux.sync` are invariant under every bit.
//!
//! Only registers defined once, without a guard, are followed (PTX from a
//! compiler is close to single assignment; the rest keep no bits), and 64-bit
//! values moved through `{lo, hi}` halves keep their identity.

use std::collections::{BTreeMap, BTreeSet};

use super::{parse_integer, registers, Function, Statement};

/// Every lane bit: invariant under all of them is the same across the warp.
const WHOLE_WARP: u32 = 31;

/// What a register holds: part `part` (`None` whole, `Some(i)` the i-th
/// 32-bit half) of register `of` read at `lane ^ across`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Read {
    of: String,
    part: Option<usize>,
    across: u32,
}

struct Pass<'a> {
    /// In a kernel: `ld.param` reads the launch's parameters.
    entry: bool,
    definitions: BTreeMap<String, (&'a Statement, usize)>,
    constant: &'a BTreeMap<String, i64>,
    bits: BTreeMap<String, u32>,
    reads: BTreeMap<String, Read>,
}

/// The registers of `function` that every lane of a warp holds alike.
pub(super) fn warp_invariant(function: &Function, constant: &BTreeMap<String, i64>) -> BTreeSet<String> {
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    let mut definitions = BTreeMap::new();
    for s in &function.statements {
        if !super::has_destination(&s.opcode) || s.operands.is_empty() {
            continue;
        }
        // `%r7|%p2`: the shuffle's value first, its predicate second.
        for (i, register) in registers(&s.operands[0]).into_iter().enumerate() {
            *count.entry(register.clone()).or_default() += 1;
            if s.guard.is_none() {
                definitions.insert(register, (s, i));
            }
        }
    }
    definitions.retain(|r, _| count.get(r) == Some(&1));
    let mut pass = Pass { entry: function.entry, definitions, constant, bits: BTreeMap::new(), reads: BTreeMap::new() };
    let names: Vec<String> = pass.definitions.keys().cloned().collect();
    names.into_iter().filter(|r| pass.bits_of(r, 0) == WHOLE_WARP).collect()
}

impl Pass<'_> {
    /// Whether a load of `op` reads memory every lane sees alike at one address.
    fn shared_by_the_warp(&self, op: &str) -> bool {
        let spaces = ["global", "shared", "const", "param"];
        let space = op.split('.').find_map(|p| spaces.iter().find(|&&s| p == s || p.starts_with(&format!("{s}::"))));
        match space {
            Some(&"param") => self.entry,
            Some(_) => true,
            None => false,
        }
    }

    fn constant_of(&self, operand: &str) -> Option<i64> {
        parse_integer(operand).or_else(|| self.constant.get(operand.trim()).copied())
    }

    fn full_warp(&self, clamp: Option<&String>, mask: Option<&String>) -> bool {
        let mask = mask.and_then(|m| self.constant_of(m));
        clamp.and_then(|c| self.constant_of(c)) == Some(31) && matches!(mask, Some(-1) | Some(0xffff_ffff))
    }

    /// The bits an operand is invariant under.
    fn operand_bits(&mut self, operand: &str, depth: usize) -> u32 {
        registers(operand).iter().fold(WHOLE_WARP, |bits, r| bits & self.register_bits(r, depth))
    }

    fn register_bits(&mut self, register: &str, depth: usize) -> u32 {
        let name = register.trim_start_matches('%');
        let special = name.split('.').next().unwrap_or(name);
        match special {
            "ctaid" | "nctaid" | "ntid" | "nwarpid" | "gridid" | "smid" | "nsmid" | "warpid" => WHOLE_WARP,
            "tid" | "laneid" | "lanemask_eq" | "lanemask_lt" | "lanemask_le" | "lanemask_gt" | "lanemask_ge"
            | "clock" | "clock64" | "globaltimer" => 0,
            _ => self.bits_of(register, depth + 1),
        }
    }

    fn bits_of(&mut self, register: &str, depth: usize) -> u32 {
        if let Some(&b) = self.bits.get(register) {
            return b;
        }
        if depth > 64 {
            return 0;
        }
        // Seeded before the recursion: a cycle keeps no bits.
        self.bits.insert(register.to_string(), 0);
        let bits = match self.definitions.get(register).copied() {
            Some((s, index)) => self.definition_bits(register, s, index, depth),
            None => 0,
        };
        self.bits.insert(register.to_string(), bits);
        bits
    }

    fn definition_bits(&mut self, register: &str, s: &Statement, index: usize, depth: usize) -> u32 {
        let op = s.opcode.as_str();
        let root = op.split('.').next().unwrap_or(op);
        let sources = &s.operands[1..];
        let all = |pass: &mut Self| sources.iter().fold(WHOLE_WARP, |b, o| b & pass.operand_bits(o, depth));
        match root {
            "vote" | "activemask" | "redux" => WHOLE_WARP,
            "atom" | "match" => 0,
            "ld" | "ldu" if op.contains(".volatile") || op.contains(".relaxed") || op.contains(".acquire") => 0,
            // Local memory is each thread's own, and a generic address may
            // be local; a device function's parameters are its callers'.
            "ld" | "ldu" if !self.shared_by_the_warp(op) => 0,
            "shfl" => self.shuffle_bits(register, s, index, depth),
            "mov" => {
                let bits = all(self);
                self.note_move(register, s, index);
                bits
            }
            "add" | "mul" | "min" | "max" | "and" | "or" | "xor" if !op.contains(".cc") && sources.len() == 2 => {
                let bits = all(self);
                bits | self.swapped_bit(&sources[0], &sources[1], bits, depth)
            }
            _ => all(self),
        }
    }

    /// `f(v(l ^ x), v(l ^ y))` with f commutative is also invariant under
    /// `x ^ y` when v keeps the bits `bits` and `x ^ y` is one lane bit.
    fn swapped_bit(&mut self, a: &str, b: &str, bits: u32, depth: usize) -> u32 {
        let (Some(ra), Some(rb)) = (self.read_of(a), self.read_of(b)) else { return 0 };
        let step = ra.across ^ rb.across;
        if ra.of != rb.of || ra.part != rb.part || step == 0 || !step.is_power_of_two() || step > 16 {
            return 0;
        }
        let base = self.register_bits(&ra.of, depth);
        // The base's own bits must cover what the sum keeps, or the swap
        // argument does not apply to them.
        if base & bits != bits {
            return 0;
        }
        step
    }

    /// What an operand reads: itself, unless a shuffle or a move made it a
    /// read of another register.
    fn read_of(&self, operand: &str) -> Option<Read> {
        let r = operand.trim();
        if !r.starts_with('%') || r.contains(['{', '[']) {
            return None;
        }
        Some(self.reads.get(r).cloned().unwrap_or(Read { of: r.to_string(), part: None, across: 0 }))
    }

    fn shuffle_bits(&mut self, register: &str, s: &Statement, index: usize, depth: usize) -> u32 {
        let ops = &s.operands;
        // The predicate output (index 1) says whether the source lane was in range.
        if index != 0 || ops.len() != 5 || !self.full_warp(ops.get(3), ops.get(4)) {
            return 0;
        }
        let mode = s.opcode.split('.').nth(2).unwrap_or("");
        let value_bits = self.operand_bits(&ops[1], depth);
        match (mode, self.constant_of(&ops[2])) {
            ("idx", _) if self.operand_bits(&ops[2], depth) == WHOLE_WARP => WHOLE_WARP,
            ("bfly", Some(m)) if (0..32).contains(&m) => {
                if let Some(read) = self.read_of(&ops[1]) {
                    self.reads.insert(register.to_string(), Read { across: read.across ^ m as u32, ..read });
                }
                value_bits
            }
            _ => 0,
        }
    }

    /// Moves keep what a register reads: `mov.b64 {lo, hi}, v` splits it,
    /// `mov.b64 v, {lo, hi}` joins halves read across one distance.
    fn note_move(&mut self, register: &str, s: &Statement, index: usize) {
        let (dest, source) = (&s.operands[0], s.operands.get(1).map(String::as_str).unwrap_or(""));
        if dest.contains('{') {
            if let Some(read) = self.read_of(source) {
                if read.part.is_none() {
                    self.reads.insert(register.to_string(), Read { part: Some(index), ..read });
                }
            }
        } else if source.contains('{') {
            let halves: Vec<Option<Read>> = registers(source).iter().map(|r| self.read_of(r)).collect();
            let joined = halves.iter().enumerate().all(|(i, h)| {
                h.as_ref()
                    .zip(halves[0].as_ref())
                    .is_some_and(|(h, first)| h.part == Some(i) && h.of == first.of && h.across == first.across)
            });
            if joined && halves.len() == 2 {
                if let Some(Some(first)) = halves.first() {
                    self.reads.insert(register.to_string(), Read { part: None, ..first.clone() });
                }
            }
        } else if let Some(read) = self.read_of(source) {
            self.reads.insert(register.to_string(), read);
        }
    }
}
