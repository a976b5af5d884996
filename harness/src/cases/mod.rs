//! `harness cases`: the raw case catalogue as files, so that kernels the
//! harness cannot launch (Triton, PyTorch extensions, CuPy, JAX) get the same
//! cases and the same comparison: `export` writes inputs and exact expected
//! outputs as `.npy` plus `index.json`; the user's program writes one output
//! file per case; `verify` compares them and prints the sweep's failure lines.

pub mod args;
pub mod export;
pub mod index;
pub mod npy;
pub mod verify;

use anyhow::Result;
use args::{CasesAction, CasesArgs};

/// Runs `harness cases`.
pub fn run(args: &CasesArgs) -> Result<bool> {
    match &args.action {
        CasesAction::Export(export) => export::run(export),
        CasesAction::Verify { dir, max_failures_shown, junit } => {
            verify::run(dir, *max_failures_shown, junit.as_deref())
        }
    }
}

#[cfg(test)]
mod model_answers;

#[cfg(test)]
#[path = "cases_tests.rs"]
mod tests;
