//! Values of a kernel that are exact functions of `threadIdx.x` alone
//! (`threadIdx.x / 32 == 0`, `(threadIdx.x + 31) > 62`, `threadIdx.x & 31`),
//! evaluated for every thread index a block can have, so the divergence pass
//! knows, rather than guesses, whether a condition differs within a warp.
//!
//! Rule relied on: a block's threads are numbered by `threadIdx.x` first and
//! a warp is 32 consecutive numbers starting at a multiple of 32, so with
//! one-dimensional blocks a value of `threadIdx.x` is the same across a warp
//! exactly when it is constant on every aligned group of 32 indices in
//! `0..1024` (the largest block). PTX arithmetic is modular in the width of
//! the instruction's type; every operand is read as that type, as the
//! hardware reads it.

use std::collections::BTreeMap;
use std::rc::Rc;

use super::Level;

/// The largest block: `threadIdx.x` takes values in `0..MAX_THREADS`.
const MAX_THREADS: i128 = 1024;
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

#[derive(Debug)]
enum Expr {
    Tid,
    Const(i128),
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
            Expr::Const(_) => false,
            Expr::Apply { args, .. } => args.iter().any(|a| a.depends_on_thread()),
        }
    }

    /// The value for thread `tid`; `None` where PTX leaves it undefined (a
    /// division by zero).
    fn eval(&self, tid: i128) -> Option<i128> {
        match self {
            Expr::Tid => Some(tid),
            Expr::Const(c) => Some(*c),
            Expr::Apply { op, input, output, args, .. } => {
                let mut v = [0i128; 3];
                for (slot, a) in v.iter_mut().zip(args) {
                    *slot = input.wrap(a.eval(tid)?);
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

/// One definition: opcode and operands (destination first).
pub(super) struct Definition<'a> {
    pub opcode: &'a str,
    pub operands: &'a [String],
}

/// The level of every register defined once, without a guard, as an exact
/// function of `threadIdx.x` that depends on it: `Uniform` if constant over
/// every thread index, `Warp` if constant on every warp, `Lane` if it is the
/// thread index plus a constant, `Varying` otherwise.
pub(super) fn exact_levels(definitions: &BTreeMap<String, Definition<'_>>) -> BTreeMap<String, Level> {
    let mut memo: BTreeMap<String, Option<Rc<Expr>>> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for register in definitions.keys() {
        let Some(e) = expr_of(register, definitions, &mut memo, 0) else { continue };
        if !e.depends_on_thread() {
            continue;
        }
        if let Some(level) = level_of(&e) {
            out.insert(register.clone(), level);
        }
    }
    out
}

fn level_of(e: &Expr) -> Option<Level> {
    let values: Option<Vec<i128>> = (0..MAX_THREADS).map(|t| e.eval(t)).collect();
    let values = values?;
    if values.iter().all(|&v| v == values[0]) {
        return Some(Level::Uniform);
    }
    if values.chunks(32).all(|warp| warp.iter().all(|&v| v == warp[0])) {
        return Some(Level::Warp);
    }
    let unit = values.iter().enumerate().all(|(t, &v)| v - values[0] == t as i128);
    Some(if unit { Level::Lane } else { Level::Varying })
}

fn operand_expr(
    operand: &str,
    definitions: &BTreeMap<String, Definition<'_>>,
    memo: &mut BTreeMap<String, Option<Rc<Expr>>>,
    depth: usize,
) -> Option<Rc<Expr>> {
    let operand = operand.trim();
    if operand == "%tid.x" {
        return Some(Rc::new(Expr::Tid));
    }
    if let Some(v) = super::parse_integer(operand) {
        return Some(Rc::new(Expr::Const(i128::from(v))));
    }
    if operand.starts_with('%') {
        return expr_of(operand, definitions, memo, depth + 1);
    }
    None
}

fn expr_of(
    register: &str,
    definitions: &BTreeMap<String, Definition<'_>>,
    memo: &mut BTreeMap<String, Option<Rc<Expr>>>,
    depth: usize,
) -> Option<Rc<Expr>> {
    if let Some(known) = memo.get(register) {
        return known.clone();
    }
    if depth > 48 {
        return None;
    }
    // Seeded before the recursion: a register reached again through its own
    // operands (a loop) is not a function of the thread index alone.
    memo.insert(register.to_string(), None);
    let built = definitions.get(register).and_then(|d| build(d, definitions, memo, depth));
    let built = built.filter(|e| e.size() <= MAX_SIZE);
    memo.insert(register.to_string(), built.clone());
    built
}

fn build(
    d: &Definition<'_>,
    definitions: &BTreeMap<String, Definition<'_>>,
    memo: &mut BTreeMap<String, Option<Rc<Expr>>>,
    depth: usize,
) -> Option<Rc<Expr>> {
    let parts: Vec<&str> = d.opcode.split('.').collect();
    let types: Vec<Ty> = parts.iter().skip(1).filter_map(|p| Ty::parse(p)).collect();
    let last = *types.last()?;
    let sources = &d.operands.get(1..)?;
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
        "setp" if sources.len() == 2 && !d.operands[0].contains('|') => {
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
        let a = operand_expr(s, definitions, memo, depth)?;
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
