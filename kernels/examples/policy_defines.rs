//! Prints the tuning policy as the `-D` flags NVRTC gets, on one line, for
//! the standalone nvcc explorers under `scripts/baselines/` (which include
//! the library's `.cu` files and so need the same defines):
//!
//! ```text
//! nvcc ... $(cargo run -q -p primlab-kernels --example policy_defines) ...
//! ```

fn main() {
    println!("{}", kernels::policy::define_options().join(" "));
}
