//! The command's integration tests, as the modules of one test binary:
//! one crate to compile and link instead of one per file. Every test runs
//! the built commands (`tickprof`, `cargo-tickprof`) as child processes,
//! so they share this process freely. Run one file's tests with
//! `cargo test -p tickprof-cli --test all NAME::` (`NAME` the file's name).

mod support;
mod trees;

mod after_inlining;
mod busy;
mod cargo_tickprof;
mod cli;
mod diff_runs;
mod fuzz;
mod hostile;
mod lock;
mod unusual;
mod writes;
