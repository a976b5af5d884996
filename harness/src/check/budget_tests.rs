//! The memory a check's sizes need, from the manifest's own buffers, and
//! which sizes fit: no GPU needed (the cases are planned, never made).

use super::*;
use crate::check::extra_sizes::{default_sizes, PAST_2_28, PAST_2_31, PAST_2_32};
use crate::check::manifest::load;
use crate::check::tests::folder;
use crate::sweep::SweepPlan;

/// An 80 GB H100 as the driver reports it, and a 128 GiB host.
const H100: Machine = Machine { device: 85_520_809_984, host: Some(128 << 30) };

/// A PTX module with one entry of four 64-bit parameters.
const PTX: &str = ".version 8.0\n.target sm_80\n.address_size 64\n\
    .visible .entry k4(\n\t.param .u64 a,\n\t.param .u64 b,\n\t.param .u64 c,\n\t.param .u64 d\n)\n{ ret; }\n";

/// A manifest of `primitive` `contract` whose one launch passes `args` (n last), with `scratch` (TOML) before it.
fn manifest(primitive: &str, contract: &str, args: &[&str], scratch: &str) -> Manifest {
    let dir = folder();
    std::fs::write(dir.join("k4.ptx"), PTX).expect("ptx written");
    let mut all: Vec<String> = args.iter().map(|a| format!("\"{a}\"")).collect();
    all.resize(3, "\"n\"".into());
    let text = format!(
        "primitive = \"{primitive}\"\ncontract = \"{contract}\"\n[module]\nptx = \"k4.ptx\"\n{scratch}\n[[launch]]\n\
         kernel = \"k4\"\nargs = [{}, \"n\"]\ngrid = \"ceil_div(n, 1024)\"\nblock = \"256\"\n",
        all.join(", ")
    );
    std::fs::write(dir.join("check.toml"), text).expect("manifest written");
    load(&dir.join("check.toml"), &[1, 1025], None).unwrap_or_else(|e| panic!("{primitive} {contract}: {e}"))
}

/// The cases a check of `m` plans at `n` (every data family, as `--deep`).
fn cases_at(m: &Manifest) -> impl Fn(usize) -> Vec<CaseId> + '_ {
    move |n| {
        let plan = SweepPlan::of_primitive(m.primitive, &[n], 7);
        crate::check::catalogue::cases(&plan, m, true).into_iter().map(|s| s.id).collect()
    }
}

fn reduce() -> Manifest {
    manifest("reduce", "sum.i32", &["in", "out"], "")
}

#[test]
fn an_int32_to_int64_reduce_past_2_32_fits_an_80_gb_card_by_its_own_buffers() {
    let m = reduce();
    let fitted = fit(&m, &[33, PAST_2_32], cases_at(&m), H100).expect("fits");
    assert_eq!((fitted.sizes.as_slice(), fitted.left_out.len()), (&[33, PAST_2_32][..], 0), "{fitted:?}");
    // 4 bytes per element of input and one int64 out, not the sweep's 24 bytes per element of any primitive.
    let line = &fitted.notes[0];
    assert!(line.starts_with("n = 4294968296: its largest case (n = 4294968296) needs about 17.2 GB of device memory (inputs 17.2 GB, outputs with guards 0.0 GB, scratch 0.0 GB: 4.0 bytes per element)"), "{line}");
    // Made and judged a piece at a time: under a GB of host memory.
    assert!(line.ends_with("and about 0.8 GB of host memory"), "{line}");
}

#[test]
fn a_big_scratch_leaves_out_the_sizes_it_does_not_fit_with_both_numbers() {
    let m = manifest(
        "reduce",
        "sum.i32",
        &["in", "out", "t"],
        "[[scratch]]\nname = \"t\"\ndtype = \"int64\"\nlen = \"n * 4\"",
    );
    let fitted = fit(&m, &[33, PAST_2_28, PAST_2_32], cases_at(&m), H100).expect("fits");
    assert_eq!(fitted.sizes, vec![33, PAST_2_28]);
    assert_eq!(fitted.left_out.len(), 1);
    let line = &fitted.left_out[0];
    let start = "n = 4294968296 left out: its largest case (n = 4294968296) needs about 154.6 GB of device memory \
                 (inputs 17.2 GB, outputs with guards 0.0 GB, scratch 137.4 GB: 36.0 bytes per element)";
    assert!(line.starts_with(start), "{line}");
    assert!(line.ends_with("; 77.0 GB of device memory may be used (90 % of the GPU's 85.5 GB)"), "{line}");
}

#[test]
fn wide_outputs_made_whole_are_left_out_for_host_memory_and_device_memory_apart() {
    // A float64 scan of a typed contract: made whole, 16 bytes per element on the device
    // (8 in, 8 out) and 48 on the host (input twice, output three times, the judge's float64 view).
    let m = manifest("scan", "inclusive.sum.f64.f64", &["in", "out"], "");
    let fitted = fit(&m, &[1 << 20, PAST_2_31, PAST_2_32], cases_at(&m), H100).expect("fits");
    assert_eq!(fitted.sizes, vec![1 << 20, PAST_2_31], "{:?}", fitted.left_out);
    let line = &fitted.left_out[0];
    assert!(
        line.contains("needs about 68.7 GB of device memory") && line.contains("about 206.2 GB of host memory"),
        "{line}"
    );
    assert!(line.ends_with("; 116.8 GB of host memory may be used (85 % of the host's 137.4 GB)"), "{line}");
    // On a card of 40 GB the device is what leaves it out.
    let small = Machine { device: 40_000_000_000, host: Some(1 << 40) };
    let fitted = fit(&m, &[1 << 20, PAST_2_32], cases_at(&m), small).expect("fits");
    assert!(
        fitted.left_out[0].ends_with("of device memory may be used (90 % of the GPU's 40.0 GB)"),
        "{:?}",
        fitted.left_out
    );
}

#[test]
fn deep_leaves_out_only_the_sizes_that_do_not_fit() {
    let sizes = default_sizes(7, true);
    // A reduce fits everywhere: --deep reaches past 2^31 and past 2^32.
    let m = reduce();
    let fitted = fit(&m, &sizes, cases_at(&m), H100).expect("fits");
    assert_eq!(fitted.sizes, sizes, "{:?}", fitted.left_out);
    assert!(fitted.sizes.contains(&PAST_2_31) && fitted.sizes.contains(&PAST_2_32));
    // Scratch of 32 bytes per element: 2^28 + 1 fits, the two deep sizes do not.
    let m = manifest(
        "reduce",
        "sum.i32",
        &["in", "out", "t"],
        "[[scratch]]\nname = \"t\"\ndtype = \"int64\"\nlen = \"n * 4\"",
    );
    let fitted = fit(&m, &sizes, cases_at(&m), H100).expect("fits");
    let left: Vec<usize> = sizes.iter().copied().filter(|n| !fitted.sizes.contains(n)).collect();
    assert_eq!(left, vec![PAST_2_31, PAST_2_32]);
    assert!(
        fitted.left_out[0].starts_with("n = 2147484648 left out:")
            && fitted.left_out[1].starts_with("n = 4294968296 left out:")
    );
    assert!(fitted.sizes.contains(&PAST_2_28));
}

#[test]
fn a_segmented_sum_past_2_32_counts_its_offsets_as_the_case_makes_them() {
    // Bounded by n + 1 offsets and outputs it would need 20 bytes per element (86 GB); the
    // case made in pieces holds one offset and one sum per 1024 items.
    let m = manifest("segmented_reduce", "sum.i32", &["in", "offsets", "out"], "");
    let fitted = fit(&m, &[PAST_2_32], cases_at(&m), H100).expect("fits");
    assert_eq!(fitted.sizes, vec![PAST_2_32], "{:?}", fitted.left_out);
    let ids: Vec<CaseId> = cases_at(&m)(PAST_2_32).into_iter().filter(|id| id.n == PAST_2_32).collect();
    assert!(!ids.is_empty());
    let bound = device_bytes(m.contract, &CaseBuffers::bound(m.contract, PAST_2_32), &[]);
    assert!(bound.total() > 85_000_000_000, "{bound:?}");
    for id in &ids {
        let exact = CaseBuffers::of(m.contract, id, crate::check::streamed::STREAM_FROM);
        assert_eq!(exact.inputs[0], PAST_2_32);
        assert!(exact.inputs[1] <= PAST_2_32 / 1024 + 2 && exact.outputs[0] < exact.inputs[1], "{exact:?}");
    }
}

#[test]
fn scratch_held_from_a_smaller_size_counts_at_the_larger() {
    // 2^32 / n int64 elements: 34.4 GB at n = 1, a few bytes at 2^30; kept from case to case.
    let m = manifest(
        "scan",
        "exclusive.i32",
        &["in", "out", "t"],
        "[[scratch]]\nname = \"t\"\ndtype = \"int64\"\nlen = \"4294967296 / n\"",
    );
    let card = Machine { device: 50_000_000_000, host: None };
    let fitted = fit(&m, &[1 << 30, 1], cases_at(&m), card).expect("fits");
    assert_eq!(fitted.sizes, vec![1], "the scratch of n = 1 is still held at 2^30");
    assert!(fitted.left_out[0].contains("scratch 34.4 GB"), "{:?}", fitted.left_out);
    // Without n = 1 before it, 2^30 fits.
    assert_eq!(fit(&m, &[1 << 30], cases_at(&m), card).expect("fits").sizes, vec![1 << 30]);
}

#[test]
fn no_size_that_fits_leaves_none_and_every_allocation_is_rounded_up() {
    let m = reduce();
    let tiny = Machine { device: 1 << 20, host: None };
    let fitted = fit(&m, &[1, 33], cases_at(&m), tiny).expect("fits");
    assert!(fitted.sizes.is_empty() && fitted.left_out.len() == 2, "{fitted:?}");
    // One input and one output buffer of a granule each at n = 1.
    let one = device_bytes(m.contract, &CaseBuffers::bound(m.contract, 1), &[]);
    assert_eq!((one.inputs, one.outputs, one.total()), (GRANULE, GRANULE, 2 * GRANULE));
}
