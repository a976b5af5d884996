//! What a receipt records about the machine: GPU, driver, toolkit.

use serde::{Deserialize, Serialize};

/// The GPU machine a receipt was made on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineInfo {
    /// GPU name, e.g. "NVIDIA H200".
    pub gpu: String,
    /// Compute capability, e.g. "9.0".
    pub compute_capability: String,
    /// Streaming multiprocessors.
    pub sm_count: i32,
    /// L2 cache bytes.
    pub l2_bytes: i32,
    /// Device memory bytes.
    pub memory_bytes: u64,
    /// Driver version string from nvidia-smi (e.g. "580.159.04") when readable,
    /// else the driver API version (e.g. "CUDA 13.0").
    pub driver: String,
    /// NVRTC version used to compile the kernels, e.g. "13.0".
    pub nvrtc: String,
    /// `nvcc --version` release line when nvcc is on the machine.
    pub toolkit: Option<String>,
    /// SM and memory clocks (MHz) as the driver reports their maxima.
    pub clocks_mhz: Option<(i32, i32)>,
    /// Host name.
    pub host: Option<String>,
}

impl MachineInfo {
    /// Reads everything available about `gpu` and the toolchain.
    pub fn collect(gpu: &kernels::Gpu) -> MachineInfo {
        let info = gpu.info();
        let smi = run_quiet("nvidia-smi", &["--query-gpu=driver_version", "--format=csv,noheader"]);
        let driver = smi
            .map(|s| s.lines().next().unwrap_or_default().trim().to_string())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| format!("CUDA {}.{}", info.driver_version / 1000, info.driver_version % 1000 / 10));
        let toolkit = run_quiet("nvcc", &["--version"])
            .and_then(|s| s.lines().find(|l| l.contains("release")).map(|l| l.trim().to_string()));
        MachineInfo {
            gpu: info.name.clone(),
            compute_capability: format!("{}.{}", info.compute_capability.0, info.compute_capability.1),
            sm_count: info.sm_count,
            l2_bytes: info.l2_bytes,
            memory_bytes: info.total_memory as u64,
            driver,
            nvrtc: format!("{}.{}", info.nvrtc_version.0, info.nvrtc_version.1),
            toolkit,
            clocks_mhz: Some((info.sm_clock_mhz, info.memory_clock_mhz)),
            host: run_quiet("hostname", &[]).map(|s| s.trim().to_string()),
        }
    }
}

/// Runs a command and returns its stdout, or None if it is missing or fails.
pub fn run_quiet(program: &str, args: &[&str]) -> Option<String> {
    duct::cmd(program, args).stderr_null().stdout_capture().unchecked().run().ok().and_then(|out| {
        if out.status.success() {
            String::from_utf8(out.stdout).ok()
        } else {
            None
        }
    })
}
