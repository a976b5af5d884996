//! NCCL through cudarc's `nccl` feature, loaded at run time like the driver.
//!
//! **Finding the library.** cudarc (dynamic loading) `dlopen`s NCCL by the
//! names [`library_candidates`] lists (`libnccl.so`, `libnccl.so.13`, ...;
//! see `cudarc::get_lib_name_candidates`). NCCL's real file and soname is
//! `libnccl.so.2`, which is *not* among them: a plain NCCL install (the
//! `nvidia-nccl-cu13` wheel that PyTorch brings, or Debian's `libnccl2`
//! without `libnccl-dev`) is not found. Provide a `libnccl.so` that points
//! at `libnccl.so.2` on the loader path: `eval $(scripts/nccl_env.sh)`
//! links `target/nccl-lib/libnccl.so` and prints the `LD_LIBRARY_PATH`
//! export. cudarc panics when it cannot load the library, so every entry
//! point asks [`probe`] first and turns absence into [`missing_message`].
//!
//! **No NVLink multicast.** [`enforce_no_multicast_env`] sets
//! `NCCL_NVLS_ENABLE=0`, `TORCH_SYMM_MEM_DISABLE_MULTICAST=1` and
//! `NVSHMEM_DISABLE_NVLS=1` in the process environment (overriding any
//! other value) before NCCL is first touched; NCCL reads its parameters once.

use anyhow::{anyhow, Context, Result};
use cudarc::driver::CudaSlice;
use cudarc::nccl::{result as nccl_result, sys as nccl_sys, Comm, Id, ReduceOp};
use std::ffi::CStr;

/// The variables that keep NVLink multicast (NVLS) off, with their values.
pub const NO_MULTICAST_ENV: [(&str, &str); 3] =
    [("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1")];

/// The soname NCCL installs (`libnccl.so.2`), which cudarc does not try.
pub const NCCL_SONAME: &str = "libnccl.so.2";

/// Sets every [`NO_MULTICAST_ENV`] variable to its value. Returns one note
/// per variable that held another value (it is overridden: multicast stays
/// off). Call before any thread that may read the environment is started
/// and before NCCL is loaded.
pub fn enforce_no_multicast_env() -> Vec<String> {
    let mut notes = Vec::new();
    for (name, value) in NO_MULTICAST_ENV {
        match std::env::var(name) {
            Ok(current) if current == value => continue,
            Ok(current) => notes.push(format!("{name}={current} overridden to {value} (NVLink multicast stays off)")),
            Err(_) => {}
        }
        // SAFETY (edition 2024 would require `unsafe`): called at the start of
        // a multi-GPU command, before its worker threads or NCCL exist.
        std::env::set_var(name, value);
    }
    notes
}

/// The file names cudarc tries, in order, when it loads NCCL.
pub fn library_candidates() -> Vec<String> {
    cudarc::get_lib_name_candidates("nccl")
}

/// The error when NCCL cannot be loaded: what was tried, why NCCL's own
/// file name is not enough, and the fix.
pub fn missing_message() -> String {
    let tried = library_candidates();
    format!(
        "NCCL not found: cudarc loads NCCL by dlopen() under the names {} (through LD_LIBRARY_PATH and the \
         ldconfig cache), and none of them loaded. NCCL itself installs {NCCL_SONAME}, which is not one of those \
         names, so an installed NCCL is not enough: put a directory holding a symlink libnccl.so -> \
         /path/to/{NCCL_SONAME} on LD_LIBRARY_PATH. On a machine with PyTorch, `eval $(scripts/nccl_env.sh)` \
         does it: it finds {NCCL_SONAME} in the nvidia-nccl-cu13 wheel (site-packages/nvidia/nccl/lib), links \
         target/nccl-lib/libnccl.so to it and exports LD_LIBRARY_PATH (set NCCL_LIB_DIR=<dir of {NCCL_SONAME}> \
         to choose another copy).",
        tried.join(", ")
    )
}

/// What was loaded.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct NcclInfo {
    /// `major.minor.patch`, from `ncclGetVersion`.
    pub version: String,
    /// The file the process mapped (from /proc/self/maps), when readable.
    pub library: Option<String>,
}

/// Loads NCCL (never panics): its version, or [`missing_message`].
pub fn probe() -> Result<NcclInfo> {
    // SAFETY: only tries to dlopen the candidate names.
    if !unsafe { nccl_sys::is_culib_present() } {
        return Err(anyhow!(missing_message()));
    }
    let code = nccl_result::get_nccl_version().map_err(|e| anyhow!("ncclGetVersion failed: {}", describe(&e)))?;
    Ok(NcclInfo { version: decode_version(code), library: mapped_library() })
}

/// `ncclGetVersion`'s code as `major.minor.patch` (NCCL >= 2.9 encodes
/// `major*10000 + minor*100 + patch`; older ones `major*1000 + minor*100 + patch`).
pub fn decode_version(code: i32) -> String {
    if code >= 10_000 {
        format!("{}.{}.{}", code / 10_000, code / 100 % 100, code % 100)
    } else {
        format!("{}.{}.{}", code / 1000, code / 100 % 10, code % 100)
    }
}

fn mapped_library() -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines().filter_map(|l| l.split_whitespace().nth(5)).find(|p| p.contains("libnccl")).map(str::to_string)
}

/// An NCCL error code in words (`ncclGetErrorString`).
pub fn describe(error: &nccl_result::NcclError) -> String {
    // SAFETY: NCCL returns a static NUL-terminated string for every code.
    let text = unsafe {
        let p = nccl_sys::ncclGetErrorString(error.0);
        if p.is_null() {
            String::new()
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    };
    format!("{:?} ({text})", error.0)
}

/// A fresh unique id for one communicator (made once, shared by every rank).
pub fn new_id() -> Result<Id> {
    Id::new().map_err(|e| anyhow!("ncclGetUniqueId failed: {}", describe(&e)))
}

/// One rank's NCCL communicator, on its [`kernels::Gpu`]'s stream, so that
/// collectives are ordered after the rank's kernels and before the next.
pub struct Communicator {
    comm: Comm,
}

impl std::fmt::Debug for Communicator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Communicator(rank {} of {})", self.comm.rank(), self.comm.world_size())
    }
}

impl Communicator {
    /// Joins the communicator `id` as `rank` of `world` (ncclCommInitRank:
    /// blocks until every rank has called it, each from its own thread).
    pub fn join(gpu: &kernels::Gpu, rank: usize, world: usize, id: Id) -> Result<Communicator> {
        gpu.context().bind_to_thread().context("binding the CUDA context before ncclCommInitRank")?;
        let comm = Comm::from_rank(gpu.stream().clone(), rank, world, id)
            .map_err(|e| anyhow!("ncclCommInitRank (rank {rank} of {world}) failed: {}", describe(&e)))?;
        Ok(Communicator { comm })
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.comm.rank()
    }

    /// Ranks in the communicator.
    pub fn world(&self) -> usize {
        self.comm.world_size()
    }

    fn failed(&self, what: &str, e: nccl_result::NcclError) -> anyhow::Error {
        // SAFETY: the communicator is live; NCCL returns a NUL-terminated string.
        let last = unsafe {
            let p = nccl_sys::ncclGetLastError(std::ptr::null_mut());
            if p.is_null() {
                String::new()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        anyhow!("{what} on rank {} of {} failed: {} {last}", self.rank(), self.world(), describe(&e))
    }

    /// Enqueues the int64 sum over ranks of `send` into `recv` (same length).
    pub fn all_reduce_sum(&self, send: &CudaSlice<i64>, recv: &mut CudaSlice<i64>) -> Result<()> {
        self.comm.all_reduce(send, recv, &ReduceOp::Sum).map(drop).map_err(|e| self.failed("ncclAllReduce", e))
    }

    /// Enqueues the all-gather of `send` (m elements per rank) into `recv`
    /// (m x world elements, rank order).
    pub fn all_gather(&self, send: &CudaSlice<i64>, recv: &mut CudaSlice<i64>) -> Result<()> {
        if recv.len() != send.len() * self.world() {
            return Err(anyhow!(
                "all-gather: {} elements per rank need a {}-element receive buffer, got {}",
                send.len(),
                send.len() * self.world(),
                recv.len()
            ));
        }
        self.comm.all_gather(send, recv).map(drop).map_err(|e| self.failed("ncclAllGather", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_candidates_lack_the_soname_so_the_message_says_how_to_fix_it() {
        let names = library_candidates();
        assert!(names.contains(&"libnccl.so".to_string()), "{names:?}");
        // The reason the message exists: cudarc never tries NCCL's soname.
        assert!(!names.contains(&NCCL_SONAME.to_string()), "{names:?}");
        let m = missing_message();
        for needle in [
            "NCCL not found",
            "libnccl.so,",
            "libnccl.so.2",
            "symlink libnccl.so",
            "LD_LIBRARY_PATH",
            "scripts/nccl_env.sh",
            "nvidia-nccl-cu13",
            "site-packages/nvidia/nccl/lib",
        ] {
            assert!(m.contains(needle), "missing {needle:?} in: {m}");
        }
    }

    #[test]
    fn versions_decode() {
        assert_eq!(decode_version(22_703), "2.27.3");
        assert_eq!(decode_version(23_203), "2.32.3");
        assert_eq!(decode_version(2_708), "2.7.8");
    }

    #[test]
    fn the_multicast_switches_are_forced() {
        // Only this test touches these variables in the test process.
        std::env::set_var("NCCL_NVLS_ENABLE", "1");
        std::env::remove_var("NVSHMEM_DISABLE_NVLS");
        let notes = enforce_no_multicast_env();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].starts_with("NCCL_NVLS_ENABLE=1 overridden to 0"));
        for (name, value) in NO_MULTICAST_ENV {
            assert_eq!(std::env::var(name).as_deref(), Ok(value));
        }
        assert!(enforce_no_multicast_env().is_empty());
    }

    /// Where NCCL is absent (this CI machine, unless LD_LIBRARY_PATH points
    /// at one), `probe` answers the message instead of panicking.
    #[test]
    fn probe_never_panics() {
        match probe() {
            Ok(info) => {
                eprintln!("NCCL loaded: {info:?}");
                assert!(info.version.starts_with("2."), "{info:?}");
                assert!(info.library.as_deref().is_some_and(|l| l.contains("libnccl")), "{info:?}");
            }
            Err(e) => assert_eq!(e.to_string(), missing_message()),
        }
    }
}
