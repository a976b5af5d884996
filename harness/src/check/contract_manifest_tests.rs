//! Manifests for every contract of the registry: one passing every buffer
//! and parameter validates to the right arguments; one that leaves out an
//! output, names an argument the contract lacks or passes a parameter of
//! the wrong size is refused with the message naming it. No GPU needed.

use super::error::ManifestError;
use super::manifest::{load, Arg, Manifest};
use crate::registry::Primitive;
use crate::sweep::raw::{self, Contract, Dtype};
use crate::sweep::sizes::BOUNDARY_SIZES;
use std::path::PathBuf;

/// The arguments that pass everything a contract has, in order: inputs,
/// parameters, outputs, n; with the PTX type of each.
fn everything(contract: &Contract) -> Vec<(String, &'static str)> {
    let mut args: Vec<(String, &'static str)> = contract.inputs.iter().map(|b| (b.role.to_string(), ".u64")).collect();
    args.extend(contract.params.iter().map(|p| {
        (
            p.name.to_string(),
            if p.dtype == Dtype::Int64 {
                ".s64"
            } else if p.dtype == Dtype::Float32 {
                ".f32"
            } else {
                ".s32"
            },
        )
    }));
    args.extend(contract.outputs.iter().map(|b| (b.role.to_string(), ".u64")));
    args.push(("n".into(), ".u64"));
    args
}

/// Validates a manifest of `contract` with one launch of `args` against a
/// PTX entry whose parameters have the types `types`.
fn validate(
    primitive: Primitive,
    contract: &Contract,
    args: &[String],
    types: &[&str],
) -> Result<Manifest, ManifestError> {
    let dir = super::tests::folder();
    let params: Vec<String> = types.iter().enumerate().map(|(i, t)| format!("\t.param {t} p{i}")).collect();
    let ptx = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(\n{}\n)\n{{ ret; }}\n",
        params.join(",\n")
    );
    std::fs::write(dir.join("k.ptx"), ptx).expect("ptx written");
    let quoted: Vec<String> = args.iter().map(|a| format!("\"{a}\"")).collect();
    let text = format!(
        "primitive = \"{primitive}\"\ncontract = \"{}\"\n[module]\nptx = \"k.ptx\"\n[[launch]]\nkernel = \"k\"\n\
         args = [{}]\ngrid = \"ceil_div(n, 1024)\"\nblock = \"256\"\n",
        contract.name,
        quoted.join(", ")
    );
    std::fs::write(dir.join("check.toml"), text).expect("manifest written");
    let loaded = load(&dir.join("check.toml"), &BOUNDARY_SIZES, None);
    let _ = std::fs::remove_dir_all(&dir);
    loaded
}

fn every_contract() -> Vec<(Primitive, &'static Contract)> {
    Primitive::ALL.into_iter().flat_map(|p| raw::contracts(p).iter().map(move |c| (p, c))).collect()
}

fn split(args: &[(String, &'static str)]) -> (Vec<String>, Vec<&'static str>) {
    args.iter().cloned().unzip()
}

#[test]
fn a_manifest_passing_every_buffer_and_parameter_validates_for_every_contract() {
    for (p, c) in every_contract() {
        let (args, types) = split(&everything(c));
        let m = validate(p, c, &args, &types).unwrap_or_else(|e| panic!("{p} {}: {e}", c.name));
        let mut want: Vec<Arg> = (0..c.inputs.len()).map(Arg::Input).collect();
        want.extend((0..c.params.len()).map(Arg::Param));
        want.extend((0..c.outputs.len()).map(Arg::Output));
        want.push(Arg::N);
        assert_eq!(m.launches[0].args, want, "{p} {}", c.name);
        assert_eq!((m.primitive, m.contract.name), (p, c.name));
    }
}

#[test]
fn a_manifest_leaving_out_an_output_names_it_for_every_contract() {
    for (p, c) in every_contract() {
        let mut all = everything(c);
        let last = c.outputs.last().expect("an output").role;
        all.retain(|(a, _)| a != last);
        let (args, types) = split(&all);
        let e = validate(p, c, &args, &types).map(|_| "valid".to_string()).unwrap_or_else(|e| e.to_string());
        assert_eq!(
            e,
            format!(
                "no launch passes the contract's buffer '{last}' (the {p} {} contract has {}); add it to a launch's args",
                c.name,
                c.roles().join(", ")
            )
        );
    }
}

#[test]
fn an_argument_the_contract_lacks_is_named_with_what_it_has_for_every_contract() {
    for (p, c) in every_contract() {
        let mut all = everything(c);
        all.insert(0, ("output".into(), ".u64"));
        let (args, types) = split(&all);
        let e = validate(p, c, &args, &types).map(|_| "valid".to_string()).unwrap_or_else(|e| e.to_string());
        let mut known: Vec<&str> = c.roles();
        known.extend(c.params.iter().map(|q| q.name));
        known.extend(["n", "n32"]);
        assert_eq!(
            e,
            format!(
                "launch 1 (k): argument 'output' is not a buffer or parameter of the contract, a scratch buffer or n \
                 (known: {})",
                known.join(", ")
            ),
            "{p} {}",
            c.name
        );
    }
}

#[test]
fn a_parameter_or_buffer_of_the_wrong_size_is_named_for_every_contract() {
    for (p, c) in every_contract() {
        let mut all = everything(c);
        // The entry declares its first argument (a buffer) as a 32-bit integer.
        all[0].1 = ".u32";
        let (args, types) = split(&all);
        let e = validate(p, c, &args, &types).map(|_| "valid".to_string()).unwrap_or_else(|e| e.to_string());
        assert_eq!(
            e,
            format!(
                "launch 1 (k): argument 1 '{}' is a buffer (a device pointer), 8 bytes, but the entry point's \
                 parameter 1 takes 4 bytes",
                c.inputs[0].role
            )
        );
        let Some(first) = c.params.first() else { continue };
        let at = c.inputs.len();
        all = everything(c);
        all[at].1 = if first.dtype == Dtype::Int64 { ".u32" } else { ".u64" };
        let (args, types) = split(&all);
        let e = validate(p, c, &args, &types).map(|_| "valid".to_string()).unwrap_or_else(|e| e.to_string());
        assert!(
            e.starts_with(&format!(
                "launch 1 (k): argument {} '{}' is the contract's {} parameter",
                at + 1,
                first.name,
                first.dtype.name()
            )),
            "{p} {}: {e}",
            c.name
        );
    }
}

/// The PTX of an example kernel, as NVRTC writes it, declares the sizes the
/// check passes (the compaction example compiles and validates).
#[test]
fn the_compaction_example_declares_pointer_sized_parameters() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/check/compact_cuda/check.toml");
    let m = load(&path, &BOUNDARY_SIZES, None).unwrap_or_else(|e| panic!("{e}"));
    let entry = m.module.entries.iter().find(|e| e.name == "scan_counts").expect("scan_counts");
    assert_eq!(entry.params, Some(vec![Some(8), Some(8), Some(8)]));
    assert_eq!(m.launches[1].args, vec![Arg::Scratch(0), Arg::Output(1), Arg::N]);
}

#[test]
fn a_manifest_that_never_ends_or_nests_too_deep_is_refused() {
    let e = load(std::path::Path::new("/dev/zero"), &BOUNDARY_SIZES, None).unwrap_err();
    assert!(e.to_string().contains("not a regular file"), "{e}");
    let dir = crate::test_dir::fresh_temp_dir("manifest-deep");
    let deep = format!("{}n{}", "(".repeat(10_000), ")".repeat(10_000));
    let text = format!(
        "primitive = \"reduce\"\ncontract = \"sum.i32\"\n[module]\nptx = \"k.ptx\"\n\
         [[scratch]]\nname = \"s\"\ndtype = \"int32\"\nlen = \"{deep}\"\n\
         [[launch]]\nkernel = \"k\"\nargs = [\"in\", \"out\", \"n\"]\ngrid = \"1\"\nblock = \"256\"\n"
    );
    std::fs::write(dir.join("check.toml"), text).unwrap();
    std::fs::write(dir.join("k.ptx"), ".visible .entry k(.param .u64 a, .param .u64 b, .param .u64 c) { ret; }\n")
        .unwrap();
    let e = load(&dir.join("check.toml"), &BOUNDARY_SIZES, None).unwrap_err();
    assert!(e.to_string().contains("longer than"), "{e}");
}

/// A manifest of a typed contract, by its parts (`contract` the kind) or by its name.
fn typed_manifest(primitive: &str, fields: &str) -> Result<Manifest, ManifestError> {
    let dir = super::tests::folder();
    let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(\n\t.param .u64 p0,\n\t.param .u64 p1,\n\t.param .u64 p2\n)\n{ ret; }\n";
    std::fs::write(dir.join("k.ptx"), ptx).expect("ptx written");
    let text = format!(
        "primitive = \"{primitive}\"\n{fields}\n[module]\nptx = \"k.ptx\"\n[[launch]]\nkernel = \"k\"\n\
         args = [\"in\", \"out\", \"n\"]\ngrid = \"ceil_div(n, 1024)\"\nblock = \"256\"\n"
    );
    std::fs::write(dir.join("check.toml"), text).expect("manifest written");
    let loaded = load(&dir.join("check.toml"), &BOUNDARY_SIZES, None);
    let _ = std::fs::remove_dir_all(&dir);
    loaded
}

#[test]
fn a_typed_contract_is_named_by_its_parts_or_its_name_and_bad_parts_are_refused() {
    let by_parts = typed_manifest(
        "scan",
        "contract = \"inclusive\"\nop = \"sum\"\ndtype_in = \"bfloat16\"\ndtype_out = \"float32\"\nrtol = 1e-3",
    )
    .expect("valid");
    assert_eq!(by_parts.contract.name, "inclusive.sum.bf16.f32.rtol_1e-3.atol_0e0");
    assert_eq!(by_parts.contract.inputs[0].dtype, Dtype::Bfloat16);
    assert_eq!(by_parts.launches[0].args, vec![Arg::Input(0), Arg::Output(0), Arg::N]);
    let by_name = typed_manifest("reduce", "contract = \"max.i64.i64\"").expect("valid");
    assert_eq!(by_name.contract.outputs[0].dtype, Dtype::Int64);
    let refused =
        typed_manifest("scan", "contract = \"inclusive\"\nop = \"max\"\ndtype_in = \"float32\"\ndtype_out = \"int32\"");
    let Err(ManifestError::UnknownContract { message }) = refused else { panic!("float in, int out was accepted") };
    assert!(message.contains("keeps ints or floats"), "{message}");
    let Err(ManifestError::UnknownContract { message }) = typed_manifest("scan", "op = \"sum\"") else {
        panic!("a typed request without a kind or input type was accepted")
    };
    assert!(message.contains("dtype_in"), "{message}");
}

/// A manifest naming `primitive` with `fields`, whose one launch (a block per
/// row) passes every buffer and parameter of the row contract `name`.
fn row_manifest(primitive: &str, fields: &str, name: &str) -> Result<Manifest, ManifestError> {
    let contract = crate::cases::rules::contract(Primitive::Softmax, name).expect(name);
    let (args, types) = split(&everything(contract));
    let dir = super::tests::folder();
    let params: Vec<String> = types.iter().enumerate().map(|(i, t)| format!("\t.param {t} p{i}")).collect();
    let ptx = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(\n{}\n)\n{{ ret; }}\n",
        params.join(",\n")
    );
    std::fs::write(dir.join("k.ptx"), ptx).expect("ptx written");
    let quoted: Vec<String> = args.iter().map(|a| format!("\"{a}\"")).collect();
    let text = format!(
        "primitive = \"{primitive}\"\n{fields}\n[module]\nptx = \"k.ptx\"\n[[launch]]\nkernel = \"k\"\n\
         args = [{}]\ngrid = \"rows\"\nblock = \"256\"\n",
        quoted.join(", ")
    );
    std::fs::write(dir.join("check.toml"), text).expect("manifest written");
    let loaded = load(&dir.join("check.toml"), &BOUNDARY_SIZES, None);
    let _ = std::fs::remove_dir_all(&dir);
    loaded
}

#[test]
fn a_row_kind_is_a_primitive_whose_contracts_ride_on_the_softmax_rows() {
    let name = "layernorm.f32.f32.affine.stats";
    let m = row_manifest("layernorm", &format!("contract = \"{name}\""), name).expect("valid");
    assert_eq!((m.primitive, m.primitive_name().as_str(), m.contract.name), (Primitive::Softmax, "layernorm", name));
    assert_eq!(m.launches[0].args.len(), 3 + 3 + 3 + 1, "in, gamma, beta, rows, cols, eps, out, mean, rstd, n");
    let mut all = everything(m.contract);
    all.retain(|(a, _)| a != "rstd");
    let (args, types) = split(&all);
    let e = validate(Primitive::Softmax, m.contract, &args, &types)
        .map(|_| "valid".to_string())
        .unwrap_or_else(|e| e.to_string());
    assert!(e.contains("'rstd' (the layernorm layernorm.f32.f32.affine.stats contract has"), "{e}");
    let by_parts = row_manifest("layernorm", "dtype_in = \"bfloat16\"", "layernorm.bf16.bf16").expect("valid");
    assert_eq!(by_parts.contract.name, "layernorm.bf16.bf16");
    let torch = "dtype_in = \"float32\"\nframework = \"torch\"";
    let rms = row_manifest("rmsnorm", torch, "rmsnorm.f32.f32.eps_opmath").expect("valid");
    assert_eq!(rms.contract.name, "rmsnorm.f32.f32.eps_opmath");
    let ce = "cross_entropy.f32.f32.none";
    let shape = row_manifest("softmax", &format!("contract = \"{ce}\""), ce).expect("the row shape's own name");
    assert_eq!(shape.primitive_name(), "cross_entropy");
    let Err(ManifestError::UnknownContract { message }) =
        row_manifest("rmsnorm", "contract = \"rows.f32\"", "rmsnorm.f32.f32")
    else {
        panic!("a softmax contract under rmsnorm was accepted")
    };
    assert!(message.contains("primitive rmsnorm has the contracts rmsnorm.<in>.<out>"), "{message}");
}
