//! Re-runs the current test binary as a child process that runs only the
//! calling module's `child_workload` test, with a clean tickprof
//! environment.
//!
//! The test is named after the file that calls these functions (they are
//! `#[track_caller]`): a call from `tests/sampler.rs` runs
//! `sampler::child_workload`, the module of that name in `tests/all.rs`.

use std::panic::Location;
use std::process::Command;

/// The command: the caller's `child_workload` alone, `marker=value` set
/// (the child test does its work only when it sees it), and every
/// `TICKPROF*` variable of this process removed so each test sets exactly
/// what it checks (and `TICKPROF_STDERR=1`, the default), and every
/// `TPTEST_*` one (the test suite's own variables, such as the markers: a
/// prefix of their own, which tickprof does not warn about as it does about
/// an unknown `TICKPROF_*`).
#[track_caller]
pub fn child_command(marker: &str, value: &str) -> Command {
    child_command_of(
        &std::env::current_exe().expect("test binary path"),
        marker,
        value,
    )
}

/// The name of the caller's `child_workload` test: its file's module.
#[track_caller]
pub fn child_test() -> String {
    let file = std::path::Path::new(Location::caller().file());
    let module = file.file_stem().and_then(|s| s.to_str()).expect("a file");
    format!("{module}::child_workload")
}

/// [`child_command`] of the test binary at `exe` (this one, copied).
#[track_caller]
pub fn child_command_of(exe: &std::path::Path, marker: &str, value: &str) -> Command {
    let mut cmd = Command::new(exe);
    cmd.args([
        "--exact",
        &child_test(),
        "--nocapture",
        "--test-threads",
        "1",
    ]);
    for (k, _) in std::env::vars_os() {
        let k_text = k.to_string_lossy();
        if k_text.starts_with("TICKPROF") || k_text.starts_with("TPTEST_") {
            cmd.env_remove(k);
        }
    }
    // The default, said explicitly: the child is this test binary, whose
    // `support/quiet.rs` would otherwise turn its exit report off.
    cmd.env("TICKPROF_STDERR", "1");
    // The plain system allocator, as in a program that installs none (a
    // test that wants another sets this again: `tests/all.rs`).
    cmd.env(ALLOCATOR, "system");
    cmd.env(marker, value);
    cmd
}

/// The variable that picks the global allocator of a child of
/// `tests/all.rs`: `system`, `counting` (`tickprof::Alloc`, the default of
/// a process without it), `ledger` or `marked`.
pub const ALLOCATOR: &str = "TPTEST_ALLOCATOR";

/// Runs the child (`marker=value`, `env` added) with its exit report off;
/// returns its output and its stderr as text.
#[track_caller]
pub fn run_quiet(
    marker: &str,
    value: &str,
    env: &[(&str, &str)],
) -> (std::process::Output, String) {
    let mut cmd = child_command(marker, value);
    cmd.env("TICKPROF_STDERR", "0");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("child process");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, stderr)
}

/// Runs [`child_command`] with the extra variables `env`: its output and
/// its stderr as text.
#[track_caller]
pub fn run(marker: &str, value: &str, env: &[(&str, &str)]) -> (std::process::Output, String) {
    let mut cmd = child_command(marker, value);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the child runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, stderr)
}

/// Runs the caller's `child_workload` as a test that checks its own work
/// (`marker=1`, `env` added, its exit report off): asserts that it ran and
/// passed, and returns its stderr.
#[track_caller]
pub fn run_checks(marker: &str, env: &[(&str, &str)]) -> String {
    let (out, stderr) = run_quiet(marker, "1", env);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("1 passed"),
        "the child ran its checks: {stdout}"
    );
    stderr
}
