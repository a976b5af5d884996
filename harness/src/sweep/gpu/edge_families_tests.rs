//! The edge-value families in the GPU catalogue: only up to [`EDGE_FAMILIES_MAX`], never in
//! sanitizer plans, and every one of their references computes (the model accepts each input:
//! finite where the contract rejects nonfinite values, no overflow where a sum's bound does
//! not cover it). No GPU needed.

use super::*;
use std::collections::BTreeMap;

/// The family names the edge families add.
const EDGE_NAMES: [&str; 8] = [
    "alternating_min_max",
    "long_runs",
    "float_edges",
    "signed_zero_ties",
    "alternating_extremes",
    "sum_edges",
    "bin_edges",
    "softmax_edges",
];

fn is_edge(case: &GpuCase) -> bool {
    EDGE_NAMES.contains(&case.id.family.as_str())
}

#[test]
fn edge_families_stay_small_and_out_of_sanitizer_plans() {
    let full = catalogue(&SweepPlan::full(0x5eed));
    let mut added: BTreeMap<&str, usize> = BTreeMap::new();
    for case in full.iter().filter(|c| is_edge(c)) {
        assert!(case.id.n <= EDGE_FAMILIES_MAX, "{}", case.id.key());
        *added.entry(case.id.primitive.as_str()).or_default() += 1;
    }
    eprintln!("edge-family cases of the full catalogue, per primitive: {added:?} of {} cases", full.len());
    for primitive in ["reduce", "scan", "compact", "arg_reduce", "histogram", "float_reduce", "exact_sum", "softmax"] {
        assert!(added.contains_key(primitive), "{primitive} has edge-family cases");
    }
    for primitive in Primitive::ALL {
        let plan = SweepPlan::sanitizer(primitive, &crate::sanitize::SANITIZE_SIZES, 1, &[]);
        assert!(!catalogue(&plan).iter().any(is_edge), "{primitive}: no edge family under the sanitizers");
    }
}

#[test]
fn every_edge_reference_computes_at_the_boundary_sizes() {
    let plan = SweepPlan::of_primitive(Primitive::Reduce, &[1, 31, 257, 4099], 7);
    let mut checked = 0;
    for primitive in Primitive::ALL {
        let plan = SweepPlan { primitives: vec![primitive], ..plan.clone() };
        for case in catalogue(&plan).iter().filter(|c| is_edge(c) && c.id.n <= 1 << 16) {
            if let Err(e) = (case.reference)() {
                panic!("{}: {e}", case.id.key());
            }
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked} edge references");
}
