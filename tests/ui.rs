//! Compile-fail and pass cases for `#[profile]`, checked with trybuild.
//!
//! Regenerate the `.stderr` snapshots with
//! `TRYBUILD=overwrite cargo test --test ui` and read the diff.
#![cfg(feature = "enabled")]

#[path = "support/quiet.rs"]
mod quiet;

#[test]
fn ui() {
    // trybuild colours its report whenever NO_COLOR is unset, also into
    // pipes and CI logs: keep the colours for terminals only.
    if !std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none()
    {
        std::env::set_var("NO_COLOR", "1");
    }
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
