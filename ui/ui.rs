//! Compile-fail and pass cases for `#[profile]` and the scope macros,
//! checked with trybuild.
//!
//! Regenerate the `.stderr` snapshots with
//! `TRYBUILD=overwrite cargo test -p tickprof-ui` (and, for `tests/ui/off`,
//! `TRYBUILD=overwrite cargo test -p tickprof-ui --no-default-features`)
//! and read the diff.

#[path = "tests/support/quiet.rs"]
mod quiet;

/// Profiling on: every error path of the macros, and odd valid input.
#[cfg(feature = "enabled")]
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

/// Profiling off: the scope macros still reject what they reject when on.
#[cfg(not(feature = "enabled"))]
#[test]
fn ui_disabled() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/off/*.rs");
}
