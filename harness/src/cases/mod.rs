//! The raw case catalogue as files (`harness cases`), so that kernels the
//! harness cannot launch (Triton, PyTorch extensions, CuPy, JAX) get the same
//! cases and the same comparison: `export` writes inputs and exact expected
//! outputs as `.npy` plus `index.json`; the user's program writes one output
//! file per case; `verify` compares them and prints the sweep's failure lines.

pub mod export;
pub mod index;
pub mod npy;
pub mod rules;
pub mod typed;
pub mod verify;

#[cfg(test)]
mod model_answers;

#[cfg(test)]
#[path = "cases_tests.rs"]
mod tests;
