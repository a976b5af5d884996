//! The multi-GPU path's own tiny CUDA kernels (`kernels/cuda/multigpu_helpers.cu`,
//! with every other CUDA source), compiled by NVRTC and loaded into each
//! rank's context. They are glue of the multi-GPU composition, not
//! primitives, so no kernel family launches them; the reduce and scan themselves are the single-GPU
//! kernels (`ReducePlan`, `ScanPlan`).
//!
//! * `mg_shard_total` (one thread): a shard's total from its exclusive scan,
//!   `exclusive[len-1] + input[len-1]`: the value each rank all-gathers.
//! * `mg_add_offset` (the **offset pass**): adds rank r's exclusive offset,
//!   `gathered[0] + ... + gathered[r-1]` (summed left to right by each
//!   block from the all-gathered totals), to every element of its shard's
//!   scan. Streams 16 bytes per element (read and write of int64), with
//!   16-byte vector accesses; the buffer is a whole `cudaMalloc`
//!   allocation (256-byte aligned).
//! * `mg_fill_small_ints`: benchmark input made on the device, `x[i] =
//!   mix64(seed ^ (first + i)) % 19 - 9` (in [-9, 9]); [`bench_value`] is
//!   the same function on the host, so results can be checked without
//!   copying gigabytes.

use anyhow::{anyhow, Context, Result};
use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::{result as nvrtc, Ptx};
use std::ffi::CString;

/// The CUDA source of the helper module (`kernels/cuda/multigpu_helpers.cu`,
/// with its includes inlined).
pub fn source() -> Result<String> {
    kernels::sources::translation_unit(SOURCE_FILE)
        .ok_or_else(|| anyhow!("kernels/cuda/{SOURCE_FILE} is not among the embedded CUDA sources"))
}

/// The helper module's file under `kernels/cuda`.
pub const SOURCE_FILE: &str = "multigpu_helpers.cu";
/// Threads per block of the helper launches.
const THREADS: u32 = 256;
/// Blocks per SM of the streaming launches (8 x 256 = 2048 threads: a full SM).
const BLOCKS_PER_SM: u32 = 8;

/// The host twin of `mg_mix64` (SplitMix64's finaliser).
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The value `mg_fill_small_ints` writes at global index `index`.
pub fn bench_value(seed: u64, index: u64) -> i32 {
    (mix64(seed ^ index) % 19) as i32 - 9
}

/// Compiles [`source`] for `arch` (e.g. `sm_90`) to PTX. Returns the PTX
/// and NVRTC's log (empty when there was no warning).
pub fn compile(arch: &str) -> Result<(String, String)> {
    kernels::compile::ensure_nvrtc().map_err(|e| anyhow!("{e}"))?;
    let source = CString::new(source()?).map_err(|_| anyhow!("a NUL byte in {SOURCE_FILE}"))?;
    let name = CString::new("multigpu_helpers.cu").expect("no NUL");
    let program = nvrtc::create_program(&source, Some(&name)).map_err(|e| anyhow!("nvrtcCreateProgram: {e:?}"))?;
    // config.cuh stops at #error without the tuning-policy defines.
    let mut options = vec!["-std=c++17".to_string(), "-lineinfo".to_string(), format!("--gpu-architecture={arch}")];
    options.extend(kernels::policy::define_options());
    // SAFETY: `program` is live until destroyed below; options are plain strings.
    let compiled = unsafe { nvrtc::compile_program(program, &options) };
    // SAFETY: as above.
    let log = unsafe { nvrtc::get_program_log(program) }.map(|l| c_chars(&l)).unwrap_or_default();
    let ptx = compiled
        .map_err(|e| anyhow!("NVRTC failed to compile the multi-GPU helper kernels for {arch}: {e:?}\n{log}"))
        // SAFETY: compiled successfully.
        .and_then(|_| unsafe { nvrtc::get_ptx(program) }.map_err(|e| anyhow!("nvrtcGetPTX: {e:?}")))
        .map(|p| c_chars(&p));
    // SAFETY: created above, destroyed once.
    let _ = unsafe { nvrtc::destroy_program(program) };
    Ok((ptx?, log))
}

fn c_chars(chars: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = chars.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).trim().to_string()
}

/// The helper kernels loaded into one rank's context.
pub struct Helpers {
    shard_total: CudaFunction,
    add_offset: CudaFunction,
    fill: CudaFunction,
    grid: u32,
}

impl Helpers {
    /// Compiles (for this GPU's architecture) and loads the module.
    pub fn load(gpu: &kernels::Gpu) -> Result<Helpers> {
        let (ptx, _log) = compile(&gpu.info().arch)?;
        let module = gpu.context().load_module(Ptx::from_src(ptx)).context("loading the multi-GPU helper module")?;
        let function = |name: &str| module.load_function(name).with_context(|| format!("loading kernel {name}"));
        Ok(Helpers {
            shard_total: function("mg_shard_total")?,
            add_offset: function("mg_add_offset")?,
            fill: function("mg_fill_small_ints")?,
            grid: gpu.info().sm_count.max(1) as u32 * BLOCKS_PER_SM,
        })
    }

    fn streaming(&self, items: u64) -> LaunchConfig {
        let blocks = items.div_ceil(THREADS as u64).clamp(1, self.grid as u64) as u32;
        LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 }
    }

    /// Enqueues `total[0] = exclusive[len-1] + input[len-1]` (len >= 1).
    pub fn shard_total(
        &self,
        gpu: &kernels::Gpu,
        exclusive: &CudaSlice<i64>,
        input: &CudaSlice<i32>,
        total: &mut CudaSlice<i64>,
    ) -> Result<()> {
        let len = input.len() as u64;
        if len == 0 || exclusive.len() != input.len() || total.is_empty() {
            return Err(anyhow!("shard total: needs len >= 1 and matching buffers (len {len})"));
        }
        let mut launch = gpu.stream().launch_builder(&self.shard_total);
        launch.arg(exclusive).arg(input).arg(&len).arg(total);
        let one = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: (const i64* exclusive, const int* input, u64 len, i64* total);
        // both inputs hold len elements, total at least one.
        unsafe { launch.launch(one) }.context("launching mg_shard_total")?;
        Ok(())
    }

    /// Enqueues the offset pass: `out[i] += gathered[0] + ... + gathered[rank-1]`.
    pub fn add_offset(
        &self,
        gpu: &kernels::Gpu,
        out: &mut CudaSlice<i64>,
        gathered: &CudaSlice<i64>,
        rank: usize,
    ) -> Result<()> {
        let len = out.len() as u64;
        if len == 0 || gathered.len() < rank {
            return Err(anyhow!("offset pass: empty output or {} gathered totals for rank {rank}", gathered.len()));
        }
        let rank32 = rank as u32;
        let config = self.streaming(len / 2 + 1);
        let mut launch = gpu.stream().launch_builder(&self.add_offset);
        launch.arg(out).arg(&len).arg(gathered).arg(&rank32);
        // SAFETY: (i64* out, u64 len, const i64* gathered, unsigned rank); out
        // holds len elements (a whole allocation: 16-byte aligned), gathered >= rank.
        unsafe { launch.launch(config) }.context("launching mg_add_offset")?;
        Ok(())
    }

    /// Enqueues `data[i] = bench_value(seed, first + i)`.
    pub fn fill_small_ints(&self, gpu: &kernels::Gpu, data: &mut CudaSlice<i32>, first: u64, seed: u64) -> Result<()> {
        let len = data.len() as u64;
        if len == 0 {
            return Ok(());
        }
        let config = self.streaming(len);
        let mut launch = gpu.stream().launch_builder(&self.fill);
        launch.arg(data).arg(&len).arg(&first).arg(&seed);
        // SAFETY: (int* data, u64 len, u64 first, u64 seed); data holds len elements.
        unsafe { launch.launch(config) }.context("launching mg_fill_small_ints")?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The helper source compiles for the project's architectures without a
    /// warning, and exports every kernel the launches name.
    #[test]
    fn the_helper_source_compiles_cleanly() {
        kernels::compile::ensure_nvrtc().unwrap_or_else(|e| panic!("{e}: run `make verify`"));
        for arch in ["sm_80", "sm_90"] {
            let (ptx, log) = compile(arch).unwrap_or_else(|e| panic!("{e}"));
            assert!(log.is_empty(), "{arch} warned:\n{log}");
            for name in ["mg_shard_total", "mg_add_offset", "mg_fill_small_ints"] {
                assert!(ptx.contains(&format!(".entry {name}(")), "{arch}: {name} missing");
            }
        }
    }

    /// The device fill and the host twin are one function: the constants and
    /// the formula in the source are the ones `bench_value` uses.
    #[test]
    fn the_fill_formula_matches_the_host_twin() {
        for text in [
            "z += 0x9e3779b97f4a7c15ULL;",
            "z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;",
            "z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;",
            "return z ^ (z >> 31);",
            "data[i] = (int)(mg_mix64(seed ^ (first + i)) % 19ULL) - 9;",
        ] {
            assert!(source().unwrap().contains(text), "source lost `{text}`");
        }
        // SplitMix64's published first output for state 0 (seed 0 + gamma).
        assert_eq!(mix64(0), 0xe220_a839_7b1d_cdaf);
        let values: Vec<i32> = (0..10_000).map(|i| bench_value(7, i)).collect();
        assert!(values.iter().all(|v| (-9..=9).contains(v)));
        assert_eq!(*values.iter().min().unwrap(), -9);
        assert_eq!(*values.iter().max().unwrap(), 9);
    }

    /// A host transcription of `mg_add_offset`'s index arithmetic (4-way
    /// unrolled grid-stride over pairs, then the odd tail) touches every
    /// element exactly once, for several grids.
    #[test]
    fn the_offset_pass_touches_every_element_once() {
        for len in [1u64, 2, 3, 7, 8, 9, 511, 4097, 100_003] {
            for (blocks, threads) in [(1u64, 1u64), (1, 256), (3, 256), (1056, 256)] {
                let mut touched = vec![0u8; len as usize];
                let count = len / 2;
                let stride = blocks * threads;
                for tid in 0..stride {
                    let mut p = tid;
                    while p + 3 * stride < count {
                        for k in 0..4 {
                            touched[(2 * (p + k * stride)) as usize] += 1;
                            touched[(2 * (p + k * stride) + 1) as usize] += 1;
                        }
                        p += 4 * stride;
                    }
                    while p < count {
                        touched[(2 * p) as usize] += 1;
                        touched[(2 * p + 1) as usize] += 1;
                        p += stride;
                    }
                }
                if len % 2 == 1 {
                    touched[(len - 1) as usize] += 1;
                }
                assert!(touched.iter().all(|&c| c == 1), "len={len} grid={blocks}x{threads}");
            }
        }
    }
}
