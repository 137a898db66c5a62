//! The trace log (`TICKPROF_LOG`): exact output of a small deterministic
//! program (durations masked), filters, depth, threshold, threads,
//! unwinding, bad settings, and the offline replay of a `.trace.json`.
//!
//! Each case re-runs this test binary as a child process (with
//! `TPTEST_LOG_CHILD` set) that runs `child_workload` and writes its log.
#![cfg(feature = "enabled")]

use crate::support::child;

use crate::support::spin as spin_support;

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;
use tickprof::profile;

const CHILD: &str = "TPTEST_LOG_CHILD";

#[profile]
fn leaf() -> u32 {
    black_box(1)
}

#[profile]
fn middle() -> u32 {
    leaf() + leaf()
}

#[profile]
fn outer() -> u32 {
    let a = leaf();
    let b = middle();
    {
        tickprof::prof_scope!("block");
        black_box(a);
    }
    a + b
}

#[profile]
fn fails() {
    leaf();
    panic!("expected panic in fails");
}

#[profile]
fn slow() {
    spin_support::spin(Duration::from_millis(3));
    leaf();
}

/// The child's program; does nothing unless run as a child.
#[test]
fn child_workload() {
    let Ok(mode) = std::env::var(CHILD) else {
        return;
    };
    if mode == "fork" {
        return fork_scenario();
    }
    outer();
    std::panic::set_hook(Box::new(|_| {}));
    assert!(std::panic::catch_unwind(fails).is_err());
    std::thread::Builder::new()
        .name("worker".into())
        .spawn(middle)
        .unwrap()
        .join()
        .unwrap();
    slow();
}

#[cfg(target_os = "linux")]
extern "C" {
    fn fork() -> i32;
    fn waitpid(pid: i32, status: *mut i32, options: i32) -> i32;
}

/// `outer()`, then a fork: the child calls `leaf()` and exits, the parent
/// waits for it. The child's log must not repeat the parent's lines.
fn fork_scenario() {
    outer();
    #[cfg(target_os = "linux")]
    {
        // SAFETY: the child makes one marked call and exits (running the
        // exit handlers, which write its log); no lock it needs is held.
        let pid = unsafe { fork() };
        assert!(pid >= 0);
        if pid == 0 {
            leaf();
            std::process::exit(0);
        }
        let mut status = 0;
        // SAFETY: waits for the child just forked.
        unsafe { waitpid(pid, &mut status, 0) };
        assert_eq!(status, 0);
    }
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tickprof-log-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// Runs the child with `env`, its log going to a file; returns the log
/// (durations masked) and the child's stderr.
fn run(name: &str, env: &[(&str, &str)]) -> (String, String) {
    run_mode("1", name, env)
}

fn run_mode(mode: &str, name: &str, env: &[(&str, &str)]) -> (String, String) {
    let path = tmp(&format!("{name}.log"));
    let path_str = path.to_str().unwrap();
    let env: Vec<(&str, &str)> = [("TICKPROF_LOG", path_str)]
        .into_iter()
        .chain(env.iter().copied())
        .collect();
    let (out, stderr) = child::run_quiet(CHILD, mode, &env);
    assert!(out.status.success(), "{stderr}");
    let log = std::fs::read_to_string(&path).unwrap();
    (mask(&log), stderr)
}

/// Replaces every duration with `<t>` and drops the module's path (and
/// the test's, in the thread's name).
fn mask(log: &str) -> String {
    let mut out = String::new();
    for line in log.lines() {
        let line = line
            .replace(concat!(module_path!(), "::"), "")
            .replace("trace_log::", "");
        let masked = if let Some(i) = line.find("();  ") {
            let (head, tail) = line.split_at(i + 5);
            let rest = if tail.ends_with(" unwound") {
                " unwound"
            } else {
                ""
            };
            format!("{head}<t>{rest}")
        } else if let (Some(i), Some(j)) = (line.find("} "), line.find(" /* ")) {
            format!("{}<t>{}", &line[..i + 2], &line[j..])
        } else {
            line
        };
        out.push_str(&masked);
        out.push('\n');
    }
    out
}

#[test]
fn golden_output_of_a_small_program() {
    let (log, _) = run("golden", &[]);
    assert_eq!(log, include_str!("golden/trace_log.txt"));
}

#[test]
fn filter_notrace_and_depth() {
    let (log, _) = run("filter", &[("TICKPROF_LOG_FILTER", "middle")]);
    assert_eq!(
        log,
        "# thread 2: worker\n[2] middle() {\n[2]   leaf();  <t>\n[2]   leaf();  <t>\n\
         [2] } <t> /* middle */\n# thread 1: child_workload\n[1] middle() {\n\
         [1]   leaf();  <t>\n[1]   leaf();  <t>\n[1] } <t> /* middle */\n"
    );
    let (log, _) = run(
        "notrace",
        &[
            ("TICKPROF_LOG_NOTRACE", "*::middle,leaf"),
            ("TICKPROF_LOG_TID", "1"),
        ],
    );
    assert_eq!(
        log,
        "# thread 1: child_workload\n[1] outer() {\n[1]   outer::block();  <t>\n\
         [1] } <t> /* outer */\n[1] fails();  <t> unwound\n[1] slow();  <t>\n"
    );
    let (log, _) = run(
        "depth",
        &[("TICKPROF_LOG_DEPTH", "1"), ("TICKPROF_LOG_TID", "2")],
    );
    assert_eq!(log, "# thread 2: worker\n[2] middle();  <t>\n");
}

#[test]
fn threshold_hides_faster_calls_with_their_subtrees() {
    let (log, _) = run("threshold", &[("TICKPROF_LOG_THRESHOLD", "1ms")]);
    assert_eq!(
        log,
        "# thread 2: worker\n# thread 1: child_workload\n[1] slow();  <t>\n"
    );
}

#[test]
fn bad_settings_warn_once_naming_the_variable() {
    let (log, err) = run(
        "bad",
        &[
            ("TICKPROF_LOG_FILTER", "a,,b"),
            ("TICKPROF_LOG_DEPTH", "deep"),
        ],
    );
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 2, "{err}");
    assert!(warnings[0].contains("TICKPROF_LOG_FILTER"), "{err}");
    assert!(warnings[1].contains("TICKPROF_LOG_DEPTH"), "{err}");
    assert_eq!(log, include_str!("golden/trace_log.txt"), "defaults apply");
}

#[test]
fn the_log_goes_to_stderr_too() {
    let mut cmd = child::child_command(CHILD, "1");
    cmd.env("TICKPROF_STDERR", "0")
        .env("TICKPROF_LOG", "stderr");
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success());
    assert!(
        err.contains(concat!("[1] ", module_path!(), "::outer() {\n")),
        "{err}"
    );
}

#[test]
fn a_recorded_trace_replays_as_the_same_log() {
    let trace = tmp("replay.trace.json");
    let (live, _) = run("replay", &[("TICKPROF_OUT", trace.to_str().unwrap())]);
    let json = std::fs::read_to_string(&trace).unwrap();
    let mut out = Vec::new();
    tickprof::log::replay_trace_json(&json, &mut out, &tickprof::log::LogOptions::default())
        .unwrap();
    let replayed = mask(&String::from_utf8(out).unwrap());
    // The trace has no unwinding flag, and lists threads by number.
    let mut live_sorted: Vec<&str> = live.lines().collect();
    live_sorted.sort_by_key(|l| l.starts_with("[2]") || l.ends_with("worker"));
    let live_sorted = live_sorted.join("\n").replace(" unwound", "") + "\n";
    assert_eq!(replayed, live_sorted);
    let mut opts = tickprof::log::LogOptions::default();
    opts.filter = vec!["middle".into()];
    opts.tids = vec![2];
    let mut out = Vec::new();
    tickprof::log::replay_trace_json(&json, &mut out, &opts).unwrap();
    assert_eq!(
        mask(&String::from_utf8(out).unwrap()),
        "# thread 2: worker\n[2] middle() {\n[2]   leaf();  <t>\n[2]   leaf();  <t>\n\
         [2] } <t> /* middle */\n"
    );
    assert!(tickprof::log::replay_trace_json("{", &mut Vec::new(), &opts).is_err());
}

#[cfg(target_os = "linux")]
#[test]
fn a_forked_child_logs_only_its_own_calls() {
    let (log, _) = run_mode("fork", "fork", &[]);
    assert_eq!(
        log,
        "[1] leaf();  <t>\n# thread 1: child_workload\n[1] outer() {\n[1]   leaf();  <t>\n\
         [1]   middle() {\n[1]     leaf();  <t>\n[1]     leaf();  <t>\n[1]   } <t> /* middle */\n\
         [1]   outer::block();  <t>\n[1] } <t> /* outer */\n"
    );
}
