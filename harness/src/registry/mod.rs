//! The primitive registry: the one list of primitives ([`primitive`]) and
//! the catalogues each one builds. Every command that
//! iterates over primitives (sweep, sanitize, mutants, bench, report, the
//! receipt gate) takes them from [`Primitive::ALL`], and the command line's
//! `--primitive` values come from the same enum, so `--help` and shell
//! completion list exactly these.

pub mod primitive;

use crate::sweep::gpu::{self, GpuCase};
use crate::sweep::raw::{Contract, RawBuilder};
use crate::sweep::SweepPlan;
pub use primitive::Primitive;

/// Appends one primitive's GPU cases to the catalogue.
pub type CaseBuilder = fn(&SweepPlan, &mut Vec<GpuCase>);

impl Primitive {
    /// The builder of its GPU cases.
    pub fn gpu_cases(self) -> CaseBuilder {
        match self {
            Primitive::Reduce => gpu::reduce::cases,
            Primitive::Scan => gpu::scan::cases,
            Primitive::ArgReduce => gpu::arg_reduce::cases,
            Primitive::Softmax => gpu::softmax::cases,
            Primitive::Compact => gpu::compact::cases,
            Primitive::SegmentedReduce => gpu::segmented_reduce::cases,
            Primitive::Histogram => gpu::histogram::cases,
            Primitive::FloatReduce => gpu::float_reduce::cases,
            // The whole-input sums, then the segmented ones (one contract).
            Primitive::ExactSum => |plan, out| {
                gpu::exact_sum::cases(plan, out);
                gpu::exact_segmented_sum::cases(plan, out);
            },
            // The selections, then the sampler over them.
            Primitive::Topk => |plan, out| {
                gpu::topk::cases(plan, out);
                gpu::topk_sample::cases(plan, out);
            },
        }
    }

    /// Its contracts for user kernels and the builder of their raw cases
    /// (`harness check`, `harness cases`); None while it has none.
    pub fn raw_cases(self) -> Option<(&'static [Contract], RawBuilder)> {
        use crate::sweep::raw;
        match self {
            Primitive::Reduce => Some((&raw::reduce::CONTRACTS, raw::reduce::cases)),
            Primitive::Scan => Some((&raw::scan::CONTRACTS, raw::scan::cases)),
            Primitive::ArgReduce => Some((&raw::arg_reduce::CONTRACTS, raw::arg_reduce::cases)),
            Primitive::Softmax => Some((&raw::softmax::CONTRACTS, raw::softmax::cases)),
            Primitive::Compact => Some((&raw::compact::CONTRACTS, raw::compact::cases)),
            Primitive::SegmentedReduce => Some((&raw::segmented_reduce::CONTRACTS, raw::segmented_reduce::cases)),
            Primitive::Histogram => Some((&raw::histogram::CONTRACTS, raw::histogram::cases)),
            Primitive::FloatReduce => Some((&raw::float_reduce::CONTRACTS, raw::float_reduce::cases)),
            Primitive::ExactSum => Some((&raw::exact_sum::CONTRACTS, raw::exact_sum::cases)),
            Primitive::Topk => Some((&raw::topk::CONTRACTS, raw::topk::cases)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn names_round_trip_and_match_the_command_line_values() {
        for p in Primitive::ALL {
            assert_eq!(Primitive::from_name(p.name()), Some(p));
            let value = p.to_possible_value().expect("every primitive is a CLI value");
            assert_eq!(value.get_name(), p.name());
        }
        assert_eq!(Primitive::value_variants().len(), Primitive::ALL.len());
    }

    /// Every GPU case and sanitizer job names a registry primitive, and
    /// every registry primitive has cases.
    #[test]
    fn every_case_and_sanitizer_job_comes_from_the_registry() {
        let plan = SweepPlan {
            seed: 1,
            sizes: vec![33],
            quick: true,
            primitives: vec![],
            variants: vec![],
            one_family: false,
        };
        let cases = gpu::catalogue(&plan);
        for p in Primitive::ALL {
            assert!(cases.iter().any(|c| c.id.primitive == p.name()), "{p} has no GPU case");
            let jobs = gpu::catalogue(&SweepPlan::sanitizer(p, &crate::sweep::sizes::SANITIZE_SIZES, 1, &[]));
            assert!(!jobs.is_empty() && jobs.iter().all(|c| c.id.primitive == p.name()), "{p} sanitizer cases");
        }
        assert!(cases.iter().all(|c| Primitive::from_name(&c.id.primitive).is_some()));
    }

    /// The folders of the layers a primitive's files live in (from the workspace root).
    const LAYER_FOLDERS: [&str; 13] = [
        "kernels/cuda",
        "kernels/src",
        "types/src",
        "model/src",
        "model/src/exact",
        "model/src/hardware",
        "model/src/generators",
        "model/src/fixtures",
        "model/src/conformance",
        "harness/src/sweep",
        "harness/src/sweep/gpu",
        "harness/src/sweep/raw",
        "harness/src/bench/entries",
    ];

    fn workspace_root() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
    }

    /// The primitive whose name (or a part's) a file's name bears, the longest name first:
    /// `topk_sample_rule.rs` is topk's (its part topk_sample), `segmented_reduce.rs` is not reduce's.
    fn named_after(stem: &str) -> Option<Primitive> {
        Primitive::ALL
            .into_iter()
            .flat_map(|p| std::iter::once(p.name()).chain(p.files().parts.iter().copied()).map(move |n| (n, p)))
            .filter(|(n, _)| stem == *n || stem.strip_prefix(n).is_some_and(|rest| rest.starts_with('_')))
            .max_by_key(|(n, _)| n.len())
            .map(|(_, p)| p)
    }

    /// Every file a descriptor lists exists, none is listed twice, and each
    /// primitive has a file of its own name in every layer (a folder of its
    /// name's `mod.rs` for the model).
    #[test]
    fn every_listed_file_exists_and_every_layer_bears_the_name() {
        let root = workspace_root();
        let mut seen = std::collections::BTreeSet::new();
        for p in Primitive::ALL {
            let files = p.files();
            for path in files.all() {
                assert!(root.join(path).is_file(), "{p}: {path} is listed but is no file");
                assert!(seen.insert(path), "{path} is listed twice");
            }
            let name = p.name();
            let layers = [
                ("cuda", files.cuda, format!("kernels/cuda/{name}.cu")),
                ("launch", files.launch, format!("kernels/src/{name}.rs")),
                ("model", files.model, format!("/{name}")),
                ("sweep", files.sweep, format!("harness/src/sweep/gpu/{name}.rs")),
                ("contracts", files.contracts, format!("harness/src/sweep/raw/{name}.rs")),
                ("bench", files.bench, format!("harness/src/bench/entries/{name}.rs")),
            ];
            for (layer, listed, own) in layers {
                let bears = if layer == "model" {
                    listed.iter().any(|f| f.ends_with(&format!("{own}.rs")) || f.ends_with(&format!("{own}/mod.rs")))
                } else {
                    listed.contains(&own.as_str())
                };
                assert!(bears, "{p}: its {layer} layer lists no file named {name} ({listed:?})");
            }
        }
    }

    /// Every file of a layer's folder whose name starts with a primitive's
    /// (or a part's) name, and every file of a folder so named, is listed
    /// by that primitive: a new file cannot escape the list.
    #[test]
    fn every_file_named_after_a_primitive_is_listed() {
        let root = workspace_root();
        let mut checked = 0;
        for folder in LAYER_FOLDERS {
            for entry in std::fs::read_dir(root.join(folder)).expect("a layer folder").flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let path = entry.path();
                let (stem, files): (String, Vec<String>) = if path.is_dir() {
                    let inner = std::fs::read_dir(&path).expect("a folder").flatten();
                    (
                        name.clone(),
                        inner.map(|e| format!("{folder}/{name}/{}", e.file_name().to_string_lossy())).collect(),
                    )
                } else {
                    (name.split('.').next().unwrap_or("").to_string(), vec![format!("{folder}/{name}")])
                };
                let Some(owner) = named_after(&stem) else { continue };
                for file in files {
                    assert!(
                        owner.files().all().any(|f| f == file),
                        "{file} bears {owner}'s name but registry/primitive.rs does not list it"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 50, "only {checked} files named after a primitive: are the layer folders right?");
    }
}
