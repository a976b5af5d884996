//! Multi-GPU reduce, scan and sweep through NCCL.
//!
//! The single-GPU kernels, composed over the GPUs of one host: one thread
//! per GPU, each with its own `kernels::Gpu`, joined in one NCCL
//! communicator (cudarc's `nccl` feature, loaded at run time).
//!
//! | file | concern |
//! | --- | --- |
//! | `topology.rs` | `--gpus N\|all`: parsing, the count against the devices present |
//! | `nccl.rs` | loading NCCL (the "NCCL not found" message), the no-multicast environment, the communicator |
//! | `shard.rs` | partition math: contiguous shards, per-GPU and int64 limits, exclusive offsets |
//! | `helper_kernels.rs` | the NVRTC-compiled glue kernels: shard total, offset pass, benchmark fill |
//! | `cluster.rs` | the GPU threads, the barrier that keeps collectives matched, waits that cannot hang |
//! | `sharded_reduce.rs` | local SinglePass reduce + `ncclAllReduce` |
//! | `sharded_scan.rs` | local DecoupledLookback exclusive scan + `ncclAllGather` + offset pass |
//! | `emulated_scan.rs` | the scan's rank >= 1 device steps for 4 virtual ranks on one GPU (host gather) |
//! | `sweep_cases.rs` | `sweep --gpus`: the catalogue spread over the GPUs, the sharded cases vs the model |
//! | `scaling_bench.rs` | `bench --gpus`: weak and strong scaling, `receipts/multigpu-bench.json` |

pub mod cluster;
pub mod emulated_scan;
pub mod helper_kernels;
pub mod nccl;
pub mod scaling_bench;
pub mod scaling_report;
pub mod shard;
pub mod sharded_reduce;
pub mod sharded_scan;
pub mod sweep_cases;
pub mod topology;

pub use topology::{parse_gpus, GpuCount};
