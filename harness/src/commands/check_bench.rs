//! `check --bench` (the composition of the check runner and the bench's
//! timing, so it lives with the command): the user's launch sequence timed beside our fastest
//! variant of the primitive on the same device buffers' sizes, with the
//! bench's cold protocol (an event pair around each call, waiting between
//! calls; warm-ups first; the median of the timed calls), and beside CUB
//! when `harness bench`'s `cub_bench` baseline can be built or is given
//! and times the contract's problem (`super::check_cub`). Each size times the
//! catalogue's first case of that size (a primitive whose cases have their
//! own sizes, like softmax's row blocks, times its largest case below it).

use super::check_cub as cub;
use crate::bench::timing::{summarize, EventTimer};
use crate::check::launch::{self, Loaded};
use crate::check::manifest::Manifest;
use crate::check::timed::{Row, Timed};
use crate::registry::Primitive;
use crate::sweep::raw::{self, Array};
use crate::sweep::SweepPlan;
use kernels::{
    CompactPlan, CompactVariant, Gpu, GpuResult, ReducePlan, ReduceVariant, ScanKind, ScanPlan, ScanVariant,
    SelectorKind,
};

/// Sizes timed.
pub const SIZES: [usize; 3] = [1 << 20, 1 << 24, 1 << 28];
/// Warm-up calls before the timed ones.
pub const WARMUPS: usize = 3;
/// Timed calls per size and implementation.
pub const CALLS: usize = 20;

fn median(timer: &EventTimer, gpu: &Gpu, mut call: impl FnMut() -> GpuResult<()>) -> anyhow::Result<f64> {
    for _ in 0..WARMUPS {
        call()?;
    }
    gpu.synchronize()?;
    let mut samples = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        samples.push(timer.time_one(gpu, &mut call)?);
    }
    Ok(summarize(&samples).map(|(m, _, _)| m).unwrap_or(f64::NAN))
}

/// What "ours" is for `manifest`'s primitive and contract: its default entry
/// point (the variant its dispatcher picks at each size), where the timed plan
/// is wired here; none for a typed contract (we ship no kernel of its types).
fn ours_name(manifest: &Manifest) -> String {
    let rows = crate::cases::typed::rows::of(manifest.contract).is_some();
    if rows || crate::cases::typed::of(manifest.contract).is_some() {
        return format!("none for the typed contract {}", manifest.contract.name);
    }
    match manifest.primitive {
        Primitive::Scan | Primitive::Reduce | Primitive::Compact => {
            format!("{} default entry point", manifest.primitive)
        }
        other => format!("none for {other}"),
    }
}

/// Our default entry point on `input`, with the variant it picked at this
/// size (None for a primitive or contract without a timed plan here).
fn time_ours(
    timer: &EventTimer,
    gpu: &Gpu,
    manifest: &Manifest,
    input: &[i32],
) -> anyhow::Result<Option<(f64, &'static str)>> {
    let n = input.len();
    let device = gpu.upload(input)?;
    Ok(match manifest.primitive {
        Primitive::Scan => {
            let kind =
                if manifest.contract.name.starts_with("inclusive") { ScanKind::Inclusive } else { ScanKind::Exclusive };
            let variant = ScanVariant::best_for(n, kind);
            let mut plan = ScanPlan::<i32>::new(gpu, variant, kind, n)?;
            let mut out = gpu.alloc_zeroed::<i64>(n)?;
            Some((median(timer, gpu, || plan.enqueue(&device, &mut out))?, variant.name()))
        }
        Primitive::Reduce => {
            let variant = ReduceVariant::best_for(n);
            let mut plan = ReducePlan::<i32>::new(gpu, variant, n)?;
            let mut out = gpu.alloc_zeroed::<i64>(1)?;
            Some((median(timer, gpu, || plan.enqueue(&device, &mut out))?, variant.name()))
        }
        // The flagged contract takes its flags from a second input: only the
        // predicate form is timed.
        Primitive::Compact if manifest.contract.name.starts_with("positive") => {
            let variant = CompactVariant::best_for(n);
            let mut plan = CompactPlan::new(gpu, variant, SelectorKind::Positive, n)?;
            let mut out = gpu.alloc_zeroed::<i32>(n)?;
            let mut count = gpu.alloc_zeroed::<u32>(1)?;
            Some((median(timer, gpu, || plan.enqueue(&device, None, &mut out, &mut count))?, variant.name()))
        }
        _ => None,
    })
}

/// The catalogue's case timed at `n`: its first case of that size, else
/// its largest below (None when it has none).
fn case_at(manifest: &Manifest, n: usize) -> Option<raw::RawSpec> {
    let plan = SweepPlan::of_primitive(manifest.primitive, &[n], 0x5eed);
    let specs = crate::check::catalogue::cases(&plan, manifest, false);
    let largest_below = specs.iter().filter(|s| s.id.n <= n).map(|s| s.id.n).max()?;
    let chosen = if specs.iter().any(|s| s.id.n == n) { n } else { largest_below };
    specs.into_iter().find(|s| s.id.n == chosen)
}

fn time_all(gpu: &Gpu, manifest: &Manifest, loaded: &Loaded, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let timer = EventTimer::new(gpu)?;
    for n in SIZES
        .into_iter()
        .filter(|&n| n.saturating_mul(crate::sweep::DEVICE_BYTES_PER_ELEMENT) <= gpu.info().total_memory)
    {
        let spec = case_at(manifest, n).ok_or_else(|| anyhow::anyhow!("no case at n = {n} or below"))?;
        let n = spec.id.n;
        if rows.iter().any(|r| r.n == n) {
            continue;
        }
        let case = (spec.make)().map_err(anyhow::Error::msg)?;
        let mut buffers = launch::prepare(gpu, manifest, &case, n)?;
        let mut scratch = launch::Scratch::default();
        scratch.prepare(gpu, manifest, n, false)?;
        let geometry = launch::geometry(manifest, n, &case.params).map_err(anyhow::Error::msg)?;
        let user_us =
            median(&timer, gpu, || launch::enqueue(gpu, manifest, loaded, &mut buffers, &mut scratch, &geometry))?;
        drop(buffers);
        let typed = crate::cases::typed::of(manifest.contract).is_some()
            || crate::cases::typed::rows::of(manifest.contract).is_some();
        let ours = match case.inputs.first() {
            Some(Array::Int32(input)) if !typed => time_ours(&timer, gpu, manifest, input)?,
            _ => None,
        };
        let ours_us = ours.map(|(us, _)| us);
        crate::check::say(&format!(
            "check --bench: n = {n} ({}): yours {user_us:.1} us, ours ({}) {}",
            spec.id.size,
            ours.map(|(_, picked)| picked.to_string()).unwrap_or_else(|| ours_name(manifest)),
            ours_us.map(|u| format!("{u:.1} us")).unwrap_or_else(|| "not timed".into())
        ));
        rows.push(Row { n, user_us, ours_us, cub_us: None });
    }
    Ok(())
}

/// Times the user's sequence and ours at [`SIZES`] (those that fit the
/// GPU), then CUB at the sizes timed.
pub fn run(gpu: &Gpu, manifest: &Manifest, loaded: &Loaded) -> Timed {
    // The nvcc build (when one is needed) runs while the user's kernel is timed.
    let started = cub::start(gpu.info().compute_capability);
    let mut rows = Vec::new();
    let error = time_all(gpu, manifest, loaded, &mut rows).err().map(|e| format!("{e:#}"));
    if let Some(e) = &error {
        eprintln!("check --bench: timing failed: {e}");
    }
    let powers: Vec<usize> = rows.iter().map(|r| r.n).filter(|n| n.is_power_of_two()).collect();
    let cub = cub::time(started, manifest.primitive, manifest.contract, &powers);
    for row in &mut rows {
        row.cub_us = cub.at(row.n);
    }
    crate::check::say(&format!("check --bench: CUB {}", cub.status));
    let ours = ours_name(manifest);
    let json = serde_json::json!({
        "protocol": format!("cold: {WARMUPS} warm-ups, median of {CALLS} calls, one event pair per call"),
        "ours": ours,
        "cub": cub.json,
        "rows": rows,
        "error": error,
    });
    Timed { rows, ours, cub: cub.status, error, json }
}
