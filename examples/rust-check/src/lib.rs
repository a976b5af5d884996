//! An example crate: its test (`tests/check_kernels.rs`) checks two of the
//! gallery's kernels (`examples/check/bugs/`) through the harness library
//! under `cargo test`. The library itself is nothing here.
