//! `cases export` then `cases verify` on outputs computed from the exported
//! inputs by the model passes; one wrong element fails and is named; a
//! missing output is a failure. No GPU needed.

use super::args::ExportArgs;
use super::index::Index;
use super::*;
use crate::registry::Primitive;
use crate::sweep::case::{failure_line, Verdict};
use crate::sweep::raw::{Array, Dtype};
use std::path::{Path, PathBuf};

fn export(primitive: Primitive, contract: Option<&str>, sizes: &[usize], tag: &str) -> (PathBuf, Index) {
    let dir = std::env::temp_dir().join(format!("primlab-cases-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let args = ExportArgs {
        primitive,
        contract: contract.map(str::to_string),
        sizes: sizes.to_vec(),
        seed: Some(0x5eed),
        dir: dir.clone(),
    };
    assert!(export::run(&args).expect("exports"));
    let index: Index =
        serde_json::from_str(&std::fs::read_to_string(dir.join("index.json")).expect("index")).expect("json");
    (dir, index)
}

/// Writes every case's output as the model computes it from the exported input.
fn answer_with_the_model(dir: &Path, index: &Index) {
    for case in &index.cases {
        let Array::Int32(input) = npy::read(&dir.join(&case.inputs[0].file), Dtype::Int32).expect("input") else {
            unreachable!("int32 input")
        };
        let out = match (case.primitive.as_str(), case.contract.as_str()) {
            ("scan", "exclusive.i32") => model::scan::exclusive_scan_i64(&input).expect("model"),
            ("scan", "inclusive.i32") => model::scan::inclusive_scan_i64(&input).expect("model"),
            ("reduce", "sum.i32") => vec![model::reduce::reduce_i64(&input).expect("model")],
            other => panic!("no model answer for {other:?}"),
        };
        npy::write(&dir.join(&case.output.file), &Array::Int64(out)).expect("output written");
    }
}

#[test]
fn model_outputs_pass_and_one_wrong_element_fails_by_name() {
    let (dir, index) = export(Primitive::Scan, None, &[1, 33, 257], "scan");
    // Every int family at each size, both contracts.
    assert_eq!(index.cases.len(), 3 * 5 * 2);
    let first = &index.cases[0];
    assert_eq!((first.contract.as_str(), first.n, first.tolerance.as_str()), ("exclusive.i32", 1, "exact"));
    assert_eq!(first.output.file, "c00000.out.npy");
    answer_with_the_model(&dir, &index);
    assert!(verify::run(&dir, 5).expect("verifies"), "the model's own answers failed");

    let case = index.cases.iter().find(|c| c.n == 33 && c.contract == "inclusive.i32").expect("a case of 33");
    let path = dir.join(&case.output.file);
    let Array::Int64(mut out) = npy::read(&path, Dtype::Int64).expect("read") else { unreachable!("int64") };
    let right = out[17];
    out[17] += 1;
    npy::write(&path, &Array::Int64(out)).expect("written");
    let Verdict::Fail(m) = verify::verify_case(&dir, case) else { panic!("a wrong element passed") };
    assert_eq!(m.index, Some(17));
    let line = failure_line(&verify::case_id(case), &m);
    assert_eq!(
        line,
        format!(
            "scan/user.inclusive.i32 n=33 seed={} family={} check=prefix index=17 expected={right} got={}",
            case.seed,
            case.family,
            right + 1
        )
    );
    assert!(!verify::run(&dir, 5).expect("verifies"), "a wrong element passed the whole run");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_or_mistyped_output_is_a_failure() {
    let (dir, index) = export(Primitive::Reduce, Some("sum.i32"), &[31], "reduce");
    assert_eq!(index.cases.len(), 5);
    answer_with_the_model(&dir, &index);
    assert!(verify::run(&dir, 5).expect("verifies"));
    let case = &index.cases[2];
    std::fs::remove_file(dir.join(&case.output.file)).expect("removed");
    assert_eq!(
        verify::verify_case(&dir, case),
        Verdict::fail(format!("{} written", case.output.file), "no file", "output file")
    );
    assert!(!verify::run(&dir, 5).expect("verifies"), "a missing output passed");
    npy::write(&dir.join(&case.output.file), &Array::Int32(vec![0])).expect("written");
    let Verdict::Fail(m) = verify::verify_case(&dir, case) else { panic!("an int32 output passed") };
    assert!(m.got.contains("dtype <i4 where <i8 (int64) is required"), "{}", m.got);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn export_refuses_a_folder_with_foreign_files_and_reuses_its_own() {
    let (dir, _) = export(Primitive::Reduce, Some("sum.i32"), &[1], "foreign");
    let again =
        ExportArgs { primitive: Primitive::Reduce, contract: None, sizes: vec![1], seed: Some(1), dir: dir.clone() };
    assert!(export::run(&again).expect("our own export is replaced"));
    std::fs::write(dir.join("notes.txt"), "mine").expect("written");
    let e = export::run(&again).unwrap_err().to_string();
    assert!(e.contains("holds files an export did not write (notes.txt)"), "{e}");
    assert_eq!(std::fs::read_to_string(dir.join("notes.txt")).expect("kept"), "mine");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_primitive_without_contracts_is_refused() {
    let dir = std::env::temp_dir().join(format!("primlab-cases-none-{}", std::process::id()));
    let args = ExportArgs { primitive: Primitive::Histogram, contract: None, sizes: vec![1], seed: Some(1), dir };
    let e = export::run(&args).unwrap_err().to_string();
    assert!(e.starts_with("primitive histogram has no contract for user kernels yet"), "{e}");
}

#[test]
fn default_sizes_are_the_sweeps_up_to_two_to_the_twenty() {
    let sizes = export::default_sizes(0x5eed);
    assert!(sizes.iter().all(|&n| n <= export::DEFAULT_MAX));
    assert!(sizes.contains(&262_145) && sizes.contains(&1));
}
