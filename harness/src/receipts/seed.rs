//! Seeds drawn from the sources: a gated sweep or sanitizer run takes its
//! inputs from [`seed_for`] its verdict hash, so a receipt re-keyed by hand
//! to other sources names other inputs than theirs, and the gate, which
//! recomputes every case at the receipt's seed, sees that the seed is not
//! the one the checkout derives.

use sha2::{Digest, Sha256};

/// The receipt kinds whose seed the gate requires to be [`seed_for`] their
/// verdict hash. (`harness mutants` runs at a fixed seed of its own.)
pub const SEEDED: [&str; 2] = ["sweep", "sanitize"];

/// The one verdict hash whose receipts predate the rule: they were made at
/// the seeds of their time, by a full GPU run of exactly those sources, and
/// no other sources hash to it, so exempting it opens no way to re-key.
pub const RECEIPTS_BEFORE_DERIVED_SEEDS: &str = "6e396f3da3d4d6cf42e9c0e43c964297949f3d2d712a434f1d748877424f51f2";

/// The seed a receipt of `purpose` ("sweep", "sanitize") draws its inputs
/// from, for sources of verdict hash `hash`: the first 8 bytes (big-endian)
/// of SHA-256("primlab-seed/" purpose "/" hash). Other sources, other inputs.
pub fn seed_for(purpose: &str, hash: &str) -> u64 {
    let digest = Sha256::new()
        .chain_update(b"primlab-seed/")
        .chain_update(purpose)
        .chain_update(b"/")
        .chain_update(hash)
        .finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
}

/// The seed a gated run of `purpose` made by this binary must use.
pub fn gated_seed(purpose: &str) -> u64 {
    seed_for(purpose, crate::verdict_hash::VERDICT_HASH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_differ_by_purpose_and_by_sources() {
        let a = seed_for("sweep", "abc");
        assert_eq!(a, seed_for("sweep", "abc"), "a function of its arguments");
        assert_ne!(a, seed_for("sanitize", "abc"));
        assert_ne!(a, seed_for("sweep", "abd"));
    }

    #[test]
    fn the_exempt_hash_is_the_committed_receipts_one() {
        // A whole SHA-256, so that no prefix of another hash can match it.
        assert_eq!(RECEIPTS_BEFORE_DERIVED_SEEDS.len(), 64);
        assert!(RECEIPTS_BEFORE_DERIVED_SEEDS.bytes().all(|b| b.is_ascii_hexdigit()));
    }
}
