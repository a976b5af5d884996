//! Tests of `kernels::int_element`: the limits, and that both schedule sets
//! take them.

use super::*;
use crate::{ReduceVariant, ScanVariant};

#[test]
fn the_reduce_and_scan_variants_take_their_limits() {
    assert_eq!(ReduceVariant::Serial.max_len(), 1 << 22);
    assert_eq!(ScanVariant::Serial.max_len(), 1 << 22);
    assert_eq!(ScanVariant::DecoupledLookback.max_len(), (1usize << 32) - 1);
    // The scans' int64 bound: n * 2^31 < 2^63 for every accepted n.
    assert!((MAX_LEN as u128) * (1u128 << 31) < (1u128 << 63));
    // The reductions: 64-bit sizes, up to the grid limit of the multipass
    // first pass, (2^31 - 1) * 512 = 2^40 - 512.
    for v in [ReduceVariant::Multipass, ReduceVariant::BlockAtomic, ReduceVariant::SinglePass] {
        assert_eq!(v.max_len(), (1usize << 40) - 512, "{}", v.name());
    }
}
