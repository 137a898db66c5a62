//! Compile-fail and pass cases for `#[profile]`, checked with trybuild.
//!
//! Regenerate the `.stderr` snapshots with
//! `TRYBUILD=overwrite cargo test --test ui` and read the diff.
#![cfg(feature = "enabled")]

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
