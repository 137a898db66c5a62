//! The tracing bridge's test (`tests/`), bench (`benches/`) and the code
//! blocks of `docs/tracing.md`, run as doctests here: this is the one
//! workspace package with tickprof's `tracing` feature and tracing's crates.
//! Nothing to use.

/// The code blocks of `docs/tracing.md`, compiled and run by
/// `cargo test --doc -p tickprof-testsuite-tracing`.
#[cfg(doctest)]
#[doc = include_str!("../docs/tracing.md")]
pub struct TracingDoctests;
