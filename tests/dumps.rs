//! Reports before exit, in child processes: on SIGUSR1 while the program
//! runs (total and delta), the final report on SIGTERM/SIGINT/SIGHUP with
//! `TICKPROF_ON_TERM=1` (and the signal's exit status), the behaviour
//! without it, and programs with their own handlers for the same signals.
//!
//! The child prints `phase N` on stdout when it reaches a point where the
//! parent acts, and waits for a line on stdin before going on.
#![cfg(all(feature = "enabled", unix))]

#[path = "support/quiet.rs"]
mod quiet;

#[path = "support/child.rs"]
mod child;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tickprof::profile;

const CHILD: &str = "TPTEST_DUMP_CHILD";

#[profile]
fn work() {
    std::hint::black_box(0);
}

/// Prints `phase n` and waits for the parent's line on stdin.
fn phase(n: u32) {
    say(&format!("phase {n}"));
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
}

/// The child's work; does nothing unless run as a child.
#[test]
fn child_workload() {
    let Ok(mode) = std::env::var(CHILD) else {
        return;
    };
    match mode.as_str() {
        "phases" => {
            (0..3).for_each(|_| work());
            phase(1);
            (0..5).for_each(|_| work());
            phase(2);
        }
        "until-killed" => {
            (0..3).for_each(|_| work());
            phase(1);
            loop {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        "own-handlers" => {
            let term = Arc::new(AtomicBool::new(false));
            let usr1 = Arc::new(AtomicBool::new(false));
            signal_hook::flag::register(signal_hook::consts::SIGTERM, term.clone()).unwrap();
            signal_hook::flag::register(signal_hook::consts::SIGUSR1, usr1.clone()).unwrap();
            (0..3).for_each(|_| work());
            say("ready");
            wait_for(&usr1);
            phase(1);
            (0..5).for_each(|_| work());
            say("ready again");
            wait_for(&term);
            say("own TERM handler ran");
        }
        "own-term-marker" => {
            let marker = std::env::var("MARKER").unwrap();
            let f = std::fs::File::create(marker).unwrap();
            signal_hook::low_level::pipe::register(signal_hook::consts::SIGTERM, f).unwrap();
            (0..3).for_each(|_| work());
            phase(1);
            loop {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        "every-1ns" => {
            // A period below the minimum is taken as the minimum, 100 ms.
            tickprof::dump_every(Duration::from_nanos(1));
            (0..3).for_each(|_| work());
            std::thread::sleep(Duration::from_secs(1));
        }
        "sleep-1s" => {
            (0..3).for_each(|_| work());
            std::thread::sleep(Duration::from_secs(1));
        }
        _ => {}
    }
}

fn say(what: &str) {
    println!("{what}");
    std::io::stdout().flush().unwrap();
}

fn wait_for(flag: &AtomicBool) {
    while !flag.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A running child; killed when dropped (a failed test leaves none behind).
struct Running {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Running {
    fn start(mode: &str, env: &[(&str, &str)]) -> Running {
        Running::start_ignoring(mode, env, None)
    }

    /// As [`Running::start`], with `ignored` set to `SIG_IGN` in the child
    /// before it executes (as `nohup` does for SIGHUP). The other signals
    /// the tests send start at their default action, as from a terminal,
    /// whatever the test run inherited: a shell starts a background job
    /// (`cargo test &`, a CI script run in the background) with SIGINT and
    /// SIGQUIT ignored, which a child inherits, and tickprof rightly
    /// leaves a signal the process was started ignoring ignored (a child
    /// sent SIGINT then never died, and the test waited for ever).
    fn start_ignoring(mode: &str, env: &[(&str, &str)], ignored: Option<i32>) -> Running {
        use std::os::unix::process::CommandExt;
        let mut cmd = child::child_command(CHILD, mode);
        // SAFETY: the closure only calls `signal`, which is
        // async-signal-safe, between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGUSR1] {
                    libc::signal(sig, libc::SIG_DFL);
                }
                if let Some(sig) = ignored {
                    libc::signal(sig, libc::SIG_IGN);
                }
                Ok(())
            });
        }
        cmd.envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Running {
            child,
            stdin: Some(stdin),
            stdout,
        }
    }

    /// Reads stdout up to the line `want`.
    fn expect(&mut self, want: &str) {
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.stdout.read_line(&mut line).unwrap();
            assert!(n > 0, "child's stdout ended before {want:?}");
            if line.trim_end().ends_with(want) {
                return;
            }
        }
    }

    fn go_on(&mut self) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn kill(&self, sig: &str) {
        let ok = std::process::Command::new("kill")
            .args([format!("-{sig}"), self.child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill -{sig}");
    }

    /// Waits (at most 60 s: then the child is killed and the test fails)
    /// for the exit; returns the status and stderr.
    fn finish(mut self) -> (std::process::ExitStatus, String) {
        drop(self.stdin);
        let pid = self.child.id();
        let done = Arc::new(AtomicBool::new(false));
        let watchdog = {
            let done = done.clone();
            std::thread::spawn(move || {
                let deadline = Instant::now() + Duration::from_secs(60);
                while !done.load(Ordering::Relaxed) {
                    if Instant::now() > deadline {
                        // SAFETY: a plain system call on our own child.
                        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
                        return true;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                false
            })
        };
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut self.stdout, &mut rest);
        let out = self.child.wait_with_output().unwrap();
        done.store(true, Ordering::Relaxed);
        assert!(
            !watchdog.join().unwrap(),
            "the child did not exit within 60 s: killed"
        );
        (
            out.status,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tickprof-dumps-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Waits (at most 20 s) for `path` to appear, then returns the calls of
/// `work` in it (a JSON report) and removes it.
fn take_calls(path: &Path) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !path.exists() {
        assert!(Instant::now() < deadline, "{path:?} not written");
        std::thread::sleep(Duration::from_millis(5));
    }
    let calls = calls_in(path);
    std::fs::remove_file(path).unwrap();
    calls
}

fn calls_in(path: &Path) -> u64 {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    v["sites"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"].as_str().is_some_and(|n| n.ends_with("::work")))
        .map(|s| s["calls"].as_u64().unwrap())
        .sum()
}

/// Two SIGUSR1 dumps while the child runs, then its exit report.
fn usr1_dumps(mode: &str) -> [u64; 3] {
    let dir = tmp_dir(mode);
    let out = dir.join("p.json");
    let out_s = out.to_str().unwrap();
    let env = [
        ("TICKPROF_DUMP_SIGNAL", "USR1"),
        ("TICKPROF_DUMP", mode),
        ("TICKPROF_OUT", out_s),
    ];
    let mut c = Running::start("phases", &env);
    c.expect("phase 1");
    c.kill("USR1");
    let first = take_calls(&out);
    c.go_on();
    c.expect("phase 2");
    c.kill("USR1");
    let second = take_calls(&out);
    c.go_on();
    let (status, err) = c.finish();
    assert!(status.success(), "{err}");
    assert_eq!(
        err.matches("tickprof: report 1 (SIGUSR1;").count(),
        1,
        "{err}"
    );
    assert_eq!(
        err.matches("tickprof: report 2 (SIGUSR1;").count(),
        1,
        "{err}"
    );
    let last = calls_in(&out);
    std::fs::remove_dir_all(&dir).unwrap();
    [first, second, last]
}

#[test]
fn sigusr1_dumps_the_run_so_far_while_it_runs() {
    assert_eq!(usr1_dumps("total"), [3, 8, 8]);
}

#[test]
fn delta_dumps_sum_to_the_final_report() {
    let [a, b, last] = usr1_dumps("delta");
    assert_eq!([a, b], [3, 5]);
    assert_eq!(a + b, last);
}

#[test]
fn on_term_writes_the_final_report_then_dies_of_the_signal() {
    for (sig, number) in [("TERM", 15), ("INT", 2), ("HUP", 1)] {
        let dir = tmp_dir(sig);
        let out = dir.join("p.json");
        let env = [
            ("TICKPROF_ON_TERM", "1"),
            ("TICKPROF_OUT", out.to_str().unwrap()),
        ];
        let mut c = Running::start("until-killed", &env);
        c.expect("phase 1");
        c.kill(sig);
        let (status, err) = c.finish();
        assert_eq!(status.signal(), Some(number), "{status:?} {err}");
        assert_eq!(calls_in(&out), 3);
        assert_eq!(
            err.matches(&format!("tickprof: SIG{sig}: final report"))
                .count(),
            1
        );
        assert_eq!(
            err.matches("tickprof: pid ").count(),
            1,
            "one report: {err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn on_term_leaves_a_signal_the_process_was_started_ignoring_ignored() {
    let dir = tmp_dir("nohup");
    let out = dir.join("p.json");
    let env = [
        ("TICKPROF_ON_TERM", "1"),
        ("TICKPROF_OUT", out.to_str().unwrap()),
    ];
    let mut c = Running::start_ignoring("until-killed", &env, Some(libc::SIGHUP));
    c.expect("phase 1");
    c.kill("HUP");
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        c.child.try_wait().unwrap().is_none(),
        "SIGHUP, ignored as under nohup, ended the process"
    );
    assert!(!out.exists(), "no report on an ignored signal");
    c.kill("TERM");
    let (status, err) = c.finish();
    assert_eq!(status.signal(), Some(15), "{err}");
    assert_eq!(calls_in(&out), 3);
    assert!(!err.contains("SIGHUP"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn without_on_term_a_signal_kills_as_before_with_no_report() {
    let dir = tmp_dir("plain-term");
    let out = dir.join("p.json");
    let mut c = Running::start("until-killed", &[("TICKPROF_OUT", out.to_str().unwrap())]);
    c.expect("phase 1");
    c.kill("TERM");
    let (status, err) = c.finish();
    assert_eq!(status.signal(), Some(15));
    assert!(!out.exists());
    assert!(!err.contains("tickprof"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_program_with_its_own_handlers_keeps_them() {
    let dir = tmp_dir("own");
    let out = dir.join("p.json");
    let env = [
        ("TICKPROF_DUMP_SIGNAL", "USR1"),
        ("TICKPROF_OUT", out.to_str().unwrap()),
    ];
    let mut c = Running::start("own-handlers", &env);
    c.expect("ready");
    c.kill("USR1");
    c.expect("phase 1"); // the program's own SIGUSR1 handler ran
    assert_eq!(take_calls(&out), 3, "tickprof's dump on the same signal");
    c.go_on();
    c.expect("ready again");
    c.kill("TERM");
    c.expect("own TERM handler ran");
    let (status, err) = c.finish();
    assert!(
        status.success(),
        "the program's own SIGTERM handler let it exit: {err}"
    );
    assert_eq!(calls_in(&out), 8, "the exit report, as without dumps");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn on_term_runs_the_programs_own_handler_too() {
    let dir = tmp_dir("own-term");
    let out = dir.join("p.json");
    let marker = dir.join("marker");
    let env = [
        ("TICKPROF_ON_TERM", "1"),
        ("TICKPROF_OUT", out.to_str().unwrap()),
        ("MARKER", marker.to_str().unwrap()),
    ];
    let mut c = Running::start("own-term-marker", &env);
    c.expect("phase 1");
    c.kill("TERM");
    let (status, err) = c.finish();
    assert_eq!(status.signal(), Some(15), "{err}");
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "X");
    assert_eq!(calls_in(&out), 3);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The stderr headings of the dumps written.
fn dumps_in(stderr: &str) -> usize {
    stderr
        .lines()
        .filter(|l| l.starts_with("tickprof: report ") && l.contains("TICKPROF_DUMP_INTERVAL"))
        .count()
}

#[test]
fn a_period_below_the_minimum_is_refused_or_raised_not_a_flood() {
    // The variable: one warning, no periodic report.
    let (out, err) = child::run(CHILD, "sleep-1s", &[("TICKPROF_DUMP_INTERVAL", "1ns")]);
    assert!(out.status.success(), "{err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(
        warnings,
        ["tickprof: warning: TICKPROF_DUMP_INTERVAL=\"1ns\" is shorter than the minimum, 100ms; using the default (unset, none)"]
    );
    assert_eq!(dumps_in(&err), 0, "{err}");
    // The API: the period raised to 100 ms, so at most 11 reports in the
    // child's second (without the floor, one per report written).
    let (out, err) = child::run(CHILD, "every-1ns", &[]);
    assert!(out.status.success(), "{err}");
    let n = dumps_in(&err);
    assert!((1..=11).contains(&n), "{n} periodic reports in 1 s");
    // A period too long for the clock: no report, no panic.
    let (out, err) = child::run(
        CHILD,
        "sleep-1s",
        &[("TICKPROF_DUMP_INTERVAL", "3000000000000000h")],
    );
    assert!(out.status.success(), "{err}");
    assert_eq!(dumps_in(&err), 0, "{err}");
    assert!(
        !err.contains("warning") && !err.contains("panicked"),
        "{err}"
    );
}
