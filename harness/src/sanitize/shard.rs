//! Splitting one primitive's sanitizer cases into several jobs by variant,
//! and the order jobs start in. A sanitizer slows a kernel by one to three
//! orders of magnitude, and one (primitive, tool) job runs in one process:
//! run whole, the slowest primitive's racecheck alone would set the length of
//! every `sanitize` and `mutants` run. Splitting it by variant lets the pool
//! run its parts side by side, and starting the heaviest jobs first keeps a
//! long job from starting last.
//!
//! Every case still runs, under every tool, exactly once: a shard's child
//! builds its plan from the shard's variant names (the same construction as
//! the parent's, [`super::sanitizer_plan`]), and a split whose shards do not
//! hold exactly the primitive's cases, each once, is not used (one job runs
//! them all instead). A case's input depends on the run's seed, the
//! primitive, its size and its family, never on the variant filter, so a
//! shard's cases are those of the whole run.

use super::parse::Tool;
use crate::registry::Primitive;
use crate::sweep::case::CaseId;
use anyhow::Result;

/// Work a case counts for beyond its items: a launch, a comparison and the
/// tool's bookkeeping, so that many tiny cases still weigh something.
const CASE_OVERHEAD_ITEMS: u64 = 4096;

/// One job's share of a primitive's sanitizer cases.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard {
    /// The stem of its logs: the primitive's name when the run is one
    /// shard, else `<primitive>-<i>of<count>`.
    pub label: String,
    /// The `--variant` filters its child gets (empty: every variant).
    pub variants: Vec<String>,
    /// The cases its child runs, in the child's order.
    pub expected: Vec<CaseId>,
    /// Its estimated work: items over its cases, plus [`CASE_OVERHEAD_ITEMS`] a case.
    pub work: u64,
}

fn work_of(cases: &[CaseId]) -> u64 {
    cases.iter().map(|c| c.n as u64 + CASE_OVERHEAD_ITEMS).sum()
}

/// The shards of `primitive`'s sanitizer cases at `sizes` and `seed`,
/// within the variant filters `variants` (empty: all): at most
/// [`Primitive::sanitizer_shards`] of them, each a set of whole variants,
/// balanced by work (heaviest variant first, each to the lightest shard).
/// One shard, with the filters as given, when the primitive takes one, has a
/// single variant, or when the variants' names cannot select the split
/// exactly (one name within another).
pub fn shards(primitive: Primitive, sizes: &[usize], seed: u64, variants: &[String]) -> Result<Vec<Shard>> {
    let all = super::expected_cases(&super::sanitizer_plan(primitive.name(), sizes, seed, variants)?);
    let whole = || Shard {
        label: primitive.name().to_string(),
        variants: variants.to_vec(),
        work: work_of(&all),
        expected: all.clone(),
    };
    // Each variant with its work, in the catalogue's order of first appearance.
    let mut names: Vec<(String, u64)> = Vec::new();
    for case in &all {
        let work = case.n as u64 + CASE_OVERHEAD_ITEMS;
        match names.iter_mut().find(|(name, _)| *name == case.variant) {
            Some((_, w)) => *w += work,
            None => names.push((case.variant.clone(), work)),
        }
    }
    let count = primitive.sanitizer_shards().min(names.len());
    if count <= 1 {
        return Ok(vec![whole()]);
    }
    let groups = balance(&names, count);
    let mut out = Vec::with_capacity(count);
    for (i, group) in groups.into_iter().enumerate() {
        let expected = super::expected_cases(&super::sanitizer_plan(primitive.name(), sizes, seed, &group)?);
        let wanted: Vec<&CaseId> = all.iter().filter(|c| group.contains(&c.variant)).collect();
        if expected.iter().ne(wanted.iter().copied()) {
            return Ok(vec![whole()]);
        }
        out.push(Shard {
            label: format!("{}-{}of{count}", primitive.name(), i + 1),
            variants: group,
            work: work_of(&expected),
            expected,
        });
    }
    // The groups partition the variants and each shard holds exactly its
    // group's cases: together the shards hold every case once.
    Ok(out)
}

/// `names` (variant, work) dealt into `count` groups: heaviest first, each to
/// the group with the least work so far (the first such on a tie); each
/// group's names in the order of `names`.
fn balance(names: &[(String, u64)], count: usize) -> Vec<Vec<String>> {
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(names[i].1));
    let mut load = vec![0u64; count];
    let mut member = vec![0usize; names.len()];
    for i in order {
        let lightest = (0..count).min_by_key(|&g| (load[g], g)).unwrap_or(0);
        load[lightest] += names[i].1;
        member[i] = lightest;
    }
    (0..count)
        .map(|g| names.iter().zip(&member).filter(|(_, &m)| m == g).map(|((name, _), _)| name.clone()).collect())
        .collect()
}

/// How much slower `tool` runs the same cases than memcheck, roughly (top-k,
/// H100: racecheck 311 s, initcheck 68 s, synccheck 22 s, memcheck 17 s in
/// the sanitize receipt of sources 28c1a7f941ec). Only the order jobs start
/// in depends on it.
pub fn tool_weight(tool: Tool) -> u64 {
    match tool {
        Tool::Racecheck => 16,
        Tool::Initcheck => 4,
        Tool::Memcheck | Tool::Synccheck => 1,
    }
}

/// The order to start jobs of these `(work, tool)` in: heaviest first
/// (longest processing time first), the catalogue's order on a tie.
pub fn start_order(jobs: &[(u64, Tool)]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(jobs[i].0.saturating_mul(tool_weight(jobs[i].1))));
    order
}

#[cfg(test)]
#[path = "shard_tests.rs"]
mod tests;
