//! The program behaves as if tickprof were not there (issue 54): each case
//! of `examples/behaviour.rs` (a user's program in small) runs with
//! tickprof on and with `TICKPROF=off`, and its exit status and stdout
//! (what it says of its children and `fork` handlers included) must be the
//! same. The example is built with the package's targets (`cargo test -p
//! tickprof-testsuite`; alone: `cargo build -p tickprof-testsuite
//! --example behaviour`, then `cargo test -p tickprof-testsuite --test
//! behaviour`).
#![cfg(all(feature = "enabled", target_os = "linux"))]

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The example's binary, beside this test's (`target/<profile>/examples`).
fn example() -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe.parent().and_then(|d| d.parent()).expect("target dir");
    let bin = dir.join("examples").join("behaviour");
    assert!(
        bin.exists(),
        "{} is not built: cargo build -p tickprof-testsuite --example behaviour (cargo test -p tickprof-testsuite builds it)",
        bin.display()
    );
    bin
}

/// The command for `case`, with a clean tickprof environment and `env`.
fn command(case: &str, env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(example());
    cmd.arg(case);
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("TICKPROF") {
            cmd.env_remove(k);
        }
    }
    cmd.envs(env.iter().copied());
    cmd.stdin(Stdio::null());
    cmd
}

/// Runs `cmd`, killing it after `limit`: its output and how long it took.
fn run(mut cmd: Command, limit: Duration) -> (Output, Duration) {
    cmd.stdout(Stdio::piped());
    if cmd.get_envs().all(|(k, _)| k != "TPTEST_KEEP_STDERR") {
        cmd.stderr(Stdio::piped());
    }
    let start = Instant::now();
    let mut child = cmd.spawn().expect("the example runs");
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "hung: killed after {limit:?}; stdout {:?}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let took = start.elapsed();
    (child.wait_with_output().expect("output"), took)
}

/// Runs `case` with tickprof off and on (`on` added to the environment):
/// the same exit status and stdout, `done` printed; tickprof's run is
/// returned.
fn same_as_off(case: &str, on: &[(&str, &str)], limit: Duration) -> (Output, Duration) {
    let (off, _) = run(command(case, &[("TICKPROF", "off")]), limit);
    assert_eq!(
        String::from_utf8_lossy(&off.stdout),
        "done\n",
        "{case}, off"
    );
    assert!(off.status.success(), "{case}, off: {:?}", off.status);
    let (out, took) = run(command(case, on), limit);
    assert_eq!(
        (out.status, String::from_utf8_lossy(&out.stdout)),
        (off.status, String::from_utf8_lossy(&off.stdout)),
        "{case}: stderr {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (out, took)
}

/// The exit report's first line, as the run's stderr shows it.
fn reported(out: &Output) -> bool {
    String::from_utf8_lossy(&out.stderr).contains("behaviour::work")
}

#[test]
fn a_spin_lock_allocator_busy_on_another_thread_never_hangs_the_exit() {
    for run in 0..20 {
        let (out, took) = same_as_off("spin_alloc", &[], Duration::from_secs(30));
        assert!(took < Duration::from_secs(5), "run {run}: {took:?}");
        assert!(reported(&out), "run {run}: the report is written");
    }
}

#[test]
fn the_programs_fork_handlers_never_run() {
    // A prepare handler that would wait for ever for a lock a blocked
    // thread holds.
    let (out, _) = same_as_off("atfork_lock", &[], Duration::from_secs(30));
    assert!(reported(&out));
    // A child handler that prints: its line is not on stdout.
    let (out, _) = same_as_off("atfork_print", &[], Duration::from_secs(30));
    assert!(reported(&out));
}

#[test]
fn a_closed_stderr_pipe_with_sigpipe_at_its_default_changes_nothing() {
    for on in [&[][..], &[("TICKPROF_LOG", "stderr")][..]] {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two ends; the read end is closed
        // at once (the pipe has no reader).
        unsafe {
            assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
            libc::close(fds[0]);
        }
        // SAFETY: the write end is open and owned from here on.
        let w = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fds[1]) };
        let off = {
            let mut c = command(
                "sigpipe",
                &[("TICKPROF", "off"), ("TPTEST_KEEP_STDERR", "1")],
            );
            c.stderr(Stdio::from(w.try_clone().expect("dup")));
            run(c, Duration::from_secs(30)).0
        };
        let mut env = vec![("TPTEST_KEEP_STDERR", "1")];
        env.extend_from_slice(on);
        let mut c = command("sigpipe", &env);
        c.stderr(Stdio::from(w));
        let (out, _) = run(c, Duration::from_secs(30));
        assert_eq!(off.status.code(), Some(0));
        assert_eq!(
            (out.status, &out.stdout),
            (off.status, &off.stdout),
            "{on:?}"
        );
    }
}

#[test]
fn the_copy_is_no_child_of_the_program() {
    // A thread reaping with `waitpid(-1)` and a `SIGCHLD` handler print
    // what they see: nothing, as with tickprof off.
    for _ in 0..5 {
        let (out, _) = same_as_off("children", &[], Duration::from_secs(30));
        assert!(reported(&out));
    }
}

#[test]
fn a_program_that_blocks_signals_for_a_sigwait_thread_is_sampled() {
    let (out, _) = same_as_off("sigwait", &[], Duration::from_secs(30));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(reported(&out), "{stderr}");
    assert!(!stderr.contains("the sampler has not started"), "{stderr}");
    assert!(
        stderr.contains("sampling every thread 1000 times a second"),
        "{stderr}"
    );
}

#[test]
fn marked_calls_in_signal_handlers_during_thread_exits_never_hang() {
    // 500 threads a run, each signalled without pause while it lives and
    // exits: plain, under the trace log, and counting allocations.
    let log = std::env::temp_dir().join(format!("tickprof-behaviour-{}.log", std::process::id()));
    let log = log.to_string_lossy().into_owned();
    for (case, env) in [
        ("exit_signals", vec![]),
        ("exit_signals", vec![("TICKPROF_LOG", log.as_str())]),
        ("exit_signals_alloc", vec![]),
    ] {
        for _ in 0..3 {
            let (out, _) = same_as_off(case, &env, Duration::from_secs(60));
            assert!(reported(&out), "{case} {env:?}");
        }
    }
    let _ = std::fs::remove_file(&log);
}

#[test]
fn with_the_sampler_off_every_site_stays_within_its_threads_wall_time() {
    let json = std::env::temp_dir().join(format!("tickprof-behaviour-{}.json", std::process::id()));
    let path = json.to_string_lossy().into_owned();
    let env = [("TICKPROF_SAMPLE", "0"), ("TICKPROF_OUT", path.as_str())];
    for _ in 0..3 {
        same_as_off("sigwait", &env, Duration::from_secs(30));
        let text = std::fs::read_to_string(&json).expect("the JSON report");
        let r: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        let bound = r["run"]["wall_ns"].as_u64().unwrap() * r["run"]["threads"].as_u64().unwrap();
        let sites = r["sites"].as_array().unwrap();
        assert!(!sites.is_empty());
        for s in sites {
            assert!(s["total_ns"].as_u64().unwrap() <= bound, "{s} > {bound}");
        }
    }
    let _ = std::fs::remove_file(&json);
}
