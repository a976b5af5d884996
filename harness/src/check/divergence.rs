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
//! How: every register gets a level by what its value depends on (the
//! block's uniform values; the warp index; the lane; anything), found by a
//! fixpoint over all its definitions; branches take their predicate's level;
//! a statement is under a branch when it is control-dependent on it (the
//! post-dominator construction of Ferrante, Ottenstein and Warren, 1987),
//! directly or through a chain of branches. Each finding names the PTX line
//! and, through the `.loc` lines `-lineinfo` leaves, the source line. A line
//! holding `primlab: intended` (in the source or the PTX) is not a finding.

use std::collections::{BTreeMap, BTreeSet};

/// What a value depends on, from the least to the most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// The same for every thread of a block (constants, parameters, the block index).
    Uniform,
    /// The same for every lane of a warp (the warp index, a vote, the active mask).
    Warp,
    /// The thread index plus uniform values: differs lane by lane, and
    /// shifted right by 5 or more bits it is the warp index.
    Lane,
    /// Anything else that may differ between lanes (loaded data, shuffles).
    Varying,
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

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The kind.
    pub kind: Kind,
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
}

impl Finding {
    /// What went wrong, in one sentence.
    pub fn what(&self) -> &'static str {
        match self.kind {
            Kind::Barrier => "a block barrier that only the threads taking one side of a thread-dependent branch reach",
            Kind::FullMask => {
                "a full-mask (0xffffffff) warp collective that only the lanes taking one side of a lane-dependent branch reach"
            }
            Kind::PartialMaskShuffle => {
                "a shuffle with a computed (partial) mask inside a lane-dependent branch: its source lane may be outside the mask"
            }
        }
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

/// Every finding in `ptx`.
pub fn analyze(ptx: &str) -> Vec<Finding> {
    functions(ptx).iter().flat_map(findings_of).collect()
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
            out.push(parse_body(name, &body));
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

/// The level of a special register.
fn special_level(register: &str) -> Option<Level> {
    let name = register.trim_start_matches('%');
    let base = name.split('.').next().unwrap_or(name);
    match base {
        "tid" | "laneid" | "lanemask_eq" | "lanemask_lt" | "lanemask_le" | "lanemask_gt" | "lanemask_ge" => {
            Some(Level::Lane)
        }
        "warpid" => Some(Level::Warp),
        "ctaid" | "nctaid" | "ntid" | "nwarpid" | "gridid" | "smid" | "nsmid" | "envreg0" => Some(Level::Uniform),
        "clock" | "clock64" | "globaltimer" => Some(Level::Varying),
        _ => None,
    }
}

/// The levels of every register of `function` (a fixpoint over all definitions).
fn levels(function: &Function) -> BTreeMap<String, Level> {
    let mut level: BTreeMap<String, Level> = BTreeMap::new();
    let of = |level: &BTreeMap<String, Level>, operand: &str| -> Level {
        registers(operand)
            .iter()
            .map(|r| special_level(r).unwrap_or_else(|| level.get(r).copied().unwrap_or(Level::Uniform)))
            .max()
            .unwrap_or(Level::Uniform)
    };
    let exact = thread_function::exact_levels(&single_definitions(function));
    let alike = warp_invariance::warp_invariant(function, &constants(function));
    loop {
        let mut changed = false;
        for s in &function.statements {
            if !has_destination(&s.opcode) || s.operands.is_empty() {
                continue;
            }
            let sources: Vec<Level> = s.operands[1..].iter().map(|o| of(&level, o)).collect();
            let exactly = registers(&s.operands[0]).first().and_then(|r| exact.get(r)).copied();
            let mut value = exactly.unwrap_or_else(|| transfer(&s.opcode, &sources, &s.operands[1..]));
            if registers(&s.operands[0]).first().is_some_and(|r| alike.contains(r)) {
                value = value.min(Level::Warp);
            }
            if let Some((_, predicate)) = &s.guard {
                // A conditional definition also depends on its condition.
                value = value.max(of(&level, predicate));
            }
            for register in registers(&s.operands[0]) {
                let slot = level.entry(register).or_insert(Level::Uniform);
                if value > *slot {
                    *slot = value;
                    changed = true;
                }
            }
        }
        if !changed {
            return level;
        }
    }
}

/// The registers defined by exactly one statement, an unguarded one, with it.
fn single_definitions(function: &Function) -> BTreeMap<String, thread_function::Definition<'_>> {
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for s in &function.statements {
        if !has_destination(&s.opcode) || s.operands.is_empty() {
            continue;
        }
        let defined = registers(&s.operands[0]);
        if s.guard.is_none() && defined.len() == 1 {
            out.insert(defined[0].clone(), thread_function::Definition { opcode: &s.opcode, operands: &s.operands });
        }
        for register in defined {
            *count.entry(register).or_default() += 1;
        }
    }
    out.retain(|r, _| count.get(r) == Some(&1));
    out
}

/// The level of a definition by `opcode` from sources of `levels`.
fn transfer(opcode: &str, levels: &[Level], operands: &[String]) -> Level {
    let root = opcode.split('.').next().unwrap_or(opcode);
    let most = levels.iter().copied().max().unwrap_or(Level::Uniform);
    let lanes = levels.iter().filter(|&&l| l == Level::Lane).count();
    let constant = |i: usize| operands.get(i).and_then(|o| parse_integer(o));
    match root {
        "ld" | "ldu" => {
            if opcode.starts_with("ld.param") {
                Level::Uniform
            } else if most >= Level::Lane {
                Level::Varying
            } else {
                most
            }
        }
        "shfl" | "atom" | "match" if !(root == "match" && opcode.contains(".all")) => Level::Varying,
        "vote" | "activemask" | "match" | "redux" => Level::Warp,
        // The lane index and uniform values: still the lane index.
        "mov" | "cvt" | "cvta" | "add" | "sub" | "neg" if lanes <= 1 => most,
        "mad"
            if lanes <= 1
                && levels.get(2) == Some(&Level::Lane)
                && levels[..2].iter().all(|&l| l == Level::Uniform) =>
        {
            Level::Lane
        }
        // The warp index: the lane index over 32 or more.
        "shr" if levels.first() == Some(&Level::Lane) && levels.get(1).is_some_and(|&l| l == Level::Uniform) => {
            if constant(1).is_some_and(|k| k >= 5) {
                Level::Warp
            } else {
                Level::Varying
            }
        }
        "div" if levels.first() == Some(&Level::Lane) && levels.get(1).is_some_and(|&l| l == Level::Uniform) => {
            if constant(1).is_some_and(|k| k >= 32 && k % 32 == 0) {
                Level::Warp
            } else {
                Level::Varying
            }
        }
        // A lane index against a multiple of 32 (`threadIdx.x < 32`) is the same
        // for every lane of a warp (blocks are whole warps of consecutive lanes).
        "setp" | "set" if most == Level::Lane && (1..=2).any(|k| constant(k).is_some_and(|c| c % 32 == 0)) => {
            Level::Warp
        }
        // Comparisons and selections keep what they compare (a lane-dependent
        // predicate stays lane-level: it differs within a warp).
        "setp" | "selp" | "slct" | "set" => most,
        _ if most == Level::Lane => Level::Varying,
        _ => most,
    }
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
fn controlling_branches(cfg: &Cfg) -> Vec<BTreeSet<usize>> {
    let exit = cfg.blocks.len();
    let pdom = post_dominators(cfg);
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

fn findings_of(function: &Function) -> Vec<Finding> {
    if function.statements.is_empty() {
        return Vec::new();
    }
    let level = levels(function);
    let constant = constants(function);
    let cfg = cfg(function);
    let under = controlling_branches(&cfg);
    let block_of = |statement: usize| cfg.blocks.iter().position(|&(s, e)| (s..e).contains(&statement)).unwrap_or(0);
    // The level of a block's branch: its guard predicate's.
    let branch_level = |b: usize| -> Level {
        let last = &function.statements[cfg.blocks[b].1 - 1];
        last.guard.as_ref().map_or(Level::Uniform, |(_, p)| level.get(p).copied().unwrap_or(Level::Uniform))
    };
    let mut out = Vec::new();
    for (i, s) in function.statements.iter().enumerate() {
        let Some((kind, threshold)) = collective(s, &constant) else { continue };
        let block = block_of(i);
        let worst = under[block].iter().copied().filter(|&a| branch_level(a) >= threshold).min_by_key(|&a| a);
        if let Some(a) = worst {
            let branch = &function.statements[cfg.blocks[a].1 - 1];
            out.push(Finding {
                kind,
                function: function.name.clone(),
                ptx_line: s.line,
                source: s.source,
                statement: format!("{} {}", s.opcode, s.operands.join(", ")),
                branch: (branch.line, branch.source),
            });
        }
    }
    out
}

/// Whether `s` is a collective this pass checks: its kind and the branch
/// level that makes it divergent (a barrier: any thread-dependent branch; a
/// warp collective: a lane-dependent one).
fn collective(s: &Statement, constant: &BTreeMap<String, i64>) -> Option<(Kind, Level)> {
    let op = s.opcode.as_str();
    if op.starts_with("bar.sync")
        || op.starts_with("barrier.sync")
        || op.starts_with("bar.red")
        || op.starts_with("barrier.red")
        || op == "bar"
        || op.starts_with("bar.arrive")
    {
        return (!op.starts_with("bar.warp")).then_some((Kind::Barrier, Level::Warp));
    }
    let mask_operand = match op.split('.').next().unwrap_or("") {
        "shfl" => s.operands.last(),
        "vote" | "match" => s.operands.last(),
        "bar" if op.starts_with("bar.warp.sync") => s.operands.first(),
        _ => None,
    }?;
    let value = parse_integer(mask_operand).or_else(|| constant.get(mask_operand.trim()).copied());
    match value {
        Some(v) if v == -1 || v == 0xffff_ffff => Some((Kind::FullMask, Level::Lane)),
        Some(_) => None,
        None if op.starts_with("shfl") => Some((Kind::PartialMaskShuffle, Level::Lane)),
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

mod thread_function;
mod warp_invariance;

#[cfg(test)]
mod tests;
