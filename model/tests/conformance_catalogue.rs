//! The whole CPU conformance catalogue must pass: every hardware-scope model equals its direct
//! definition at every boundary size, random size and data family.

use model::conformance::{catalogue, catalogue_with_seed};

fn failures(checks: &[model::conformance::Check]) -> Vec<String> {
    checks.iter().filter_map(|c| c.run().err()).map(|m| m.to_string()).collect()
}

#[test]
fn whole_catalogue_passes() {
    let checks = catalogue();
    assert!(checks.len() > 900, "{} checks", checks.len());
    let bad = failures(&checks);
    assert!(bad.is_empty(), "{} failures:\n{}", bad.len(), bad.join("\n"));
}

#[test]
fn another_seed_passes_too() {
    // Only the random part of a second catalogue: sizes and seeds drawn from another seed.
    let boundary = catalogue_with_seed(1, 0).len();
    let checks: Vec<_> = catalogue_with_seed(0xdead_beef, 4).into_iter().skip(boundary).collect();
    let bad = failures(&checks);
    assert!(bad.is_empty(), "seed 0xdeadbeef: {}", bad.join("\n"));
}
