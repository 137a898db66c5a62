//! Re-runs the current test binary as a child process that runs only its
//! `child_workload` test, with a clean tickprof environment.

use std::process::Command;

/// The command: `child_workload` alone, `marker=value` set (the child test
/// does its work only when it sees it), and every `TICKPROF*` variable of
/// this process removed so each test sets exactly what it checks (and
/// `TICKPROF_STDERR=1`, the default), and every `TPTEST_*` one (the test
/// suite's own variables, such as the markers: a prefix of their own, which
/// tickprof does not warn about as it does about an unknown `TICKPROF_*`).
pub fn child_command(marker: &str, value: &str) -> Command {
    child_command_of(
        &std::env::current_exe().expect("test binary path"),
        marker,
        value,
    )
}

/// [`child_command`] of the test binary at `exe` (this one, copied).
pub fn child_command_of(exe: &std::path::Path, marker: &str, value: &str) -> Command {
    let mut cmd = Command::new(exe);
    cmd.args([
        "--exact",
        "child_workload",
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
    cmd.env(marker, value);
    cmd
}

/// Runs the child (`marker=value`, `env` added) with its exit report off;
/// returns its output and its stderr as text.
#[allow(dead_code)] // not every test binary that includes this runs one
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
#[allow(dead_code)] // not every test binary that includes this file uses it
pub fn run(marker: &str, value: &str, env: &[(&str, &str)]) -> (std::process::Output, String) {
    let mut cmd = child_command(marker, value);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the child runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, stderr)
}
