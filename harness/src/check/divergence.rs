//! A static pass over a kernel's PTX for the one class of bug no sanitizer
//! reports and no test data reliably shows: collectives reached by only some
//! of the threads they name.
//!
//! * A block barrier (`bar.sync`, `barrier.sync`, `bar.red`) that only some
//!   threads of a block reach: it is control-dependent on a branch whose
//!   condition differs between the block's threads (an early `return` of
//!   the tail threads, `if (warp == 0) __syncthreads()`).
//! * A full-mask warp collective (`shfl.sync`, `vote.sync`, `match.sync`,
//!   `bar.warp.sync` with the mask 0xffffffff) that only some lanes of a warp
//!   reach: control-dependent on a branch whose condition differs between a
//!   warp's lanes (`if (i < n)` around a warp reduction).
//! * A shuffle whose mask is not constant (the active mask, a ballot) inside
//!   such a branch: its source lane (`lane + delta`) may be a lane outside
//!   the mask, whose value is undefined.
//!
//! How: every register gets a [`Fact`] by what its value depends on (the
//! block's uniform values; the warp index; the lane; anything), found by a
//! fixpoint over all its definitions (`uniformity`); a statement is under a
//! branch when it is control-dependent on it (the post-dominator
//! construction of Ferrante, Ottenstein and Warren, 1987), directly or
//! through a chain of branches. A collective under a branch whose condition
//! is not proven uniform for its scope (the block for a barrier, the warp
//! for a warp collective) is a finding, of one of two certainties: proven
//! when the condition, evaluated for concrete launches, takes both sides in
//! two threads of one block or warp (`thread_function`), undecided when the
//! pass cannot follow it (loaded data, shuffles, loop-carried values). Each
//! finding names the PTX line and, through the `.loc` lines `-lineinfo`
//! leaves, the source line. A line holding `primlab: intended` (in the
//! source or the PTX) is not a finding.
//!
//! Assumed of every launch: one-dimensional blocks, and data-race-free
//! shared memory (a word that one thread writes and another reads is
//! ordered by a barrier; racecheck reports the races). When the launches'
//! block sizes are all multiples of 32 (the default), warps are whole.

use std::collections::{BTreeMap, BTreeSet};

/// What a value depends on, from the least to the most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// The same for every thread of a block (constants, parameters, the block index).
    Uniform,
    /// The same for every lane of a warp (the warp index, a vote, the active mask).
    Warp,
    /// The thread index plus a uniform multiple of 32 (`blockIdx.x *
    /// blockDim.x + threadIdx.x` with whole warps): differs lane by lane, and
    /// shifted right by 5 or more bits it is the same across a warp.
    Lane,
    /// Anything else that may differ between lanes (loaded data, shuffles).
    Varying,
}

/// What the pass knows of one value: its level, and whether it is the same
/// in every warp lane by lane (`v(t) == v(t + 32k)`: the lane index, a
/// shared word chosen by the lane and read after a barrier). Both "the same
/// across a warp" and "the same across the warps lane by lane" make it the
/// same for the whole block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fact {
    /// What it depends on.
    pub level: Level,
    /// The same in every warp, lane by lane.
    pub across: bool,
    /// A uniform multiple of 32.
    pub aligned: bool,
}

impl Fact {
    /// The same for the whole block, of unknown alignment.
    pub const UNIFORM: Fact = Fact { level: Level::Uniform, across: true, aligned: false };
    /// Nothing known.
    pub const VARYING: Fact = Fact { level: Level::Varying, across: false, aligned: false };

    /// A fact of `level`, `across` and `aligned`, with what follows from them.
    pub fn new(level: Level, across: bool, aligned: bool) -> Fact {
        // Same across a warp and the same across the warps lane by lane:
        // the same in every thread of the block.
        let level = if level <= Level::Warp && across { Level::Uniform } else { level };
        let uniform = level == Level::Uniform;
        Fact { level, across: across || uniform, aligned: aligned && uniform }
    }

    /// What is known of a value that may be either this one or `other`.
    pub fn meet(self, other: Fact) -> Fact {
        Fact::new(self.level.max(other.level), self.across && other.across, self.aligned && other.aligned)
    }

    /// A value chosen by this condition, or computed by an operation other
    /// than adding a uniform multiple of 32: no longer the thread index plus
    /// an offset.
    pub fn mixed(self) -> Fact {
        let level = if self.level == Level::Lane { Level::Varying } else { self.level };
        Fact::new(level, self.across, self.aligned)
    }
}

/// What kind of divergent collective a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A block barrier under a branch that differs within the block.
    Barrier,
    /// A full-mask warp collective under a branch that differs within a warp.
    FullMask,
    /// A shuffle with a computed mask under a branch that differs within a warp.
    PartialMaskShuffle,
}

/// How sure a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Certainty {
    /// The branch takes both sides in two threads of one block (a barrier)
    /// or one warp (a warp collective) of a concrete launch: a failure.
    Proven,
    /// The pass cannot prove the branch uniform, nor find threads it splits
    /// (its condition comes from loaded data, a shuffle, a loop): a warning.
    Undecided,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The kind.
    pub kind: Kind,
    /// Proven or undecided.
    pub certainty: Certainty,
    /// The entry point or device function it is in.
    pub function: String,
    /// The PTX line of the collective (1-based).
    pub ptx_line: usize,
    /// The source (file number, line) of the collective, from `.loc`.
    pub source: Option<(u32, u32)>,
    /// The collective's statement.
    pub statement: String,
    /// The PTX line of the branch it is under, and its source line.
    pub branch: (usize, Option<(u32, u32)>),
    /// For a proven finding, the launch and the two threads that show it.
    pub witness: Option<String>,
}

impl Finding {
    /// What went wrong, in one sentence.
    pub fn what(&self) -> &'static str {
        match (self.certainty, self.kind) {
            (Certainty::Proven, Kind::Barrier) => {
                "a block barrier that only the threads taking one side of a thread-dependent branch reach"
            }
            (Certainty::Proven, Kind::FullMask) => {
                "a full-mask (0xffffffff) warp collective that only the lanes taking one side of a lane-dependent branch reach"
            }
            (Certainty::Proven, Kind::PartialMaskShuffle) => {
                "a shuffle with a computed (partial) mask inside a lane-dependent branch: its source lane may be outside the mask"
            }
            (Certainty::Undecided, Kind::Barrier) => {
                "a block barrier under a branch the pass cannot prove the same for every thread of the block"
            }
            (Certainty::Undecided, Kind::FullMask) => {
                "a full-mask (0xffffffff) warp collective under a branch the pass cannot prove the same for every lane of the warp"
            }
            (Certainty::Undecided, Kind::PartialMaskShuffle) => {
                "a shuffle with a computed (partial) mask under a branch the pass cannot prove the same for every lane of the warp"
            }
        }
    }
}

/// What the pass knows of the launches of one function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launches {
    /// The block sizes it is launched with (threads, 1 to 1024).
    pub block_sizes: Vec<u32>,
}

impl Default for Launches {
    /// Any block of whole warps a kernel is commonly launched with.
    fn default() -> Launches {
        Launches { block_sizes: vec![32, 64, 128, 256, 512, 1024] }
    }
}

impl Launches {
    /// Whether every block is whole warps.
    fn whole_warps(&self) -> bool {
        self.block_sizes.iter().all(|b| b % 32 == 0)
    }

    /// The most threads a block has.
    fn most_threads(&self) -> i128 {
        self.block_sizes.iter().copied().max().map_or(1024, i128::from)
    }
}

/// One statement of a function body.
#[derive(Debug, Clone)]
struct Statement {
    line: usize,
    source: Option<(u32, u32)>,
    guard: Option<(bool, String)>,
    opcode: String,
    operands: Vec<String>,
}

/// One function: its statements and labels (label -> statement index).
#[derive(Debug, Default)]
struct Function {
    name: String,
    /// A kernel (`.entry`), not a device function (`.func`).
    entry: bool,
    statements: Vec<Statement>,
    labels: BTreeMap<String, usize>,
}

/// The `.file` table: number -> path.
pub fn files(ptx: &str) -> BTreeMap<u32, String> {
    ptx.lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix(".file")?.trim();
            let (number, path) = rest.split_once(char::is_whitespace)?;
            let path = path.trim().split('"').nth(1)?;
            Some((number.parse().ok()?, path.to_string()))
        })
        .collect()
}

/// Every finding in `ptx`, for launches of any common block size.
#[cfg(test)]
pub fn analyze(ptx: &str) -> Vec<Finding> {
    analyze_with(ptx, &|_| Launches::default())
}

/// Every finding in `ptx`, each function judged for the launches `launches`
/// gives it.
pub fn analyze_with(ptx: &str, launches: &dyn Fn(&str) -> Launches) -> Vec<Finding> {
    functions(ptx).iter().flat_map(|f| findings_of(f, &launches(&f.name))).collect()
}

fn functions(ptx: &str) -> Vec<Function> {
    let mut out = Vec::new();
    let lines: Vec<&str> = ptx.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = strip_comment(lines[i]);
        let header = line.contains(".entry ") || line.contains(".func ");
        if !header {
            i += 1;
            continue;
        }
        let name = function_name(line);
        let entry = line.contains(".entry ");
        // The body: from the first `{` at depth 0 after the header to its match
        // (vector operands such as `{%r1,%r2}` open and close on one line).
        let mut depth = 0i32;
        let mut body = Vec::new();
        let mut started = false;
        while i < lines.len() {
            let text = strip_comment(lines[i]);
            if started && depth > 0 {
                body.push((i + 1, text));
            }
            for c in text.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        started = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            i += 1;
            if started && depth == 0 {
                break;
            }
            if !started && text.trim_end().ends_with(';') {
                break; // a declaration without a body
            }
        }
        if started {
            out.push(Function { entry, ..parse_body(name, &body) });
        }
    }
    out
}

fn strip_comment(line: &str) -> &str {
    line.split("//").next().unwrap_or("")
}

fn function_name(header: &str) -> String {
    let before = header.split('(').next().unwrap_or(header);
    before.split_whitespace().last().unwrap_or("?").to_string()
}

fn parse_body(name: String, body: &[(usize, &str)]) -> Function {
    let mut function = Function { name, ..Function::default() };
    let mut source = None;
    let mut pending = String::new();
    let mut pending_line = 0;
    for &(line, text) in body {
        let trimmed = text.trim();
        if let Some(rest) = trimmed.strip_prefix(".loc") {
            let mut parts = rest.split_whitespace();
            if let (Some(f), Some(l)) = (parts.next(), parts.next()) {
                source = f.parse().ok().zip(l.parse().ok());
            }
            continue;
        }
        if trimmed.is_empty() || (pending.is_empty() && trimmed.starts_with('.')) {
            continue;
        }
        if pending.is_empty() {
            if let Some(label) = trimmed.strip_suffix(':') {
                function.labels.insert(label.trim().to_string(), function.statements.len());
                continue;
            }
            pending_line = line;
        }
        pending.push_str(trimmed);
        pending.push(' ');
        while let Some(end) = pending.find(';') {
            let statement = pending[..end].trim().to_string();
            pending = pending[end + 1..].trim_start().to_string();
            if let Some(s) = parse_statement(&statement, pending_line, source) {
                function.statements.push(s);
            }
            pending_line = line;
        }
    }
    function
}

fn parse_statement(text: &str, line: usize, source: Option<(u32, u32)>) -> Option<Statement> {
    let mut rest = text.trim();
    if rest.is_empty() || rest.starts_with('{') || rest.starts_with('}') {
        return None;
    }
    let guard = if let Some(g) = rest.strip_prefix('@') {
        let (predicate, after) = g.split_once(char::is_whitespace)?;
        rest = after.trim();
        Some(match predicate.strip_prefix('!') {
            Some(p) => (true, p.to_string()),
            None => (false, predicate.to_string()),
        })
    } else {
        None
    };
    let (opcode, operands) = match rest.split_once(char::is_whitespace) {
        Some((op, ops)) => (op.to_string(), split_operands(ops)),
        None => (rest.to_string(), Vec::new()),
    };
    Some(Statement { line, source, guard, opcode, operands })
}

/// Operands split at top-level commas (not inside `{}`, `[]` or `()`).
fn split_operands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut current = String::new();
    for c in text.chars() {
        match c {
            '{' | '[' | '(' => depth += 1,
            '}' | ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(current.trim().to_string());
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_string());
    }
    out
}

/// The registers named in an operand (`%r1`, `{%r1,%r2}`, `[%rd3+8]`, `%r7|%p2`).
fn registers(operand: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes: Vec<char> = operand.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == '%' {
            let start = i;
            i += 1;
            while i < bytes.len() && (bytes[i].is_alphanumeric() || bytes[i] == '_' || bytes[i] == '.') {
                i += 1;
            }
            out.push(bytes[start..i].iter().collect());
        } else {
            i += 1;
        }
    }
    out
}

/// Opcodes whose first operand is not a destination.
fn has_destination(opcode: &str) -> bool {
    const NO_DEST: [&str; 15] = [
        "st",
        "red",
        "bar",
        "barrier",
        "bra",
        "ret",
        "exit",
        "membar",
        "fence",
        "prefetch",
        "trap",
        "nanosleep",
        "cp",
        "mbarrier",
        "griddepcontrol",
    ];
    let root = opcode.split('.').next().unwrap_or(opcode);
    !NO_DEST.contains(&root) && root != "call"
}

fn parse_integer(text: &str) -> Option<i64> {
    let t = text.trim();
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return i64::from_str_radix(hex.trim_end_matches(['U', 'u']), 16).ok();
    }
    t.trim_end_matches(['U', 'u']).parse().ok()
}

/// Registers defined once, by a move of an integer constant, with their value.
fn constants(function: &Function) -> BTreeMap<String, i64> {
    let mut definitions: BTreeMap<String, usize> = BTreeMap::new();
    let mut values = BTreeMap::new();
    for s in &function.statements {
        if !has_destination(&s.opcode) || s.operands.is_empty() {
            continue;
        }
        for register in registers(&s.operands[0]) {
            *definitions.entry(register.clone()).or_default() += 1;
            if s.opcode.starts_with("mov") && s.guard.is_none() {
                if let Some(v) = s.operands.get(1).and_then(|o| parse_integer(o)) {
                    values.insert(register, v);
                }
            }
        }
    }
    values.retain(|r, _| definitions.get(r) == Some(&1));
    values
}

/// Basic blocks: (first statement, one past the last), and successors (`None` is the exit).
struct Cfg {
    blocks: Vec<(usize, usize)>,
    successors: Vec<Vec<Option<usize>>>,
}

fn ends_flow(s: &Statement) -> bool {
    let root = s.opcode.split('.').next().unwrap_or("");
    matches!(root, "bra" | "ret" | "exit" | "brx")
}

fn cfg(function: &Function) -> Cfg {
    let n = function.statements.len();
    let mut starts: BTreeSet<usize> = function.labels.values().copied().filter(|&i| i < n).collect();
    starts.insert(0);
    for (i, s) in function.statements.iter().enumerate() {
        if ends_flow(s) && i + 1 < n {
            starts.insert(i + 1);
        }
    }
    let starts: Vec<usize> = starts.into_iter().filter(|&i| i < n).collect();
    let blocks: Vec<(usize, usize)> =
        starts.iter().enumerate().map(|(k, &s)| (s, starts.get(k + 1).copied().unwrap_or(n))).collect();
    let block_of = |statement: usize| starts.partition_point(|&s| s <= statement).saturating_sub(1);
    let successors = blocks
        .iter()
        .enumerate()
        .map(|(b, &(_, end))| {
            let last = &function.statements[end - 1];
            let next = (b + 1 < blocks.len()).then_some(b + 1);
            let root = last.opcode.split('.').next().unwrap_or("");
            let conditional = last.guard.is_some();
            let mut out = Vec::new();
            match root {
                "bra" => {
                    let target = last.operands.first().and_then(|l| function.labels.get(l.trim()));
                    out.push(target.map(|&t| block_of(t)).filter(|&t| t < blocks.len()));
                    if conditional {
                        out.push(next);
                    }
                }
                "ret" | "exit" => {
                    out.push(None);
                    if conditional {
                        out.push(next);
                    }
                }
                _ => out.push(next),
            }
            out
        })
        .collect();
    Cfg { blocks, successors }
}

/// Immediate post-dominators (index `blocks.len()` is the exit) by the
/// iterative data-flow method over post-dominator sets.
fn post_dominators(cfg: &Cfg) -> Vec<BTreeSet<usize>> {
    let exit = cfg.blocks.len();
    let all: BTreeSet<usize> = (0..=exit).collect();
    let mut pdom: Vec<BTreeSet<usize>> =
        (0..=exit).map(|b| if b == exit { [exit].into() } else { all.clone() }).collect();
    loop {
        let mut changed = false;
        for b in (0..exit).rev() {
            let mut meet: Option<BTreeSet<usize>> = None;
            for s in &cfg.successors[b] {
                let s = s.unwrap_or(exit);
                meet = Some(match meet {
                    None => pdom[s].clone(),
                    Some(m) => m.intersection(&pdom[s]).copied().collect(),
                });
            }
            let mut set = meet.unwrap_or_default();
            set.insert(b);
            if set != pdom[b] {
                pdom[b] = set;
                changed = true;
            }
        }
        if !changed {
            return pdom;
        }
    }
}

/// For each block, the blocks ending in a conditional branch it is
/// control-dependent on, directly or through a chain of them.
fn controlling_branches(cfg: &Cfg, pdom: &[BTreeSet<usize>]) -> Vec<BTreeSet<usize>> {
    let exit = cfg.blocks.len();
    let mut direct: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); exit];
    for a in 0..exit {
        if cfg.successors[a].len() < 2 {
            continue;
        }
        for s in &cfg.successors[a] {
            let b = s.unwrap_or(exit);
            // Every node that post-dominates B but not A depends on A's branch.
            for (n, dependent) in direct.iter_mut().enumerate() {
                if pdom[b].contains(&n) && !(pdom[a].contains(&n) && n != a) {
                    dependent.insert(a);
                }
            }
        }
    }
    // Transitive: the branches the controlling branches are themselves under.
    let mut all = direct.clone();
    loop {
        let mut changed = false;
        for n in 0..exit {
            let more: BTreeSet<usize> = all[n].iter().flat_map(|&a| all[a].iter().copied()).collect();
            for a in more {
                changed |= all[n].insert(a);
            }
        }
        if !changed {
            return all;
        }
    }
}

/// Which threads a collective names: a barrier the block, a warp
/// collective the warp.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Scope {
    Warp,
    Block,
}

impl Scope {
    /// Whether a condition of `fact` is proven the same for every thread the
    /// collective names.
    fn uniform(self, fact: Fact) -> bool {
        match self {
            Scope::Warp => fact.level <= Level::Warp,
            Scope::Block => fact.level == Level::Uniform,
        }
    }
}

/// The predicate register of the conditional branch that ends `block`.
fn branch_predicate<'a>(function: &'a Function, cfg: &Cfg, block: usize) -> Option<&'a str> {
    let last = &function.statements[cfg.blocks[block].1 - 1];
    last.guard.as_ref().map(|(_, p)| p.as_str())
}

fn findings_of(function: &Function, launches: &Launches) -> Vec<Finding> {
    if function.statements.is_empty() {
        return Vec::new();
    }
    let constant = constants(function);
    let cfg = cfg(function);
    let pdom = post_dominators(&cfg);
    let under = controlling_branches(&cfg, &pdom);
    let reaching = reaching::reaching(function, &cfg);
    let facts = uniformity::facts(function, &cfg, &under, &reaching, &constant, launches);
    let exprs = thread_function::Exprs::new(function, &reaching);
    let (cfg, under, pdom) = (&cfg, &under[..], &pdom[..]);
    let mut judge = Judge { function, cfg, under, pdom, facts: &facts, launches, memo: BTreeMap::new(), exprs };
    let block_of = |statement: usize| cfg.blocks.iter().position(|&(s, e)| (s..e).contains(&statement)).unwrap_or(0);
    let mut out = Vec::new();
    for (i, s) in function.statements.iter().enumerate() {
        let Some((kind, scope)) = collective(s, &constant) else { continue };
        let judged: Vec<(usize, Certainty, Option<String>)> =
            under[block_of(i)].iter().filter_map(|&a| judge.branch(a, scope).map(|(c, w)| (a, c, w))).collect();
        // A proven branch before an undecided one, the first of each.
        let worst = judged.iter().find(|j| j.1 == Certainty::Proven).or_else(|| judged.first());
        if let Some((a, certainty, witness)) = worst.cloned() {
            let branch = &function.statements[cfg.blocks[a].1 - 1];
            out.push(Finding {
                kind,
                certainty,
                function: function.name.clone(),
                ptx_line: s.line,
                source: s.source,
                statement: format!("{} {}", s.opcode, s.operands.join(", ")),
                branch: (branch.line, branch.source),
                witness,
            });
        }
    }
    out
}

/// A branch's judgement for one scope: nothing (proven uniform), or a
/// certainty with its witness.
type Judged = Option<(Certainty, Option<String>)>;

/// Judges the branches collectives are under, each once per scope.
struct Judge<'a> {
    function: &'a Function,
    cfg: &'a Cfg,
    under: &'a [BTreeSet<usize>],
    pdom: &'a [BTreeSet<usize>],
    facts: &'a uniformity::Facts<'a>,
    launches: &'a Launches,
    memo: BTreeMap<(usize, Scope), Judged>,
    exprs: thread_function::Exprs<'a>,
}

impl Judge<'_> {
    /// Nothing when the branch ending `block` is proven uniform for `scope`;
    /// proven with its witness when a concrete launch splits the scope;
    /// undecided otherwise.
    fn branch(&mut self, block: usize, scope: Scope) -> Judged {
        if let Some(known) = self.memo.get(&(block, scope)) {
            return known.clone();
        }
        let at = self.cfg.blocks[block].1 - 1;
        let judged = branch_predicate(self.function, self.cfg, block).and_then(|p| {
            if scope.uniform(self.facts.at(at, p)) {
                return None;
            }
            let path = self.path_to(block);
            Some(match self.exprs.witness(at, p, &path, scope, &self.launches.block_sizes) {
                Some(w) => (Certainty::Proven, Some(w)),
                None => (Certainty::Undecided, None),
            })
        });
        self.memo.insert((block, scope), judged.clone());
        judged
    }

    /// The conditions a thread meets to reach `block`: for each branch it is
    /// under whose one side leads to it (the block post-dominates that
    /// side's successor and not the other's), the predicate's value there.
    fn path_to(&self, block: usize) -> Vec<thread_function::Condition> {
        let exit = self.cfg.blocks.len();
        let leads = |s: &Option<usize>| self.pdom[s.unwrap_or(exit)].contains(&block);
        self.under[block]
            .iter()
            .filter_map(|&a| {
                let last = &self.function.statements[self.cfg.blocks[a].1 - 1];
                let (negated, register) = last.guard.clone()?;
                let [taken, fallthrough] = self.cfg.successors[a].as_slice() else { return None };
                // The guard holds on the taken side.
                (leads(taken) != leads(fallthrough)).then(|| thread_function::Condition {
                    at: self.cfg.blocks[a].1 - 1,
                    register,
                    holds: leads(taken) != negated,
                })
            })
            .collect()
    }
}

/// Whether `s` is a collective this pass checks: its kind and the threads
/// it names (a barrier: the block; a warp collective: the warp).
fn collective(s: &Statement, constant: &BTreeMap<String, i64>) -> Option<(Kind, Scope)> {
    let op = s.opcode.as_str();
    if op.starts_with("bar.sync")
        || op.starts_with("barrier.sync")
        || op.starts_with("bar.red")
        || op.starts_with("barrier.red")
        || op == "bar"
        || op.starts_with("bar.arrive")
    {
        return (!op.starts_with("bar.warp")).then_some((Kind::Barrier, Scope::Block));
    }
    let mask_operand = match op.split('.').next().unwrap_or("") {
        "shfl" => s.operands.last(),
        "vote" | "match" => s.operands.last(),
        "bar" if op.starts_with("bar.warp.sync") => s.operands.first(),
        _ => None,
    }?;
    let value = parse_integer(mask_operand).or_else(|| constant.get(mask_operand.trim()).copied());
    match value {
        Some(v) if v == -1 || v == 0xffff_ffff => Some((Kind::FullMask, Scope::Warp)),
        Some(_) => None,
        None if op.starts_with("shfl") => Some((Kind::PartialMaskShuffle, Scope::Warp)),
        None => None,
    }
}

/// Whether a finding is marked intended: its source line or its PTX line holds
/// `primlab: intended`.
pub fn intended(finding: &Finding, ptx: &str, source_lines: Option<&[String]>) -> bool {
    const MARK: &str = "primlab: intended";
    let ptx_marked = ptx.lines().nth(finding.ptx_line.saturating_sub(1)).is_some_and(|l| l.contains(MARK));
    let source_marked = match (finding.source, source_lines) {
        (Some((_, line)), Some(lines)) => {
            let at = line as usize;
            // The line itself, or a comment on the line above.
            [at, at.saturating_sub(1)].iter().any(|&l| l >= 1 && lines.get(l - 1).is_some_and(|t| t.contains(MARK)))
        }
        _ => false,
    };
    ptx_marked || source_marked
}

mod reaching;
mod shared_memory;
mod thread_function;
mod uniformity;
mod warp_invariance;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod uniformity_tests;
