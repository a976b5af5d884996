//! `cases export` then `cases verify` on outputs computed from the exported
//! inputs by the model passes, and one wrong element fails and is named,
//! for every contract of the registry (one test each, stamped from a
//! table in the registry's order that must list them all); a missing output is a failure. No GPU needed.

use super::export::ExportOptions;
use super::index::{CaseEntry, Index};
use super::model_answers::answer;
use super::*;
use crate::registry::Primitive;
use crate::sweep::case::{failure_line, Verdict};
use crate::sweep::raw::{self, Array, Dtype, Rule, Value};
use std::path::{Path, PathBuf};

fn export(primitive: Primitive, contract: Option<&str>, sizes: &[usize], tag: &str) -> (PathBuf, Index) {
    let dir = std::env::temp_dir().join(format!("primlab-cases-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let args = ExportOptions {
        primitive,
        contract: contract.map(str::to_string),
        request: None,
        framework: None,
        sizes: sizes.to_vec(),
        seed: Some(0x5eed),
        deep: false,
        dir: dir.clone(),
    };
    assert!(export::run(&args).expect("exports"));
    let index: Index =
        serde_json::from_str(&std::fs::read_to_string(dir.join("index.json")).expect("index")).expect("json");
    (dir, index)
}

fn contract_of(case: &CaseEntry) -> &'static raw::Contract {
    let primitive = Primitive::from_name(&case.primitive).expect("a registry primitive");
    raw::contract(primitive, &case.contract).expect("a contract")
}

/// Writes every case's outputs as the model computes them from the exported inputs.
fn answer_with_the_model(dir: &Path, index: &Index) {
    for case in &index.cases {
        let contract = contract_of(case);
        let inputs: Vec<Array> = contract
            .inputs
            .iter()
            .zip(&case.inputs)
            .map(|(b, f)| npy::read(&dir.join(&f.file), b.dtype).expect("input"))
            .collect();
        let params: Vec<Value> = contract
            .params
            .iter()
            .zip(&case.params)
            .map(|(p, e)| Value::from_json(p.dtype, &e.value).expect("a parameter"))
            .collect();
        for (array, file) in answer(&case.primitive, &case.contract, &inputs, &params).iter().zip(&case.outputs) {
            npy::write(&dir.join(&file.file), array).expect("output written");
        }
    }
}

/// `array` with element `i` made wrong for `rule`: integers one more, floats
/// one bit apart (exact) or far outside the tolerance.
fn corrupt(array: &mut Array, i: usize, rule: Rule) {
    match (array, rule) {
        (Array::Int32(v), _) => v[i] = v[i].wrapping_add(1),
        // A column outside every row (a neighbour may share the draw's interval within the slack).
        (Array::Int64(v), Rule::TopkSample) => v[i] = -1,
        (Array::Int64(v), _) => v[i] = v[i].wrapping_add(1),
        (Array::Float32(v), Rule::Exact) => v[i] = f32::from_bits(v[i].to_bits() ^ 1),
        (Array::Float32(v), Rule::SoftmaxRows) => v[i] += 0.5,
        (Array::Float32(v), Rule::FloatSumBound) => v[i] += 1e6,
        (Array::Bfloat16(v) | Array::Float16(v), Rule::Exact) => v[i] ^= 1,
        (other, _) => panic!("no corruption for {}", other.dtype().name()),
    }
}

/// Export, answer with the model, verify (passes); then one wrong element
/// of the largest first output fails, and its line names the case and index.
fn round_trip(primitive: Primitive, contract: &str) {
    let tag = format!("{primitive}-{contract}");
    let (dir, index) = export(primitive, Some(contract), &[1, 33, 257], &tag);
    assert!(!index.cases.is_empty(), "{tag}: no case");
    assert!(index.cases.iter().all(|c| c.contract == contract && c.variant == format!("user.{contract}")));
    answer_with_the_model(&dir, &index);
    assert!(verify::run(&dir, 5, &[], None, false).expect("verifies"), "{tag}: the model's own answers failed");

    let case = index.cases.iter().rev().max_by_key(|c| c.outputs[0].len).expect("a case");
    let c = contract_of(case);
    let path = dir.join(&case.outputs[0].file);
    let mut out = npy::read(&path, c.outputs[0].dtype).expect("read");
    let at = out.count() / 2;
    corrupt(&mut out, at, c.rule);
    npy::write(&path, &out).expect("written");
    let Verdict::Fail(m) = verify::verify_named(&dir, &case.case).expect("the catalogue") else {
        panic!("{tag}: a wrong element passed")
    };
    let line = failure_line(&verify::case_id(case), &m);
    let head = format!("{primitive}/user.{contract} n={} seed={} family={} ", case.size, case.seed, case.family);
    assert!(line.starts_with(&head), "{tag}: {line}");
    if out.count() > 1 {
        assert_eq!(m.index, Some(at), "{tag}: {line}");
        assert!(line.contains(&format!(" index={at} ")), "{tag}: {line}");
    }
    assert!(!verify::run(&dir, 5, &[], None, false).expect("verifies"), "{tag}: a wrong element passed the whole run");
    // The JSON report lists every case; the corrupted one fails with the same line and a rerun.
    let (report, _) = verify::verify_all(&dir, &[]).expect("verifies");
    assert_eq!((report.total, report.failed, report.cases.len()), (report.passed + 1, 1, report.total), "{tag}");
    let failed = report.cases.iter().find(|c| c.verdict == "fail").expect("one failure");
    assert_eq!((failed.case.as_str(), failed.failure.as_deref()), (case.case.as_str(), Some(line.as_str())), "{tag}");
    assert!(failed.rerun.starts_with("rerun: harness cases export"), "{tag}: {}", failed.rerun);
    let json = serde_json::to_value(&report).expect("serialises");
    assert!(json["cases"][0]["verdict"].as_str().is_some());
    let _ = std::fs::remove_dir_all(&dir);
}

/// One round-trip test per contract, and the table of them.
macro_rules! every_contract {
    ($($test:ident: $primitive:ident $contract:literal,)*) => {
        $(
            #[test]
            fn $test() {
                round_trip(Primitive::$primitive, $contract);
            }
        )*
        const STAMPED: &[(Primitive, &str)] = &[$((Primitive::$primitive, $contract)),*];
    };
}

every_contract! {
    reduce_sum: Reduce "sum.i32",
    scan_exclusive: Scan "exclusive.i32",
    scan_inclusive: Scan "inclusive.i32",
    arg_reduce_argmax: ArgReduce "argmax.f32",
    arg_reduce_argmin: ArgReduce "argmin.f32",
    softmax_rows: Softmax "rows.f32",
    compact_positive: Compact "positive.i32",
    compact_flagged: Compact "flagged.i32",
    segmented_sum: SegmentedReduce "sum.i32",
    segmented_max: SegmentedReduce "max.i32",
    histogram_i32: Histogram "even.i32",
    histogram_f32: Histogram "even.f32",
    float_reduce_sum: FloatReduce "sum.f32",
    exact_sum_sum: ExactSum "sum.f32",
    topk_largest_f32: Topk "largest.f32",
    topk_smallest_f32: Topk "smallest.f32",
    topk_largest_bf16: Topk "largest.bf16",
    topk_largest_f16: Topk "largest.f16",
    topk_sample_f32: Topk "sample.f32",
    topk_sample_with_probability_f32: Topk "sample_with_probability.f32",
}

#[test]
fn every_primitive_has_contracts_and_every_contract_is_stamped() {
    let mut all = Vec::new();
    for p in Primitive::ALL {
        assert!(!raw::contracts(p).is_empty(), "{p} has no contract");
        all.extend(raw::contracts(p).iter().map(|c| (p, c.name)));
    }
    assert_eq!(all, STAMPED);
}

#[test]
fn the_failure_line_of_an_exact_contract_is_the_sweeps() {
    let (dir, index) = export(Primitive::Scan, None, &[1, 33, 257], "scan");
    // Every int family at each size (five), then the two integer edge families
    // (`alternating_min_max`, `long_runs`), both contracts.
    assert_eq!(index.cases.len(), 3 * (5 + 2) * 2);
    let first = &index.cases[0];
    assert_eq!((first.contract.as_str(), first.n, first.tolerance.as_str()), ("exclusive.i32", 1, "exact"));
    assert_eq!(
        (first.outputs[0].file.as_str(), first.expected[0].file.as_str()),
        ("c00000.out.npy", "c00000.out.expected.npy")
    );
    answer_with_the_model(&dir, &index);
    let case = index.cases.iter().find(|c| c.n == 33 && c.contract == "inclusive.i32").expect("a case of 33");
    let path = dir.join(&case.outputs[0].file);
    let Array::Int64(mut out) = npy::read(&path, Dtype::Int64).expect("read") else { unreachable!("int64") };
    let right = out[17];
    out[17] += 1;
    npy::write(&path, &Array::Int64(out)).expect("written");
    let Verdict::Fail(m) = verify::verify_named(&dir, &case.case).expect("the catalogue") else {
        panic!("a wrong element passed")
    };
    assert_eq!(
        failure_line(&verify::case_id(case), &m),
        format!(
            "scan/user.inclusive.i32 n=33 seed={} family={} check=prefix index=17 expected={right} got={}",
            case.seed,
            case.family,
            right + 1
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn parameters_are_exported_and_a_compaction_writes_two_outputs() {
    let (dir, index) = export(Primitive::Histogram, Some("even.f32"), &[33], "params");
    let names: Vec<&str> = index.cases[0].params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["bins", "lower", "upper", "scale"]);
    assert_eq!(index.cases[0].params[1].value, serde_json::json!(-0.5));
    assert_eq!(index.cases[0].outputs[0].len, 100);
    let _ = std::fs::remove_dir_all(&dir);
    let (dir, index) = export(Primitive::Compact, Some("flagged.i32"), &[33], "two-outputs");
    let case = &index.cases[0];
    let roles: Vec<&str> = case.outputs.iter().map(|f| f.role.as_str()).collect();
    assert_eq!((roles, case.inputs[1].dtype.as_str()), (vec!["out", "count"], "uint8"));
    answer_with_the_model(&dir, &index);
    // A count one too many fails on the count.
    npy::write(&dir.join(&case.outputs[1].file), &Array::Int64(vec![case.outputs[0].len as i64 + 1])).expect("written");
    let Verdict::Fail(m) = verify::verify_named(&dir, &case.case).expect("the catalogue") else {
        panic!("a wrong count passed")
    };
    assert_eq!(m.what, "count");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn verify_of_named_cases_reads_only_theirs_and_refuses_unknown_names() {
    let (dir, index) = export(Primitive::Reduce, Some("sum.i32"), &[31], "reduce-only");
    answer_with_the_model(&dir, &index);
    let (kept, removed) = (&index.cases[1], &index.cases[3]);
    std::fs::remove_file(dir.join(&removed.outputs[0].file)).expect("removed");
    // The case without an output is not read when only another is named ...
    assert!(verify::run(&dir, 5, std::slice::from_ref(&kept.case), None, false).expect("verifies"));
    // ... and fails when it is named, alone or with others.
    assert!(!verify::run(&dir, 5, std::slice::from_ref(&removed.case), None, false).expect("verifies"));
    assert!(!verify::run(&dir, 5, &[kept.case.clone(), removed.case.clone()], None, false).expect("verifies"));
    let e = verify::run(&dir, 5, &["c99999".to_string()], None, false).unwrap_err().to_string();
    assert!(e.contains("holds no case 'c99999'"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_or_mistyped_output_is_a_failure() {
    let (dir, index) = export(Primitive::Reduce, Some("sum.i32"), &[31], "reduce");
    assert_eq!(index.cases.len(), 5 + 2, "the five int families, then the two integer edge families");
    answer_with_the_model(&dir, &index);
    assert!(verify::run(&dir, 5, &[], None, false).expect("verifies"));
    let case = &index.cases[2];
    std::fs::remove_file(dir.join(&case.outputs[0].file)).expect("removed");
    assert_eq!(
        verify::verify_named(&dir, &case.case).expect("the catalogue"),
        Verdict::fail(format!("{} written", case.outputs[0].file), "no file", "output file")
    );
    assert!(!verify::run(&dir, 5, &[], None, false).expect("verifies"), "a missing output passed");
    npy::write(&dir.join(&case.outputs[0].file), &Array::Int32(vec![0])).expect("written");
    let Verdict::Fail(m) = verify::verify_named(&dir, &case.case).expect("the catalogue") else {
        panic!("an int32 output passed")
    };
    assert!(m.got.contains("dtype <i4 where <i8 (int64) is required"), "{}", m.got);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn export_refuses_a_folder_with_foreign_files_and_reuses_its_own() {
    let (dir, _) = export(Primitive::Reduce, Some("sum.i32"), &[1], "foreign");
    let again = ExportOptions {
        primitive: Primitive::Reduce,
        contract: None,
        request: None,
        framework: None,
        sizes: vec![1],
        seed: Some(1),
        deep: false,
        dir: dir.clone(),
    };
    assert!(export::run(&again).expect("our own export is replaced"));
    std::fs::write(dir.join("notes.txt"), "mine").expect("written");
    let e = export::run(&again).unwrap_err().to_string();
    assert!(e.contains("holds files an export did not write (notes.txt)"), "{e}");
    assert_eq!(std::fs::read_to_string(dir.join("notes.txt")).expect("kept"), "mine");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn default_sizes_are_the_sweeps_up_to_two_to_the_twenty() {
    let sizes = export::default_sizes(0x5eed);
    assert!(sizes.iter().all(|&n| n <= export::DEFAULT_MAX));
    assert!(sizes.contains(&262_145) && sizes.contains(&1));
}

#[test]
fn export_never_deletes_what_an_index_names_outside_its_folder() {
    let root = crate::test_dir::fresh_temp_dir("cases-victim");
    let (victim, dir) = (root.join("victim"), root.join("export"));
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(victim.join("file"), "keep me").unwrap();
    let absolute = victim.join("file").display().to_string();
    for named in ["../victim/file", absolute.as_str(), "notes.txt"] {
        let index = serde_json::json!({"format": "primlab-cases/2", "primitive": "reduce", "seed": "0x1", "sizes": [1],
            "cases": [{"case": "c00000", "primitive": "reduce", "contract": "sum.i32", "variant": "user.sum.i32", "n": 1,
                "size": "1", "family": "f", "seed": "0x1", "inputs": [{"role": "in", "file": named, "dtype": "int32", "len": 1}],
                "params": [], "expected": [], "outputs": [], "tolerance": "exact", "rule": "exact"}]});
        std::fs::write(dir.join("index.json"), index.to_string()).unwrap();
        let args = ExportOptions {
            primitive: Primitive::Reduce,
            contract: None,
            request: None,
            framework: None,
            sizes: vec![1],
            seed: Some(1),
            deep: false,
            dir: dir.clone(),
        };
        let e = export::run(&args).unwrap_err().to_string();
        assert!(e.contains("which no export writes"), "{named}: {e}");
        assert_eq!(std::fs::read_to_string(victim.join("file")).unwrap(), "keep me", "{named}");
        assert!(dir.join("index.json").exists(), "{named}: the index was deleted");
    }
}

#[test]
fn export_names_are_plain_names_in_the_folder() {
    for ok in ["index.json", "c00000.in.npy", "c00012.out.expected.npy", "c00001.count.npy"] {
        assert!(export::is_export_name(ok), "{ok}");
    }
    for bad in [
        "../c00000.in.npy",
        "/tmp/c00000.in.npy",
        "c00000.in.npy/..",
        "c.in.npy",
        "notes.txt",
        "c0.a.b.npy",
        ".c0.in.npy",
    ] {
        assert!(!export::is_export_name(bad), "{bad}");
    }
}

#[test]
fn verify_recomputes_the_expected_outputs_and_the_case_list() {
    let (dir, index) = export(Primitive::Scan, Some("exclusive.i32"), &[33], "recompute");
    answer_with_the_model(&dir, &index);
    assert!(verify::run(&dir, 5, &[], None, false).expect("verifies"));
    // Zeroing an output and its expected file together no longer passes.
    let case = &index.cases[1];
    let zeros = Array::Int64(vec![0; case.outputs[0].len]);
    npy::write(&dir.join(&case.outputs[0].file), &zeros).unwrap();
    npy::write(&dir.join(&case.expected[0].file), &zeros).unwrap();
    assert!(matches!(verify::verify_named(&dir, &case.case).unwrap(), Verdict::Fail(_)));
    assert!(!verify::run(&dir, 5, &[], None, false).expect("verifies"));
    answer_with_the_model(&dir, &index);
    // An index cut to one case is not the catalogue of its seed.
    let mut cut = index.clone();
    cut.cases.truncate(1);
    std::fs::write(dir.join("index.json"), serde_json::to_string(&cut).unwrap()).unwrap();
    let e = verify::run(&dir, 5, &[], None, false).unwrap_err().to_string();
    assert!(e.contains("lists 1 cases where the catalogue"), "{e}");
    // An edited entry (a looser tolerance) fails its case.
    let mut edited = index.clone();
    edited.cases[0].tolerance = "order_free_bound".into();
    std::fs::write(dir.join("index.json"), serde_json::to_string(&edited).unwrap()).unwrap();
    assert!(!verify::run(&dir, 5, &[], None, false).expect("verifies"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sizes_past_the_host_or_u32_are_refused_before_any_allocation() {
    let dir = crate::test_dir::fresh_temp_dir("cases-huge");
    for n in [usize::MAX, 1usize << 32] {
        let args = ExportOptions {
            primitive: Primitive::Scan,
            contract: None,
            request: None,
            framework: None,
            sizes: vec![n],
            seed: Some(1),
            deep: false,
            dir: dir.join("out"),
        };
        let e = export::run(&args).unwrap_err().to_string();
        assert!(e.contains(&format!("n = {n}")), "{e}");
        assert!(!dir.join("out").exists(), "nothing is created for refused sizes");
    }
}

#[test]
fn an_output_that_never_ends_is_refused_not_read() {
    let (dir, index) = export(Primitive::Reduce, Some("sum.i32"), &[1], "fifo-output");
    let case = &index.cases[0];
    std::os::unix::fs::symlink("/dev/zero", dir.join(&case.outputs[0].file)).unwrap();
    let Verdict::Fail(m) = verify::verify_named(&dir, &case.case).unwrap() else { panic!("/dev/zero passed") };
    assert!(m.got.contains("not a regular file"), "{}", m.got);
    let _ = std::fs::remove_dir_all(&dir);
}
