//! The commands: each owns its command-line options (clap) and turns them
//! into the plain values the libraries take (the catalogues and receipts of
//! `sweep`, `receipts`, `registry`; the runners `sanitize`, `mutants`,
//! `check`; the `bench`; the `report`), so no library knows the command line.

pub mod bench;
pub mod cases;
pub mod check;
pub mod check_bench;
pub mod check_cub;
pub mod fixtures;
pub mod mutants;
pub mod receipts;
pub mod report;
pub mod sanitize;
pub mod sweep;
