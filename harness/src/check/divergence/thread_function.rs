//! Values of a kernel that are exact functions of the thread index and of
//! the block's uniform inputs (the block index, the block and grid sizes,
//! the kernel's parameters): `threadIdx.x / 32 == 0`,
//! `blockIdx.x * blockDim.x + threadIdx.x < n`. Two uses:
//!
//! * a function of `threadIdx.x` alone is evaluated for every thread index a
//!   block of the launch can have, so the pass knows, rather than guesses,
//!   whether it is the same across a warp, across the warps lane by lane,
//!   or across the block ([`exact_facts`]);
//! * a branch condition the pass cannot prove uniform is evaluated for
//!   concrete launches (the launch's block sizes, a few block indices, and
//!   sizes a caller passes as the parameters): two threads of one warp (or
//!   block) that take different sides prove the branch divergent
//!   ([`Exprs::witness`]). A condition that reads memory, a shuffle or a
//!   loop-carried register is not evaluated: the pass leaves it undecided.
//!
//! Rules relied on: a block's threads are numbered by `threadIdx.x` first
//! and a warp is 32 consecutive numbers starting at a multiple of 32, so
//! with one-dimensional blocks a value of `threadIdx.x` is the same across a
//! warp exactly when it is constant on every aligned group of 32 indices,
//! and the same across the warps lane by lane when it repeats every 32. PTX
//! arithmetic is modular in the width of the instruction's type; every
//! operand is read as that type, as the hardware reads it.

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use super::reaching::{defined, Reaching};
use super::{Fact, Function, Level, Scope};

/// The values the witness search gives a parameter: sizes a caller passes
/// (the check's boundary sizes among them), never 0.
const PARAMETER_VALUES: [i128; 12] = [1, 2, 3, 31, 32, 33, 100, 255, 256, 257, 1000, 4099];
/// (block index, blocks) pairs the witness search tries when the condition
/// reads either.
const GRIDS: [(i128, i128); 4] = [(0, 1), (0, 8), (1, 8), (7, 8)];
/// Expressions larger than this (counting shared parts once per use) are not
/// followed: the pass falls back on its levels.
const MAX_SIZE: usize = 96;

/// How an operand's bits are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ty {
    bits: u32,
    signed: bool,
}

impl Ty {
    const PRED: Ty = Ty { bits: 1, signed: false };

    fn parse(part: &str) -> Option<Ty> {
        if part == "pred" {
            return Some(Ty::PRED);
        }
        let kind = part.get(..1)?;
        let bits = part.get(1..)?;
        let bits: u32 = bits.parse().ok()?;
        if ![8, 16, 32, 64].contains(&bits) {
            return None;
        }
        match kind {
            "u" | "b" => Some(Ty { bits, signed: false }),
            "s" => Some(Ty { bits, signed: true }),
            _ => None,
        }
    }

    /// `v` read in this type (two's complement, wrapped).
    fn wrap(self, v: i128) -> i128 {
        let modulus = 1i128 << self.bits;
        let low = v.rem_euclid(modulus);
        if self.signed && low >= modulus / 2 {
            low - modulus
        } else {
            low
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Mov,
    Add,
    Sub,
    Mul,
    Mad,
    Shl,
    Shr,
    And,
    Or,
    Xor,
    Not,
    Neg,
    Div,
    Rem,
    Min,
    Max,
    Selp,
    Cmp(Cmp),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// A block-uniform input of a launch.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Leaf {
    BlockIndex,
    BlockSize,
    GridSize,
    /// A kernel parameter, by the name (and offset) `ld.param` reads.
    Param(String),
}

/// The values of a launch's inputs for one thread.
struct Env<'a> {
    tid: i128,
    block_index: i128,
    block_size: i128,
    grid_size: i128,
    params: &'a BTreeMap<String, i128>,
}

impl Env<'_> {
    fn leaf(&self, leaf: &Leaf) -> Option<i128> {
        match leaf {
            Leaf::BlockIndex => Some(self.block_index),
            Leaf::BlockSize => Some(self.block_size),
            Leaf::GridSize => Some(self.grid_size),
            Leaf::Param(name) => self.params.get(name).copied(),
        }
    }
}

#[derive(Debug)]
enum Expr {
    Tid,
    Const(i128),
    /// A launch input, read as its type.
    Leaf(Leaf, Ty),
    /// `op` over `args` read as `input`, its result read as `output`; `size`
    /// counts the nodes below, shared ones once per use.
    Apply {
        op: Op,
        input: Ty,
        output: Ty,
        args: Vec<Rc<Expr>>,
        size: usize,
    },
}

impl Expr {
    fn apply(op: Op, input: Ty, output: Ty, args: Vec<Rc<Expr>>) -> Rc<Expr> {
        let size = args.iter().fold(1usize, |s, a| s.saturating_add(a.size()));
        Rc::new(Expr::Apply { op, input, output, args, size })
    }

    fn size(&self) -> usize {
        match self {
            Expr::Apply { size, .. } => *size,
            _ => 1,
        }
    }

    fn depends_on_thread(&self) -> bool {
        match self {
            Expr::Tid => true,
            Expr::Const(_) | Expr::Leaf(..) => false,
            Expr::Apply { args, .. } => args.iter().any(|a| a.depends_on_thread()),
        }
    }

    /// The launch inputs it reads.
    fn leaves(&self, out: &mut BTreeSet<Leaf>) {
        match self {
            Expr::Leaf(leaf, _) => {
                out.insert(leaf.clone());
            }
            Expr::Apply { args, .. } => args.iter().for_each(|a| a.leaves(out)),
            Expr::Tid | Expr::Const(_) => {}
        }
    }

    /// The value for one thread of a launch; `None` where PTX leaves it
    /// undefined (a division by zero).
    fn eval(&self, env: &Env<'_>) -> Option<i128> {
        match self {
            Expr::Tid => Some(env.tid),
            Expr::Const(c) => Some(*c),
            Expr::Leaf(leaf, ty) => env.leaf(leaf).map(|v| ty.wrap(v)),
            Expr::Apply { op, input, output, args, .. } => {
                let mut v = [0i128; 3];
                for (slot, a) in v.iter_mut().zip(args) {
                    *slot = input.wrap(a.eval(env)?);
                }
                apply(*op, *input, v).map(|r| output.wrap(r))
            }
        }
    }
}

fn apply(op: Op, ty: Ty, [a, b, c]: [i128; 3]) -> Option<i128> {
    let shift = |b: i128| b.clamp(0, ty.bits as i128) as u32;
    Some(match op {
        Op::Mov => a,
        // Wrapping in 128 bits keeps every result right modulo 2^64 and below.
        Op::Add => a.wrapping_add(b),
        Op::Sub => a.wrapping_sub(b),
        Op::Mul => a.wrapping_mul(b),
        Op::Mad => a.wrapping_mul(b).wrapping_add(c),
        Op::Shl => {
            if shift(b) >= ty.bits {
                0
            } else {
                a.wrapping_shl(shift(b))
            }
        }
        // Arithmetic for signed types (the sign fills), logical otherwise.
        Op::Shr => a >> shift(b).min(ty.bits - 1 + u32::from(!ty.signed)).min(127),
        Op::And => a & b,
        Op::Or => a | b,
        Op::Xor => a ^ b,
        Op::Not => {
            if ty == Ty::PRED {
                1 - a
            } else {
                !a
            }
        }
        Op::Neg => a.wrapping_neg(),
        Op::Div if b != 0 => a / b,
        Op::Rem if b != 0 => a % b,
        Op::Div | Op::Rem => return None,
        Op::Min => a.min(b),
        Op::Max => a.max(b),
        Op::Selp => {
            if c != 0 {
                a
            } else {
                b
            }
        }
        Op::Cmp(cmp) => i128::from(match cmp {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
        }),
    })
}

/// The fact of every definition (by statement) that is an exact function
/// of `threadIdx.x` alone and depends on it, judged over the thread indices
/// `0..threads` of the largest block launched.
pub(super) fn exact_facts(function: &Function, reaching: &Reaching, threads: i128) -> BTreeMap<usize, Fact> {
    let mut exprs = Exprs::new(function, reaching);
    let mut out = BTreeMap::new();
    for i in 0..function.statements.len() {
        let Some(e) = exprs.expr_of(i, 0) else { continue };
        let mut leaves = BTreeSet::new();
        e.leaves(&mut leaves);
        if !leaves.is_empty() || !e.depends_on_thread() {
            continue;
        }
        if let Some(fact) = fact_of(&e, threads) {
            out.insert(i, fact);
        }
    }
    out
}

fn fact_of(e: &Expr, threads: i128) -> Option<Fact> {
    let none = BTreeMap::new();
    let env = |tid| Env { tid, block_index: 0, block_size: threads, grid_size: 1, params: &none };
    let values: Vec<i128> = (0..threads.max(1)).map(|t| e.eval(&env(t))).collect::<Option<_>>()?;
    let first = values[0];
    if values.iter().all(|&v| v == first) {
        return Some(Fact::new(Level::Uniform, true, first % 32 == 0));
    }
    if values.chunks(32).all(|warp| warp.iter().all(|&v| v == warp[0])) {
        return Some(Fact::new(Level::Warp, false, false));
    }
    let across = values.iter().enumerate().all(|(t, &v)| v == values[t % 32]);
    // The thread index plus a multiple of 32.
    let unit = first % 32 == 0 && values.iter().enumerate().all(|(t, &v)| v - first == t as i128);
    Some(Fact::new(if unit { Level::Lane } else { Level::Varying }, across, false))
}

/// A condition a thread meets on its way to a branch: the predicate
/// `register` as statement `at` reads it has the value `holds`.
#[derive(Debug, Clone)]
pub(super) struct Condition {
    pub at: usize,
    pub register: String,
    pub holds: bool,
}

/// Builds the expressions of definitions, each once: a definition's
/// operands are followed to the one unguarded definition that reaches them.
pub(super) struct Exprs<'a> {
    function: &'a Function,
    reaching: &'a Reaching,
    memo: BTreeMap<usize, Option<Rc<Expr>>>,
}

impl<'a> Exprs<'a> {
    pub(super) fn new(function: &'a Function, reaching: &'a Reaching) -> Exprs<'a> {
        Exprs { function, reaching, memo: BTreeMap::new() }
    }

    /// Two threads that reach a branch (meeting every condition of `path`
    /// the pass can evaluate) and take different sides of its condition
    /// `register` (as statement `at` reads it), in one warp (`Scope::Warp`)
    /// or one block (`Scope::Block`) of a launch with one of `block_sizes`,
    /// described with that launch; `None` when the condition is not an exact
    /// function of the launch or no launch tried splits it.
    pub(super) fn witness(
        &mut self,
        at: usize,
        register: &str,
        path: &[Condition],
        scope: Scope,
        block_sizes: &[u32],
    ) -> Option<String> {
        let e = self.register_at(at, register, 0)?;
        if !e.depends_on_thread() {
            return None;
        }
        let path: Vec<(Rc<Expr>, bool)> =
            path.iter().filter_map(|c| Some((self.register_at(c.at, &c.register, 0)?, c.holds))).collect();
        let mut leaves = BTreeSet::new();
        e.leaves(&mut leaves);
        path.iter().for_each(|(p, _)| p.leaves(&mut leaves));
        let params: Vec<String> =
            leaves.iter().filter_map(|l| if let Leaf::Param(p) = l { Some(p.clone()) } else { None }).collect();
        let grid_read = leaves.contains(&Leaf::BlockIndex) || leaves.contains(&Leaf::GridSize);
        let grids = if grid_read { &GRIDS[..] } else { &GRIDS[..1] };
        for values in parameter_choices(params.len()) {
            let bound: BTreeMap<String, i128> = params.iter().cloned().zip(values).collect();
            for &size in block_sizes {
                for &(index, blocks) in grids {
                    let env = |tid| Env {
                        tid,
                        block_index: index,
                        block_size: i128::from(size),
                        grid_size: blocks,
                        params: &bound,
                    };
                    if let Some((a, b)) = split(&e, &path, scope, i128::from(size), &env) {
                        let grid = if grid_read { format!(", block {index} of {blocks}") } else { String::new() };
                        let given: String = bound.iter().map(|(p, v)| format!(", {p} = {v}")).collect();
                        return Some(format!(
                            "threads {a} and {b} of a block of {size}{grid}{given} take different sides"
                        ));
                    }
                }
            }
        }
        None
    }

    fn operand_expr(&mut self, at: usize, operand: &str, depth: usize) -> Option<Rc<Expr>> {
        let operand = operand.trim();
        let u32_ = Ty { bits: 32, signed: false };
        let leaf = |l: Leaf| Some(Rc::new(Expr::Leaf(l, u32_)));
        match operand {
            "%tid.x" => return Some(Rc::new(Expr::Tid)),
            // One-dimensional blocks of whole warps: the lane is the thread index mod 32.
            "%laneid" => {
                return Some(Expr::apply(Op::And, u32_, u32_, vec![Rc::new(Expr::Tid), Rc::new(Expr::Const(31))]))
            }
            "%ctaid.x" => return leaf(Leaf::BlockIndex),
            "%ntid.x" => return leaf(Leaf::BlockSize),
            "%nctaid.x" => return leaf(Leaf::GridSize),
            _ => {}
        }
        if let Some(v) = super::parse_integer(operand) {
            return Some(Rc::new(Expr::Const(i128::from(v))));
        }
        if operand.starts_with('%') {
            return self.register_at(at, operand, depth + 1);
        }
        None
    }

    /// The expression of `register` as statement `at` reads it: of its one
    /// reaching definition, when that is unguarded and defines it alone.
    fn register_at(&mut self, at: usize, register: &str, depth: usize) -> Option<Rc<Expr>> {
        match self.reaching.defs(at, register) {
            &[d] => {
                let s = &self.function.statements[d];
                (s.guard.is_none() && defined(s).len() == 1).then_some(())?;
                self.expr_of(d, depth)
            }
            _ => None,
        }
    }

    /// The expression of the value statement `d` defines.
    fn expr_of(&mut self, d: usize, depth: usize) -> Option<Rc<Expr>> {
        if let Some(known) = self.memo.get(&d) {
            return known.clone();
        }
        if depth > 48 {
            return None;
        }
        // Seeded before the recursion: a definition reached again through its
        // own operands (a loop) is not a function of the launch alone.
        self.memo.insert(d, None);
        let s = &self.function.statements[d];
        let built = if s.guard.is_none() && defined(s).len() == 1 { self.build(d, depth) } else { None };
        let built = built.filter(|e| e.size() <= MAX_SIZE);
        self.memo.insert(d, built.clone());
        built
    }

    /// A kernel parameter read by `ld.param` from a fixed place.
    fn parameter(&self, opcode: &str, operands: &[String]) -> Option<Rc<Expr>> {
        let ty = opcode.split('.').filter_map(Ty::parse).next_back()?;
        let place = operands.get(1)?.trim().strip_prefix('[')?.strip_suffix(']')?;
        (self.function.entry && !place.contains('%')).then(|| Rc::new(Expr::Leaf(Leaf::Param(place.to_string()), ty)))
    }
}

/// The parameter values to try for `count` parameters: every combination
/// for up to two, the same value for all beyond.
fn parameter_choices(count: usize) -> Vec<Vec<i128>> {
    match count {
        0 => vec![Vec::new()],
        1 => PARAMETER_VALUES.iter().map(|&v| vec![v]).collect(),
        2 => PARAMETER_VALUES.iter().flat_map(|&a| PARAMETER_VALUES.iter().map(move |&b| vec![a, b])).collect(),
        _ => PARAMETER_VALUES.iter().map(|&v| vec![v; count]).collect(),
    }
}

/// Two threads of one warp (or block) of `size` threads that both meet
/// every condition of `path` and whose values of `e` differ.
fn split<'p>(
    e: &Expr,
    path: &[(Rc<Expr>, bool)],
    scope: Scope,
    size: i128,
    env: &dyn Fn(i128) -> Env<'p>,
) -> Option<(i128, i128)> {
    let value = |t| {
        let env = env(t);
        let reaches = path.iter().all(|(p, holds)| p.eval(&env).is_some_and(|v| (v != 0) == *holds));
        if reaches {
            e.eval(&env)
        } else {
            None
        }
    };
    let values: Vec<Option<i128>> = (0..size).map(value).collect();
    let group = match scope {
        Scope::Warp => 32,
        Scope::Block => values.len().max(1),
    };
    values.chunks(group).enumerate().find_map(|(g, chunk)| {
        let (first, v) = chunk.iter().enumerate().find_map(|(i, v)| v.map(|v| (i, v)))?;
        let other = chunk.iter().position(|w| w.is_some_and(|w| w != v))?;
        Some(((g * group + first) as i128, (g * group + other) as i128))
    })
}

impl Exprs<'_> {
    fn build(&mut self, d: usize, depth: usize) -> Option<Rc<Expr>> {
        let statement = &self.function.statements[d];
        let (opcode, operands) = (statement.opcode.as_str(), statement.operands.as_slice());
        if opcode.starts_with("ld.param") {
            return self.parameter(opcode, operands);
        }
        let parts: Vec<&str> = opcode.split('.').collect();
        let types: Vec<Ty> = parts.iter().skip(1).filter_map(|p| Ty::parse(p)).collect();
        let last = *types.last()?;
        let sources = &operands.get(1..)?;
        let (op, input, output, arity) = match parts[0] {
            "mov" => (Op::Mov, last, last, 1),
            // cvt.<to>.<from>: read as the source type, written as the destination's.
            "cvt" if types.len() == 2 && !parts.contains(&"sat") => (Op::Mov, types[1], types[0], 1),
            "add" | "sub" if !parts.contains(&"sat") && !parts.contains(&"cc") => {
                (if parts[0] == "add" { Op::Add } else { Op::Sub }, last, last, 2)
            }
            "mul" | "mad" if parts.contains(&"lo") || parts.contains(&"wide") => {
                let output = if parts.contains(&"wide") { Ty { bits: last.bits * 2, ..last } } else { last };
                if parts[0] == "mul" {
                    (Op::Mul, last, output, 2)
                } else {
                    // mad.wide reads its addend in the wide type: not followed.
                    if parts.contains(&"wide") {
                        return None;
                    }
                    (Op::Mad, last, output, 3)
                }
            }
            "shl" => (Op::Shl, last, last, 2),
            "shr" => (Op::Shr, last, last, 2),
            "and" => (Op::And, last, last, 2),
            "or" => (Op::Or, last, last, 2),
            "xor" => (Op::Xor, last, last, 2),
            "not" => (Op::Not, last, last, 1),
            "neg" => (Op::Neg, last, last, 1),
            "div" => (Op::Div, last, last, 2),
            "rem" => (Op::Rem, last, last, 2),
            "min" => (Op::Min, last, last, 2),
            "max" => (Op::Max, last, last, 2),
            "selp" => (Op::Selp, last, last, 3),
            "setp" if sources.len() == 2 && !operands[0].contains('|') => {
                let cmp = match *parts.get(1)? {
                    "eq" => Cmp::Eq,
                    "ne" => Cmp::Ne,
                    "lt" | "lo" => Cmp::Lt,
                    "le" | "ls" => Cmp::Le,
                    "gt" | "hi" => Cmp::Gt,
                    "ge" | "hs" => Cmp::Ge,
                    _ => return None,
                };
                // `lo`/`ls`/`hi`/`hs` compare unsigned whatever the type says.
                let unsigned = ["lo", "ls", "hi", "hs"].contains(&parts[1]);
                let input = if unsigned { Ty { signed: false, ..last } } else { last };
                (Op::Cmp(cmp), input, Ty::PRED, 2)
            }
            _ => return None,
        };
        if sources.len() != arity || input.bits > 64 {
            return None;
        }
        let mut args = Vec::with_capacity(arity);
        for (i, s) in sources.iter().enumerate() {
            let a = self.operand_expr(d, s, depth)?;
            // selp's condition is a predicate; the shift amount a u32.
            let a = match (op, i) {
                (Op::Selp, 2) => Expr::apply(Op::Mov, Ty::PRED, Ty::PRED, vec![a]),
                (Op::Shl | Op::Shr, 1) => {
                    let u32_ = Ty { bits: 32, signed: false };
                    Expr::apply(Op::Mov, u32_, u32_, vec![a])
                }
                _ => a,
            };
            args.push(a);
        }
        Some(Expr::apply(op, input, output, args))
    }
}
