//! `harness sweep --gpus N|all`: the single-GPU case catalogue spread over
//! N GPUs (one worker thread per GPU, merged back in catalogue order), then
//! the sharded reduce and scan cases on all N GPUs through NCCL, each
//! checked against the exact model with poisoned outputs. One combined
//! report and receipt.

use super::cluster::{Cluster, DeviceSummary};
use super::emulated_scan::{emulated_scan, EmulatedScan, VIRTUAL_RANKS};
use super::nccl::{self, NcclInfo};
use super::sharded_reduce::{self, sharded_reduce};
use super::sharded_scan::{self, sharded_scan};
use super::topology::{resolve_on_this_machine, GpuCount};
use crate::progress::Progress;
use crate::receipts::MachineInfo;
use crate::registry::Primitive;
use crate::sweep::case::{failure_line, CaseId, CaseResult, Verdict};
use crate::sweep::gpu::{case_seed, catalogue, int_families};
use crate::sweep::{compare, SweepPlan};
use anyhow::{anyhow, Result};
use model::generators::{ints, DataFamily};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The look-back tile (4096) and the Blelloch recursion step (512^2): the
/// per-GPU sizes m whose neighbours k*m - 1, k*m, k*m + 1 the sharded cases visit.
pub const SHARD_BOUNDARY_UNITS: [usize; 3] = [1, 4096, 262_144];

/// The largest size the sharded cases take from the ordinary sweep sizes.
pub const SHARDED_MAX_DEFAULT: usize = 1 << 24;

/// What was checked before any work: the GPU count and, when sharded cases
/// are selected, NCCL.
#[derive(Debug, Clone)]
pub struct Preflight {
    /// GPUs to use.
    pub gpus: usize,
    /// NCCL, when the sharded cases run.
    pub nccl: Option<NcclInfo>,
    /// Environment notes (overridden multicast switches).
    pub notes: Vec<String>,
}

/// Whether the selection includes sharded cases (reduce or scan, a variant
/// filter that matches a sharded variant).
pub fn wants_sharded(plan: &SweepPlan, k: usize) -> bool {
    sharded_variants(k).iter().any(|(p, v)| plan.wants_primitive(p) && plan.wants_variant(v))
}

/// The sharded variants' (primitive, name) for k GPUs: the reduce and scan
/// over the k GPUs, and the scan's device steps for [`VIRTUAL_RANKS`]
/// virtual ranks on GPU 0 (`emulated_scan`).
pub fn sharded_variants(k: usize) -> [(&'static str, String); 3] {
    [
        ("reduce", format!("sharded.k{k}.{}.i32", sharded_reduce::VARIANT.name())),
        ("scan", format!("sharded.k{k}.{}.exclusive.i32", sharded_scan::VARIANT.name())),
        ("scan", format!("sharded.emulated_v{VIRTUAL_RANKS}.{}.exclusive.i32", sharded_scan::VARIANT.name())),
    ]
}

/// Sets the no-multicast environment, resolves `--gpus` against the
/// devices present and, if sharded cases are selected, loads NCCL. Every
/// error here is a clear one-line reason (too many GPUs, no driver, NCCL
/// missing).
pub fn preflight(asked: GpuCount, plan: &SweepPlan) -> Result<Preflight> {
    let notes = nccl::enforce_no_multicast_env();
    let gpus = resolve_on_this_machine(asked)?;
    let nccl = if wants_sharded(plan, gpus) { Some(nccl::probe()?) } else { None };
    Ok(Preflight { gpus, nccl, notes })
}

/// The sizes of the sharded cases for k GPUs: the explicit `--sizes`, or
/// the sweep's sizes up to 2^24 plus k*m - 1, k*m, k*m + 1 for the shard
/// boundary units (so some shards are one element apart, and n < k leaves
/// GPUs with empty shards).
pub fn sharded_sizes(plan: &SweepPlan, explicit: bool, k: usize) -> Vec<usize> {
    if explicit {
        return plan.sizes.clone();
    }
    let mut sizes: BTreeSet<usize> = plan.sizes.iter().copied().filter(|&n| n <= SHARDED_MAX_DEFAULT).collect();
    for m in SHARD_BOUNDARY_UNITS {
        for n in [k * m - 1, k * m, k * m + 1] {
            if n > 0 {
                sizes.insert(n);
            }
        }
    }
    sizes.into_iter().collect()
}

/// One sharded check.
struct ShardedCase {
    id: CaseId,
    family: DataFamily,
}

fn sharded_cases(plan: &SweepPlan, explicit: bool, k: usize) -> Vec<ShardedCase> {
    let mut out = Vec::new();
    for n in sharded_sizes(plan, explicit, k) {
        for (f, family) in int_families(plan, n).into_iter().enumerate() {
            let seed = case_seed(plan.seed, "sharded", n, f);
            for (primitive, variant) in sharded_variants(k) {
                if plan.wants_primitive(primitive) && plan.wants_variant(&variant) {
                    let id = crate::sweep::gpu::id(primitive, variant, n.to_string(), n, &family.name(), seed);
                    out.push(ShardedCase { id, family });
                }
            }
        }
    }
    out
}

/// The rerun command of a sharded case.
pub fn sharded_repro(id: &CaseId, k: usize, plan_seed: u64) -> String {
    format!(
        "harness sweep --gpu-only --gpus {k} --primitive {} --variant {} --sizes {} --seed {plan_seed:#x}",
        id.primitive, id.variant, id.n
    )
}

/// Prints the sharded cases `--list` would run with k GPUs.
pub fn list(plan: &SweepPlan, explicit: bool, asked: GpuCount) {
    let k = match asked {
        GpuCount::Exactly(k) => Some(k),
        GpuCount::All => kernels::probe_driver().ok(),
    };
    match k {
        Some(k) => {
            let cases = sharded_cases(plan, explicit, k);
            for case in &cases {
                println!("{} family={}", case.id.marker(), case.id.family);
            }
            println!("sweep: {} sharded cases over {k} GPU(s) (NCCL)", cases.len());
        }
        None => println!("sweep: --gpus all: no GPU here, so the sharded cases cannot be listed"),
    }
}

/// The GPU half of `sweep --gpus`.
pub struct MultiGpuSweep {
    /// GPU 0's machine facts.
    pub machine: MachineInfo,
    /// The catalogue's cases, in catalogue order.
    pub catalogue: Vec<CaseResult>,
    /// The sharded cases.
    pub sharded: Vec<CaseResult>,
    /// Receipt details (GPUs, NCCL, per-GPU case counts, sizes).
    pub details: serde_json::Value,
}

/// Runs the catalogue over `pre.gpus` GPUs, then the sharded cases.
pub fn run(
    pre: &Preflight,
    plan: &SweepPlan,
    explicit_sizes: bool,
    mutant: u32,
    max_shown: usize,
) -> Result<MultiGpuSweep> {
    let k = pre.gpus;
    for note in &pre.notes {
        println!("sweep: {note}");
    }
    let spread = spread_catalogue(plan, k, mutant, max_shown)?;
    crate::sweep::summary::print_table(&format!("GPU kernels vs the model, spread over {k} GPU(s)"), &spread.results);

    let cases = sharded_cases(plan, explicit_sizes, k);
    let mut sharded = Vec::new();
    let mut nccl_info = pre.nccl.clone();
    if !cases.is_empty() {
        let started = Instant::now();
        match Cluster::start(k, mutant) {
            Ok(cluster) => {
                nccl_info = Some(cluster.nccl().clone());
                println!(
                    "sweep: {} sharded case(s) over {k} GPU(s), NCCL {} ({}), one thread per GPU",
                    cases.len(),
                    cluster.nccl().version,
                    cluster.nccl().library.as_deref().unwrap_or("library path unknown")
                );
                sharded = run_sharded(&cluster, &cases, plan.seed, max_shown);
            }
            Err(e) => {
                let id = crate::sweep::gpu::id("multigpu", format!("nccl_setup.k{k}"), "-".into(), 0, "-", 0);
                let verdict = Verdict::fail("an NCCL communicator", format!("error: {e:#}"), "cluster start");
                sharded.push(CaseResult::new(id, verdict, started.elapsed().as_millis() as u64));
            }
        }
        crate::sweep::summary::print_table(&format!("sharded reduce and scan over {k} GPU(s) (NCCL)"), &sharded);
    }

    let details = serde_json::json!({
        "gpus": k,
        "devices": spread.devices,
        "cases_per_gpu": spread.per_worker,
        "nccl": nccl_info,
        "no_multicast_env": nccl::NO_MULTICAST_ENV.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
        "sharded_sizes": sharded_sizes(plan, explicit_sizes, k),
        "sharded_variants": sharded_variants(k).iter().map(|(p, v)| format!("{p}/{v}")).collect::<Vec<_>>(),
        "sharded_cases": sharded.len(),
    });
    Ok(MultiGpuSweep { machine: spread.machine, catalogue: spread.results, sharded, details })
}

struct Spread {
    results: Vec<CaseResult>,
    machine: MachineInfo,
    devices: Vec<DeviceSummary>,
    per_worker: Vec<usize>,
}

/// Runs of consecutive catalogue cases that share one generated input
/// (same primitive, size, family and seed): a worker takes a whole run, so
/// it prepares that input once.
fn input_groups(ids: &[CaseId]) -> Vec<std::ops::Range<usize>> {
    let mut groups = Vec::new();
    let mut start = 0;
    for i in 1..=ids.len() {
        let same = i < ids.len() && {
            let (a, b) = (&ids[i - 1], &ids[i]);
            a.primitive == b.primitive && a.n == b.n && a.family == b.family && a.seed == b.seed
        };
        if !same {
            groups.push(start..i);
            start = i;
        }
    }
    groups.retain(|g| !g.is_empty());
    groups
}

/// The catalogue's cases over k GPUs: GPUs opened one after another (the
/// first fills the on-disk kernel cache), then one worker per GPU with its
/// own copy of the catalogue (its own memos), taking input groups largest
/// first from a shared counter; results merged in catalogue order.
fn spread_catalogue(plan: &SweepPlan, k: usize, mutant: u32, max_shown: usize) -> Result<Spread> {
    let ids: Vec<CaseId> = catalogue(plan).into_iter().map(|c| c.id).collect();
    let mut groups = input_groups(&ids);
    groups.sort_by_key(|g| std::cmp::Reverse(ids[g.start].n));
    // Only the families some selected case launches (none when a filter
    // leaves only the sharded cases).
    let families: BTreeSet<kernels::KernelFamily> = Primitive::ALL
        .into_iter()
        .filter(|p| plan.wants(*p) && ids.iter().any(|id| id.primitive == p.name()))
        .flat_map(|p| p.families().iter().copied())
        .collect();
    let mut gpus = Vec::with_capacity(k);
    for ordinal in 0..k {
        let gpu = kernels::Gpu::open(kernels::GpuOptions { ordinal, mutant })
            .map_err(|e| anyhow!("GPU {ordinal} of {k}: {e}"))?;
        for family in &families {
            gpu.module(*family).map_err(|e| anyhow!("GPU {ordinal}: {e}"))?;
        }
        gpus.push(gpu);
    }
    let first = gpus[0].info();
    println!(
        "sweep: {k} GPU(s): {} (sm_{}{}, {} SMs) x {k}, NVRTC {}.{}, {} catalogue cases in {} input groups, sizes {:?}{}",
        first.name,
        first.compute_capability.0,
        first.compute_capability.1,
        first.sm_count,
        first.nvrtc_version.0,
        first.nvrtc_version.1,
        ids.len(),
        groups.len(),
        plan.sizes,
        if mutant != 0 { format!(", MUTANT {mutant}") } else { String::new() }
    );
    let machine = MachineInfo::collect(&gpus[0]);
    let devices: Vec<DeviceSummary> = gpus.iter().map(DeviceSummary::of).collect();
    let progress = Progress::new(&format!("gpu x{k}"), ids.len() as u64);
    let next = AtomicUsize::new(0);
    let shown = AtomicUsize::new(0);
    let collected: Mutex<Vec<(usize, CaseResult)>> = Mutex::new(Vec::with_capacity(ids.len()));
    let mut per_worker = vec![0usize; k];
    let worker_errors: Mutex<Vec<String>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        let handles: Vec<_> = gpus
            .iter()
            .enumerate()
            .map(|(w, gpu)| {
                let (groups, ids, next, shown, collected, progress, worker_errors) =
                    (&groups, &ids, &next, &shown, &collected, &progress, &worker_errors);
                scope.spawn(move || {
                    if let Err(e) = gpu.context().bind_to_thread() {
                        worker_errors.lock().unwrap_or_else(|p| p.into_inner()).push(format!("GPU {w}: {e}"));
                        return 0;
                    }
                    let cases = catalogue(plan);
                    if cases.len() != ids.len() || cases.iter().zip(ids.iter()).any(|(c, id)| c.id != *id) {
                        worker_errors
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push(format!("GPU {w}: the catalogue differs between threads (a harness bug)"));
                        return 0;
                    }
                    let mut done = 0;
                    loop {
                        let g = next.fetch_add(1, Ordering::Relaxed);
                        let Some(group) = groups.get(g) else { break };
                        let mut prepared: Option<(String, crate::sweep::gpu::PreparedInput)> = None;
                        for index in group.clone() {
                            let case = &cases[index];
                            let started = Instant::now();
                            // A group is one input by its ids; the key decides.
                            if prepared.as_ref().is_none_or(|(key, _)| key != case.input_key()) {
                                prepared = Some((case.input_key().to_string(), case.prepare()));
                            }
                            let Some((_, input)) = &prepared else { continue };
                            let verdict = case.run(gpu, input);
                            let millis = started.elapsed().as_millis() as u64;
                            if let Verdict::Fail(m) = &verdict {
                                if shown.fetch_add(1, Ordering::Relaxed) < max_shown {
                                    progress.println(&format!(
                                        "FAIL [GPU {w}] {}\n     rerun: {}",
                                        failure_line(&case.id, m),
                                        case.id.repro(plan.seed)
                                    ));
                                }
                            }
                            progress.step(&case.id.marker());
                            collected.lock().unwrap_or_else(|p| p.into_inner()).push((
                                index,
                                CaseResult::new(case.id.clone(), verdict, millis)
                                    .with_digest(case.reference(input).ok()),
                            ));
                            done += 1;
                        }
                    }
                    done
                })
            })
            .collect();
        for (w, h) in handles.into_iter().enumerate() {
            per_worker[w] = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        }
    });
    progress.finish();
    let errors = worker_errors.into_inner().unwrap_or_else(|p| p.into_inner());
    if !errors.is_empty() {
        return Err(anyhow!(errors.join("; ")));
    }
    let mut collected = collected.into_inner().unwrap_or_else(|p| p.into_inner());
    collected.sort_by_key(|(i, _)| *i);
    if collected.len() != ids.len() {
        return Err(anyhow!("{} of {} catalogue cases came back (a harness bug)", collected.len(), ids.len()));
    }
    Ok(Spread { results: collected.into_iter().map(|(_, r)| r).collect(), machine, devices, per_worker })
}

/// The model's answers for one input.
struct Expected {
    input: Arc<Vec<i32>>,
    sum: i64,
    exclusive: Vec<i64>,
    shard_totals: Vec<i64>,
    /// Each shard's exclusive offset (the model's offset math).
    shard_offsets: Vec<i64>,
}

fn expected(family: DataFamily, n: usize, seed: u64, k: usize) -> Result<Expected, String> {
    let input = ints(family, n, seed).map_err(|e| e.to_string())?;
    let sum = model::reduce::reduce_i64(&input).map_err(|e| e.to_string())?;
    let exclusive = model::scan::exclusive_scan_i64(&input).map_err(|e| e.to_string())?;
    let shards =
        super::shard::partition(n as u64, k, super::shard::ValueRange::of(&input)).map_err(|e| e.to_string())?;
    let shard_totals = shards
        .iter()
        .map(|s| model::reduce::reduce_i64(&input[s.range()]))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let shard_offsets = super::shard::exclusive_offsets(&shard_totals).ok_or("shard totals overflow int64")?;
    Ok(Expected { input: Arc::new(input), sum, exclusive, shard_totals, shard_offsets })
}

fn error_verdict(e: &anyhow::Error) -> Verdict {
    Verdict::fail("a result", format!("error: {e:#}").replace('\n', " "), "sharded gpu call")
}

/// Every rank's all-reduced total is the model's sum, and every rank's
/// shard total is the model's sum of that shard.
fn check_reduce(ex: &Expected, ranks: &[sharded_reduce::RankReduce]) -> Verdict {
    for (r, rank) in ranks.iter().enumerate() {
        if rank.total != ex.sum {
            return Verdict::fail(ex.sum, rank.total, &format!("all-reduced total on GPU {r}"));
        }
    }
    for (r, rank) in ranks.iter().enumerate() {
        if rank.partial != ex.shard_totals[r] {
            return Verdict::fail(ex.shard_totals[r], rank.partial, &format!("shard total of GPU {r}"));
        }
    }
    Verdict::Pass
}

/// The ranks' outputs, in rank order, are the model's exclusive scan
/// (every element; the index reported is global), and every rank gathered
/// the model's shard totals.
fn check_scan(ex: &Expected, ranks: &[sharded_scan::RankScan]) -> Verdict {
    // A wrong offset shows first as a wrong first element of a shard: say so.
    for (r, rank) in ranks.iter().enumerate() {
        if let Some(&first) = rank.output.first() {
            if first != ex.shard_offsets[r] {
                let what = format!("exclusive offset of GPU {r} (first element of its shard)");
                return Verdict::fail_at(rank.shard.start, ex.shard_offsets[r], first, &what);
            }
        }
    }
    let mut stitched = Vec::with_capacity(ex.exclusive.len());
    for rank in ranks {
        stitched.extend_from_slice(&rank.output);
    }
    let verdict = compare::exact(&ex.exclusive, &stitched, "prefix");
    if !verdict.passed() {
        return verdict;
    }
    for (r, rank) in ranks.iter().enumerate() {
        let v = compare::exact(&ex.shard_totals, &rank.gathered, &format!("all-gathered shard totals on GPU {r}"));
        if !v.passed() {
            return v;
        }
    }
    Verdict::Pass
}

/// (size, family name, seed) of one generated input.
type InputKey = (usize, String, u64);

/// The emulated virtual ranks' stitched scan is the model's, and their
/// shard totals are the model's sums of the virtual shards.
fn check_emulated(ex: &Expected, emulated: &EmulatedScan) -> Verdict {
    let verdict = compare::exact(&ex.exclusive, &emulated.output, "prefix (virtual ranks, offset pass)");
    if !verdict.passed() {
        return verdict;
    }
    let shards =
        match super::shard::partition(ex.exclusive.len() as u64, VIRTUAL_RANKS, super::shard::ValueRange::ANY_I32) {
            Ok(s) => s,
            Err(e) => return Verdict::fail("shards", e, "partition"),
        };
    let expected: Result<Vec<i64>, _> =
        shards.iter().map(|s| model::reduce::reduce_i64(&ex.input[s.range()])).collect();
    match expected {
        Ok(totals) => compare::exact(&totals, &emulated.totals, "virtual shard totals (mg_shard_total)"),
        Err(e) => Verdict::fail("a model result", e, "model"),
    }
}

fn run_sharded(cluster: &Cluster, cases: &[ShardedCase], plan_seed: u64, max_shown: usize) -> Vec<CaseResult> {
    let k = cluster.world();
    let progress = Progress::new(&format!("sharded x{k}"), cases.len() as u64);
    let mut results = Vec::with_capacity(cases.len());
    let mut shown = 0;
    let mut current: Option<(InputKey, Result<Expected, String>)> = None;
    for case in cases {
        let started = Instant::now();
        let key = (case.id.n, case.id.family.clone(), case.id.seed);
        if current.as_ref().map(|(k, _)| k) != Some(&key) {
            drop(current.take()); // free the previous input first
            current = Some((key.clone(), expected(case.family, case.id.n, case.id.seed, k)));
        }
        let verdict = match &current.as_ref().expect("set above").1 {
            Err(e) => Verdict::fail("an input", e, "generator"),
            Ok(ex) if case.id.variant.contains(".emulated_v") => {
                match emulated_scan(cluster, ex.input.clone(), VIRTUAL_RANKS) {
                    Ok(emulated) => check_emulated(ex, &emulated),
                    Err(e) => error_verdict(&e),
                }
            }
            Ok(ex) => match case.id.primitive.as_str() {
                "reduce" => match sharded_reduce(cluster, ex.input.clone()) {
                    Ok(ranks) => check_reduce(ex, &ranks),
                    Err(e) => error_verdict(&e),
                },
                _ => match sharded_scan(cluster, ex.input.clone()) {
                    Ok(ranks) => check_scan(ex, &ranks),
                    Err(e) => error_verdict(&e),
                },
            },
        };
        if let Verdict::Fail(m) = &verdict {
            if shown < max_shown {
                shown += 1;
                progress.println(&format!(
                    "FAIL {}\n     rerun: {}",
                    failure_line(&case.id, m),
                    sharded_repro(&case.id, k, plan_seed)
                ));
            }
        }
        progress.step(&case.id.marker());
        results.push(CaseResult::new(case.id.clone(), verdict, started.elapsed().as_millis() as u64));
    }
    progress.finish();
    results
}

#[cfg(test)]
#[path = "sweep_cases_tests.rs"]
mod tests;
