//! `fork` safety: a forked child never inherits a tickprof lock held, its
//! profile starts empty (its report covers only its own calls), and every
//! report header carries the process id.
//!
//! Each test re-runs this binary as a child process (`child_workload`, with
//! `TPTEST_FORK_CHILD=<scenario>`); that process forks while another of
//! its threads churns threads. `scripts/thread_fork_stress.sh` runs the
//! `forks` scenario at full size (400 forks).
#![cfg(all(feature = "enabled", unix))]

use crate::support::child;

use crate::support::forking;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tickprof::profile;

const CHILD: &str = "TPTEST_FORK_CHILD";

extern "C" {
    fn exit(code: i32) -> !;
}

#[profile]
fn before_fork() {}

#[profile]
fn churned() {}

#[profile]
fn in_child() {}

/// In a forked child: start a thread that makes 3 marked calls, then check
/// that the report has exactly these (none of the parent's). Exit code 0
/// when it does.
fn forked_child_checks() -> i32 {
    let h = std::thread::Builder::new()
        .name("forked-worker".into())
        .spawn(|| {
            for _ in 0..3 {
                in_child();
            }
        });
    if !h.is_ok_and(|h| h.join().is_ok()) {
        return 2;
    }
    let r = tickprof::report();
    let calls = |suffix: &str| r.find(suffix).map_or(0, |s| s.calls);
    if calls("in_child") != 3 || calls("before_fork") != 0 || calls("churned") != 0 {
        return 3;
    }
    if r.run.pid != std::process::id() {
        return 4;
    }
    let threads: Vec<(&str, u64)> = r
        .threads
        .iter()
        .map(|t| (t.name.as_str(), t.count))
        .collect();
    if threads != [("forked-worker", 1)] {
        return 5;
    }
    0
}

/// How a forked child ended.
#[derive(Debug, PartialEq)]
enum End {
    Exited(i32),
    /// Killed after the time limit; `in_tickprof`: whether gdb (when
    /// installed) found a tickprof frame in any of its threads' stacks.
    Hung {
        in_tickprof: bool,
    },
}

/// The stacks of every thread of `pid`, if gdb can attach.
fn stacks(pid: i32) -> Option<String> {
    let out = std::process::Command::new("gdb")
        .args([
            "-p",
            &pid.to_string(),
            "-batch",
            "-ex",
            "thread apply all bt",
        ])
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Waits for `pid` up to `limit`, then takes its stacks and kills it.
fn wait_for(pid: i32, limit: Duration) -> End {
    if let Some(code) = forking::wait_for(pid, limit) {
        return End::Exited(code);
    }
    let stacks = stacks(pid);
    if let Some(s) = &stacks {
        eprintln!("hung forked child {pid}:\n{s}");
    }
    forking::kill_child(pid);
    End::Hung {
        in_tickprof: stacks.is_some_and(|s| s.contains("tickprof_runtime")),
    }
}

/// The child's work; does nothing unless run as a child.
#[test]
fn child_workload() {
    let Ok(mode) = std::env::var(CHILD) else {
        return;
    };
    for _ in 0..5 {
        before_fork();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let churner = forking::start_churn(Arc::clone(&stop), churned);
    let parts: Vec<&str> = mode.split(':').collect();
    match parts.as_slice() {
        ["forks", n] => {
            let n: u32 = n.parse().unwrap();
            let (mut hangs, mut in_tickprof, mut failed) = (0, 0, 0);
            for _ in 0..n {
                // SAFETY: the child runs only `forked_child_checks` and
                // leaves with `_exit`.
                let pid = unsafe { forking::fork() };
                assert!(pid >= 0, "fork failed");
                if pid == 0 {
                    let code = forked_child_checks();
                    // SAFETY: ends the forked child without running the
                    // parent's exit handlers.
                    unsafe { forking::_exit(code) };
                }
                match wait_for(pid, Duration::from_secs(10)) {
                    End::Hung { in_tickprof: t } => {
                        hangs += 1;
                        in_tickprof += u32::from(t);
                    }
                    End::Exited(0) => {}
                    End::Exited(code) => {
                        failed += 1;
                        eprintln!("forked child exited with {code}");
                    }
                }
            }
            stop.store(true, Ordering::Relaxed);
            let churned = churner.join().unwrap();
            eprintln!(
                "forks: {n}; hangs: {hangs} ({in_tickprof} in tickprof); failed: {failed}; threads churned: {churned}"
            );
            // Rust's std has a lock of its own that a forked child can
            // inherit held (its stack-overflow handler's thread list, taken
            // by every new thread): about 1 fork in 1,000 hangs there with
            // or without tickprof. None may hang in tickprof.
            assert_eq!((in_tickprof, failed), (0, 0));
            assert!(hangs * 50 <= n, "{hangs} hangs in {n} forks");
        }
        // One forked child that exits normally: both processes print their
        // exit report on the same stderr, each with its own pid.
        ["exit-reports"] => {
            // SAFETY: the child makes marked calls and exits through `exit`.
            let pid = unsafe { forking::fork() };
            assert!(pid >= 0, "fork failed");
            if pid == 0 {
                let code = forked_child_checks();
                eprintln!("forked child pid {}", std::process::id());
                // SAFETY: a normal exit: the exit report is printed.
                unsafe { exit(code) };
            }
            assert_eq!(wait_for(pid, Duration::from_secs(10)), End::Exited(0));
            stop.store(true, Ordering::Relaxed);
            churner.join().unwrap();
            eprintln!("parent pid {}", std::process::id());
        }
        other => panic!("unknown scenario {other:?}"),
    }
}

fn run(mode: &str) -> String {
    let out = child::child_command(CHILD, mode).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{mode}: {stderr}");
    stderr
}

#[test]
fn forked_children_never_hang_and_see_only_their_own_calls() {
    run("forks:200");
}

/// The pid in `line` after `prefix`, up to the next non-digit.
fn pid_after(line: &str, prefix: &str) -> Option<u32> {
    let rest = line.split(prefix).nth(1)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[test]
fn parent_and_child_reports_carry_their_pids() {
    let err = run("exit-reports");
    let child = err.lines().find_map(|l| pid_after(l, "forked child pid "));
    let parent = err.lines().find_map(|l| pid_after(l, "parent pid "));
    let (Some(child), Some(parent)) = (child, parent) else {
        panic!("{err}");
    };
    let headers: Vec<u32> = err
        .lines()
        .filter_map(|l| pid_after(l, "tickprof: pid "))
        .collect();
    assert_eq!(headers, [child, parent], "{err}");
    // The child's report (printed first) has its own calls only.
    let child_report: &str = err.split("parent pid ").next().unwrap();
    assert!(child_report.contains("in_child"), "{err}");
    assert!(!child_report.contains("before_fork"), "{err}");
    assert!(!child_report.contains("churned"), "{err}");
    let parent_report = err.split("parent pid ").nth(1).unwrap();
    assert!(parent_report.contains("before_fork"), "{err}");
}
