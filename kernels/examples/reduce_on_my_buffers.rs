//! primlab's reduce and scan on device buffers that this program owns.
//!
//! The program opens its own CUDA context and stream, allocates and fills
//! the buffers itself, builds a [`kernels::Gpu`] on that context and stream
//! ([`kernels::Gpu::from_context`]), enqueues a [`kernels::ReducePlan`] on a
//! whole buffer and a [`kernels::ScanPlan`] on a view of its second half,
//! and checks both results on the host.
//!
//! Run: `cargo run -p primlab-kernels --example reduce_on_my_buffers`. Exit status:
//! 0 when both results are right, and also when there is no GPU (it says so
//! instead of running); 1 on a wrong result or a CUDA error.

use std::process::ExitCode;

use kernels::cudarc::driver::{CudaContext, DriverError};
use kernels::{Gpu, GpuError, GpuOptions, ReducePlan, ReduceVariant, ScanKind, ScanPlan, ScanVariant};

/// Elements of the input: 2^20 int32 values.
const N: usize = 1 << 20;

fn main() -> ExitCode {
    match run() {
        Ok(()) => {
            println!("reduce_on_my_buffers: the sum and the scan match the host");
            ExitCode::SUCCESS
        }
        Err(Failure::NoGpu(reason)) => {
            eprintln!("reduce_on_my_buffers: no GPU, nothing run ({reason})");
            ExitCode::SUCCESS
        }
        Err(Failure::Gpu(e)) => {
            eprintln!("reduce_on_my_buffers: GPU error: {e}");
            ExitCode::FAILURE
        }
        Err(Failure::Wrong(what)) => {
            eprintln!("reduce_on_my_buffers: wrong result: {what}");
            ExitCode::FAILURE
        }
    }
}

/// Why the example did not pass.
enum Failure {
    /// No driver or no device: nothing can run here.
    NoGpu(String),
    /// A CUDA or kernels-crate error.
    Gpu(GpuError),
    /// A device result differs from the host's.
    Wrong(String),
}

impl From<GpuError> for Failure {
    fn from(e: GpuError) -> Failure {
        match e {
            GpuError::Unavailable { reason } => Failure::NoGpu(reason),
            other => Failure::Gpu(other),
        }
    }
}

/// A driver error, with what this program was doing.
fn driver(context: &str) -> impl FnOnce(DriverError) -> Failure + '_ {
    move |source| Failure::Gpu(GpuError::Driver { context: context.to_string(), source })
}

fn run() -> Result<(), Failure> {
    // `CudaContext::new` panics when libcuda is missing: ask first.
    kernels::probe_driver()?;
    let ctx = CudaContext::new(0).map_err(driver("creating a context on device 0"))?;
    let stream = ctx.new_stream().map_err(driver("creating a stream"))?;
    let gpu = Gpu::from_context(ctx, stream.clone(), GpuOptions::default())?;

    // Our own buffers, filled by us.
    let host: Vec<i32> = (0..N as i64).map(|i| ((i * 7919) % 2001 - 1000) as i32).collect();
    let input = stream.clone_htod(&host).map_err(driver("uploading the input"))?;
    let mut sum = stream.alloc_zeros::<i64>(1).map_err(driver("allocating the sum"))?;
    let half = N / 2;
    let mut prefix = stream.alloc_zeros::<i64>(half).map_err(driver("allocating the scan output"))?;

    // Reduce the whole buffer; scan a view of its second half (it starts
    // 2^21 bytes in, a multiple of kernels::launch::BUFFER_ALIGN).
    let mut reduce = ReducePlan::<i32>::new(&gpu, ReduceVariant::SinglePass, N)?;
    reduce.enqueue(&input, &mut sum)?;
    let mut scan = ScanPlan::<i32>::new(&gpu, ScanVariant::DecoupledLookback, ScanKind::Inclusive, half)?;
    scan.enqueue_view(&input.slice(half..), &mut prefix.as_view_mut())?;
    stream.synchronize().map_err(driver("waiting for the stream"))?;
    reduce.check_fault()?;
    scan.check_fault()?;

    let got_sum = stream.clone_dtoh(&sum).map_err(driver("downloading the sum"))?[0];
    let want_sum: i64 = host.iter().map(|&x| i64::from(x)).sum();
    if got_sum != want_sum {
        return Err(Failure::Wrong(format!("sum {got_sum}, expected {want_sum}")));
    }
    let got_prefix = stream.clone_dtoh(&prefix).map_err(driver("downloading the scan"))?;
    let mut running = 0i64;
    for (i, (&x, &got)) in host[half..].iter().zip(&got_prefix).enumerate() {
        running += i64::from(x);
        if got != running {
            return Err(Failure::Wrong(format!("inclusive scan element {i}: {got}, expected {running}")));
        }
    }
    Ok(())
}
