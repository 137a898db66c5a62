//! A user crate that depends on tickprof and uses it: its code must
//! type-check exactly as without tickprof.
//!
//! Trait impls are global: any crate linked into the program that adds, say,
//! `impl PartialEq<Value> for i32` (as `serde_json` does) gives the compiler
//! a second candidate and turns inferred code into E0282/E0283/E0284 errors
//! in every crate that links it. The tests in `tests/inference.rs` are
//! patterns from arrayvec's, smallvec's, tokio's and ryu's own test suites
//! that broke that way; `tests/dependency_graph.rs` in the test package
//! keeps tickprof's dependency graph to audited crates.

/// A marked function, so the crate really links tickprof's runtime.
#[tickprof::profile]
pub fn parse_sum(s: &str) -> f64 {
    s.split(',')
        .filter_map(|t| t.trim().parse::<f64>().ok())
        .sum()
}
