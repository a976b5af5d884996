//! Manifest validation (one test per error, asserting its message), the
//! examples' manifests, and a check on a machine without a GPU. No GPU needed.

use super::error::ManifestError;
use super::manifest::{load, Manifest};
use super::*;
use crate::sweep::sizes::BOUNDARY_SIZES;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A PTX module with one entry of three parameters and one of two.
const PTX: &str = ".version 8.0\n.target sm_80\n.address_size 64\n\
    .visible .entry scan3(\n\t.param .u64 a,\n\t.param .u64 b,\n\t.param .u64 c\n)\n{ ret; }\n\
    .visible .entry pass2(\n\t.param .u64 a,\n\t.param .u64 b\n)\n{ ret; }\n";

const GOOD: &str = "primitive = \"scan\"\ncontract = \"exclusive.i32\"\n[module]\nptx = \"k.ptx\"\n\
    [[launch]]\nkernel = \"scan3\"\nargs = [\"in\", \"out\", \"n\"]\ngrid = \"ceil_div(n, 1024)\"\nblock = \"256\"\n";

/// A fresh temporary folder holding `k.ptx` ([`PTX`]).
pub(super) fn folder() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "primlab-check-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp folder");
    std::fs::write(dir.join("k.ptx"), PTX).expect("ptx written");
    dir
}

fn manifest(text: &str) -> Result<Manifest, ManifestError> {
    let dir = folder();
    std::fs::write(dir.join("check.toml"), text).expect("manifest written");
    load(&dir.join("check.toml"), &BOUNDARY_SIZES, None)
}

fn message(text: &str) -> String {
    manifest(text).map(|_| "valid".to_string()).unwrap_or_else(|e| e.to_string())
}

#[test]
fn a_good_manifest_resolves_its_module_beside_it() {
    let m = manifest(GOOD).expect("valid");
    assert_eq!(
        (m.primitive, m.contract.name, m.name.as_str()),
        (crate::registry::Primitive::Scan, "exclusive.i32", "user")
    );
    assert!(m.module.path.ends_with("k.ptx"));
    assert_eq!(m.launches[0].args, vec![manifest::Arg::Input(0), manifest::Arg::Output(0), manifest::Arg::N]);
}

#[test]
fn a_framework_in_the_manifest_checks_the_contract_as_it_states_it() {
    let framework = |fw: &str| {
        GOOD.replace("contract = \"exclusive.i32\"\n", &format!("contract = \"exclusive.i32\"\nframework = \"{fw}\"\n"))
    };
    assert_eq!(
        manifest(&framework("torch")).expect("valid").contract.name,
        "exclusive.i32",
        "no named rule of torch over it: the contract itself"
    );
    assert!(message(&framework("jax")).contains("unknown framework 'jax': choose from torch, numpy"));
}

#[test]
fn an_unknown_primitive_is_named_with_the_registry_and_the_row_kinds() {
    let e = message(&GOOD.replace("\"scan\"", "\"sort\""));
    let names = format!("{}, layernorm, rmsnorm, cross_entropy", crate::registry::Primitive::names());
    assert_eq!(e, format!("unknown primitive 'sort': choose from {names}"));
}

#[test]
fn an_unknown_contract_lists_the_primitives_contracts() {
    let e = message(&GOOD.replace("exclusive.i32", "exclusive.f32"));
    assert_eq!(
        e,
        "contract: unknown contract 'exclusive.f32' for primitive scan: choose from exclusive.i32, inclusive.i32; \
         or a typed contract such as inclusive.sum.f32.f32 or exclusive.max.i32.i32 (op, dtype_in, dtype_out, ...)"
    );
}

#[test]
fn an_entry_point_missing_from_the_module_lists_its_entries() {
    let e = message(&GOOD.replace("kernel = \"scan3\"", "kernel = \"scan_tiles\""));
    assert!(e.starts_with("launch 1: entry point 'scan_tiles' is not in "), "{e}");
    assert!(e.ends_with("k.ptx (its entry points: scan3, pass2)"), "{e}");
}

/// Launch errors, each with its whole message: (what is wrong, the edit of
/// [`GOOD`] that makes it so, the message).
#[test]
fn launch_errors_name_the_launch_and_the_rule() {
    let cases = [
        (
            "an expression that does not parse says where",
            ("ceil_div(n, 1024)", "ceil_div(n 1024)"),
            "launch 1 (scan3) grid = \"ceil_div(n 1024)\": does not parse at column 12: expected ',', found '1'",
        ),
        (
            "a zero grid names the size",
            ("ceil_div(n, 1024)", "n / 1024"),
            "launch 1 (scan3) grid = \"n / 1024\" is 0 at n = 1: a grid must have 1 to 2^31-1 blocks",
        ),
        (
            "a block out of range names the size",
            ("block = \"256\"", "block = \"n - 31\""),
            "launch 1 (scan3) block = \"n - 31\" is -30 at n = 1: a block must have 1 to 1024 threads",
        ),
        (
            "a contract buffer no launch passes is named",
            ("[\"in\", \"out\", \"n\"]", "[\"in\", \"n\", \"n\"]"),
            "no launch passes the contract's buffer 'out' (the scan exclusive.i32 contract has in, out); add it to a launch's args",
        ),
        (
            "an unknown argument lists what may be named",
            ("\"out\", \"n\"", "\"output\", \"n\""),
            "launch 1 (scan3): argument 'output' is not a buffer or parameter of the contract, a scratch buffer or n (known: in, out, n, n32)",
        ),
        (
            "a wrong argument count gives both counts",
            ("[\"in\", \"out\", \"n\"]", "[\"in\", \"out\"]"),
            "launch 1 (scan3): 2 arguments are listed but the entry point takes 3",
        ),
    ];
    for (what, (from, to), expected) in cases {
        assert!(GOOD.contains(from), "{what}: the edit does not apply");
        assert_eq!(message(&GOOD.replace(from, to)), expected, "{what}");
    }
}

#[test]
fn a_module_must_be_exactly_one_file() {
    let e = message(&GOOD.replace("ptx = \"k.ptx\"", "ptx = \"k.ptx\"\ncubin = \"k.cubin\""));
    assert_eq!(e, "[module]: name exactly one of cuda = \"file.cu\", ptx = \"file.ptx\" or cubin = \"file.cubin\" (found 2 files)");
    let e = message(&GOOD.replace("k.ptx", "missing.ptx"));
    assert!(e.contains("missing.ptx: cannot be read: "), "{e}");
}

#[test]
fn toml_errors_and_unknown_fields_are_reported_with_the_file() {
    let e = message(&GOOD.replace("block = \"256\"", "blocks = \"256\""));
    assert!(e.contains("check.toml: ") && e.contains("blocks"), "{e}");
}

#[test]
fn scratch_buffers_are_checked() {
    let with = |scratch: &str| GOOD.replace("[[launch]]", &format!("{scratch}\n[[launch]]"));
    let e = message(&with("[[scratch]]\nname = \"out\"\ndtype = \"int64\"\nlen = \"n\""));
    assert_eq!(e, "scratch 1: the name 'out' is taken (by the contract, n, n32 or another scratch buffer)");
    let e = message(&with("[[scratch]]\nname = \"t\"\ndtype = \"int128\"\nlen = \"n\""));
    assert!(e.starts_with("scratch 1 (t): dtype 'int128' is not one of int32, int64"), "{e}");
}

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/check")
}

/// Opt-out of the tests that compile CUDA with NVRTC on a machine without it:
/// `PRIMLAB_ALLOW_NO_NVRTC=1` (they then say they were skipped).
pub(super) const ALLOW_NO_NVRTC: &str = "PRIMLAB_ALLOW_NO_NVRTC";

/// Whether NVRTC is here for `test`: true when it loads; false (said so)
/// when it does not and [`ALLOW_NO_NVRTC`] is `1`; otherwise the test fails,
/// since without NVRTC it cannot check what it is about.
pub(super) fn nvrtc_for(test: &str) -> bool {
    match kernels::compile::ensure_nvrtc() {
        Ok(()) => true,
        Err(e) if std::env::var(ALLOW_NO_NVRTC).as_deref() == Ok("1") => {
            eprintln!("{test}: skipped ({ALLOW_NO_NVRTC}=1 and {e})");
            false
        }
        Err(e) => panic!(
            "{test} compiles CUDA and {e}; `make` installs NVRTC under .nvrtc/ (LD_LIBRARY_PATH=.nvrtc/nvidia/cu13/lib), \
             or set {ALLOW_NO_NVRTC}=1 to skip the tests that need it"
        ),
    }
}

/// The examples' manifests parse and validate; the CUDA ones compile with
/// NVRTC (needs libnvrtc, as every compile test: see [`nvrtc_for`]).
#[test]
fn the_examples_manifests_are_valid() {
    if !nvrtc_for("the_examples_manifests_are_valid") {
        return;
    }
    for (example, primitive, launches) in [
        ("scan_cuda", "scan", 3),
        ("scan_cuda_bug", "scan", 3),
        ("compact_cuda", "compact", 3),
        ("reduce_ptx", "reduce", 2),
        ("histc_rule_cuda", "histogram", 2),
        ("softmax_nan_rule_cuda", "softmax", 1),
    ] {
        let path = examples().join(example).join("check.toml");
        let m = load(&path, &crate::sweep::sizes::sweep_sizes(&[], 1, false, true), None)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!((m.primitive.name(), m.launches.len()), (primitive, launches), "{example}");
    }
}

/// A check on a machine without a GPU (the GPU's absence is given, so the
/// test runs its subject on any machine): the manifest is validated first,
/// then the check cannot run (exit status 2); a bad manifest is still refused.
#[test]
fn check_without_a_gpu_cannot_run_after_validating() {
    let no_gpu = |_: &CheckOptions| Err("no device (given by the test)".to_string());
    let path = examples().join("reduce_ptx/check.toml");
    let args = CheckOptions { manifest: path, sizes: vec![33], max_failures_shown: 20, ..Default::default() };
    let e = run_on(&args, None, no_gpu).and_then(exit_of).expect_err("a check that ran nothing passed");
    let line = e.downcast_ref::<crate::exit::CannotRun>().expect("'could not run' (exit status 2), not a failure");
    assert!(line.0.starts_with("check: cannot run: no GPU (no device (given by the test)"), "{line}");
    // A manifest error is still reported without a GPU.
    let dir = folder();
    std::fs::write(dir.join("check.toml"), GOOD.replace("\"scan\"", "\"sort\"")).expect("written");
    let bad = dir.join("check.toml");
    let args = CheckOptions { manifest: bad, max_failures_shown: 20, ..Default::default() };
    assert!(run_on(&args, None, no_gpu).unwrap_err().to_string().starts_with("unknown primitive 'sort'"));
}

/// The failure line the planted-bug README promises names the case seed and
/// the model's value that the catalogue gives at that size and index.
#[test]
fn the_planted_bug_readme_states_the_catalogues_case() {
    let readme = std::fs::read_to_string(examples().join("scan_cuda_bug/README.md")).expect("readme");
    let line = readme.lines().map(str::trim).find(|l| l.starts_with("scan/three_pass_bug")).expect("a failure line");
    let plan = crate::sweep::SweepPlan::of_primitive(crate::registry::Primitive::Scan, &[262_145], 0x5eed);
    let contract = crate::sweep::raw::contract(crate::registry::Primitive::Scan, "exclusive.i32").expect("contract");
    let spec = crate::sweep::raw::catalogue(&plan, crate::registry::Primitive::Scan, contract, "three_pass_bug")
        .into_iter()
        .next()
        .expect("a case");
    let case = (spec.make)().expect("generated");
    let [crate::sweep::raw::Array::Int64(expected)] = &case.expected[..] else { unreachable!("int64") };
    let m = crate::sweep::case::Mismatch {
        index: Some(262_144),
        expected: expected[262_144].to_string(),
        got: "0".into(),
        what: "prefix".into(),
    };
    assert_eq!(failure_line(&spec.id, &m), line);
}

#[test]
fn module_defines_are_checked() {
    let e = message(&GOOD.replace("ptx = \"k.ptx\"", "ptx = \"k.ptx\"\ndefines = [\"BUG\"]"));
    assert_eq!(e, "module defines apply to a CUDA source only (cuda = ...)");
    for bad in ["PRIMLAB_MUTANT=3", "1X", "A-B=2", ""] {
        let e = message(&GOOD.replace("ptx = \"k.ptx\"", &format!("cuda = \"k.cu\"\ndefines = [\"{bad}\"]")));
        assert_eq!(
            e,
            format!("module define '{bad}': want NAME or NAME=VALUE, NAME a C identifier not starting with PRIMLAB_")
        );
    }
}

/// The planted-bug example is the correct example's source plus one define,
/// and the define changes the code (needs libnvrtc: see [`nvrtc_for`]).
#[test]
fn the_planted_bug_is_the_correct_source_with_its_define() {
    if !nvrtc_for("the_planted_bug_is_the_correct_source_with_its_define") {
        return;
    }
    let sizes = [262_145];
    let load_example = |example: &str| {
        let path = examples().join(example).join("check.toml");
        load(&path, &sizes, None).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    let (good, bug) = (load_example("scan_cuda"), load_example("scan_cuda_bug"));
    let canonical = |m: &Manifest| std::fs::canonicalize(&m.module.path).expect("module exists");
    assert_eq!(canonical(&good), canonical(&bug));
    assert_eq!((good.module.defines.len(), bug.module.defines.as_slice()), (0, &["PLANTED_BUG".to_string()][..]));
    let ptx = |m: &Manifest| match &m.module.image {
        super::module::Image::Ptx(text) => text.clone(),
        other => panic!("a CUDA source compiles to PTX, got {other:?}"),
    };
    assert_ne!(ptx(&good), ptx(&bug), "PLANTED_BUG changed nothing");
}

/// A wrong answer: the mismatch summary counts and lists the wrong
/// elements, the rerun line names the failure line's seed, and the JUnit
/// report carries both.
#[test]
fn a_failure_has_a_summary_a_rerun_line_with_its_seed_and_a_junit_case() {
    use crate::registry::Primitive;
    use crate::sweep::raw::Array;
    let m = manifest(GOOD).expect("valid");
    let plan = crate::sweep::SweepPlan::of_primitive(Primitive::Scan, &[33], 0x5eed);
    let spec =
        crate::sweep::raw::catalogue(&plan, Primitive::Scan, m.contract, "user").into_iter().next().expect("a case");
    let case = (spec.make)().expect("generated");
    let mut got = case.expected.clone();
    let Array::Int64(out) = &mut got[0] else { unreachable!("int64 prefix sums") };
    out[7] += 1;
    out[20] -= 3;
    let verdict = m.contract.compare(&case, &got);
    let Verdict::Fail(fail) = &verdict else { panic!("two wrong elements passed") };
    assert_eq!(fail.index, Some(7));
    let summary = crate::sweep::raw::mismatch::lines(&crate::sweep::raw::mismatch::summarize(m.contract, &case, &got));
    assert_eq!(summary[0], "mismatched elements of out: 2 / 33 (6.1%)", "{summary:?}");
    assert!(summary[1].contains("[7] expected") && summary[1].contains("[20] expected"), "{summary:?}");
    assert!(summary.contains(&"greatest absolute difference: 3 at index 20".to_string()), "{summary:?}");
    let seed = format!("seed={:#x}", spec.id.seed);
    assert!(failure_line(&spec.id, fail).contains(&seed));
    let rerun = rerun_line(&m.path, 33, 0x5eed, spec.id.seed);
    assert!(rerun.contains(&seed) && rerun.contains("--sizes 33 --seed 0x5eed"), "{rerun}");
    let results = [CaseResult::new(spec.id.clone(), Verdict::Pass, 1), CaseResult::new(spec.id.clone(), verdict, 2)];
    let xml = crate::junit::render("check", &junit_cases(&m, 0x5eed, &results));
    assert!(xml.contains("tests=\"2\" failures=\"1\""), "{xml}");
    assert!(xml.contains("classname=\"check.scan\"") && xml.contains(&seed) && xml.contains("--seed 0x5eed"), "{xml}");
}

/// The line a check prints before it starts: how many cases, from which
/// size to which, when it stops, and an estimate.
#[test]
fn the_plan_line_says_what_a_check_will_visit() {
    let dir = folder();
    std::fs::write(dir.join("check.toml"), GOOD).expect("written");
    let manifest = load(&dir.join("check.toml"), &[1, 33, 4099], None).expect("valid");
    let plan = crate::sweep::SweepPlan::of_primitive(crate::registry::Primitive::Scan, &[1, 33, 4099], 1);
    let cases = super::catalogue::cases(&plan, &manifest, false);
    let line = plan_line(&cases, Some(1));
    assert!(
        line.starts_with(&format!("{} cases at 3 sizes from 1 to 4099 elements, smallest first", cases.len())),
        "{line}"
    );
    assert!(line.contains("stops at the first failing case") && line.contains("about 1 s if it passes"), "{line}");
    assert!(plan_line(&cases, None).contains("runs every case"));
}

/// A softmax manifest whose launch geometry is `grid` and `block`.
fn softmax_manifest(grid: &str, block: &str) -> Result<Manifest, ManifestError> {
    let dir = folder();
    let text = format!(
        "primitive = \"softmax\"\ncontract = \"rows.f32\"\n[module]\nptx = \"k.ptx\"\n[[launch]]\nkernel = \"scan3\"\n\
         args = [\"in\", \"out\", \"n\"]\ngrid = \"{grid}\"\nblock = \"{block}\"\n"
    );
    std::fs::write(dir.join("check.toml"), text).expect("manifest written");
    load(&dir.join("check.toml"), &BOUNDARY_SIZES, None)
}

#[test]
fn a_launch_may_name_the_cases_parameters_and_is_checked_per_case() {
    use crate::sweep::raw::Value;
    let manifest = softmax_manifest("rows", "min(cols, 1024)").expect("rows and cols are names of a softmax case");
    let at = |rows, cols| super::launch::geometry(&manifest, 61_000, &[Value::Int32(rows), Value::Int32(cols)]);
    assert_eq!(at(61, 1000), Ok(vec![(61, 1000, 0)]));
    assert_eq!(at(3, 4096), Ok(vec![(3, 1024, 0)]));
    // A case whose rows make an empty grid fails by name, with its parameters.
    let e = at(0, 7).unwrap_err();
    assert_eq!(e, "launch 1 (scan3) grid = 0 at n = 61000 (rows=0, cols=7): a grid must have 1 to 2^31-1 blocks");
    // A name the contract does not have is refused when the manifest is read, with the names it has.
    let Err(ManifestError::Parse { at, .. }) = softmax_manifest("segments", "256") else { panic!("refused") };
    assert!(at.contains("unknown name 'segments' (use n, rows, cols, ceil_div, min or max)"), "{at}");
}
