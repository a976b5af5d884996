//! Tests of `kernels::int_element`: the limits, and that both schedule sets
//! take them.

use super::*;
use crate::{ReduceVariant, ScanVariant};

#[test]
fn the_reduce_and_scan_variants_take_their_limits() {
    assert_eq!(ReduceVariant::Serial.max_len(), 1 << 22);
    assert_eq!(ScanVariant::Serial.max_len(), 1 << 22);
    assert_eq!(SERIAL_MAX_LEN, 1 << 22);
    // The scans: 64-bit sizes, up to the grid limits of their widest
    // launches: Blelloch's level 0 (512 items a block), the look-back's
    // one block a tile (224 threads x 20 items).
    assert_eq!(ScanVariant::Blelloch.max_len(), (1usize << 40) - 512);
    assert_eq!(ScanVariant::DecoupledLookback.max_len(), ((1usize << 31) - 1) * 4480);
    assert_eq!(crate::scan::MAX_LEN, (1usize << 40) - 512);
    // The reductions: 64-bit sizes, up to the grid limit of the multipass
    // first pass, (2^31 - 1) * 512 = 2^40 - 512.
    for v in [ReduceVariant::Multipass, ReduceVariant::BlockAtomic, ReduceVariant::SinglePass] {
        assert_eq!(v.max_len(), (1usize << 40) - 512, "{}", v.name());
    }
}
