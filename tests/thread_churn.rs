//! Bounded retention across threads: finished threads are merged by name
//! into at most `TICKPROF_THREADS_KEPT` rows (plus one `<other threads>`
//! row), the merged totals keep every call, and memory does not grow with
//! the number of threads that ever lived.
//!
//! Each test re-runs this binary as a child process (`child_workload`, with
//! `TPTEST_CHURN_CHILD=<scenario>`) that checks its own report and exits
//! non-zero on a failed check. `scripts/thread_fork_stress.sh` runs the
//! `churn` scenario at full size (200,000 threads) under `/usr/bin/time`.
#![cfg(feature = "enabled")]

use crate::support::child;

use tickprof::profile;

const CHILD: &str = "TPTEST_CHURN_CHILD";
/// The default `TICKPROF_THREADS_KEPT`.
const KEPT: usize = 64;

#[profile]
fn on_main() {}

#[profile]
fn work(depth: u32) -> u32 {
    if depth == 0 {
        0
    } else {
        work(depth - 1) + 1
    }
}

/// Resident set size of this process in bytes (Linux), 0 elsewhere.
fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

/// Runs `n` threads one after the other; thread `i` is named by `name(i)`
/// (unnamed for `None`) and makes `work(depth)` once (`depth + 1` calls).
fn churn(n: u64, depth: u32, name: impl Fn(u64) -> Option<String>) {
    for i in 0..n {
        let b = std::thread::Builder::new();
        let b = match name(i) {
            Some(s) => b.name(s),
            None => b,
        };
        b.spawn(move || work(depth)).unwrap().join().unwrap();
    }
}

fn calls_of(r: &tickprof::Report, suffix: &str) -> u64 {
    r.find(suffix).map_or(0, |s| s.calls)
}

/// The child's work; does nothing unless run as a child.
#[test]
fn child_workload() {
    let Ok(mode) = std::env::var(CHILD) else {
        return;
    };
    // The first marked call (and the start-up) on the main thread.
    on_main();
    let parts: Vec<&str> = mode.split(':').collect();
    match parts.as_slice() {
        // Full size, for the stress script: one marked call per thread,
        // half of them named `conn`, half unnamed.
        ["churn", n] => {
            let n: u64 = n.parse().unwrap();
            let start = std::time::Instant::now();
            churn(n, 0, |i| (i % 2 == 0).then(|| "conn".to_owned()));
            let spawned = start.elapsed();
            let start = std::time::Instant::now();
            let r = tickprof::report();
            eprintln!(
                "churn: {n} threads in {spawned:?}; report() in {:?}; rss {} KB; {} thread rows",
                start.elapsed(),
                rss() / 1024,
                r.threads.len()
            );
            if !r.sites.is_empty() {
                assert_eq!(calls_of(&r, "work"), n);
                assert!(r.threads.len() <= KEPT + 2);
            }
        }
        // Memory: 2,000 threads with 33-node trees; what is retained per
        // thread after the first 200 must stay far below one tree per thread.
        ["memory"] => {
            churn(200, 32, |_| None);
            let before = rss();
            churn(1_800, 32, |i| (i % 3 == 0).then(|| format!("w{}", i % 5)));
            let after = rss();
            let per_thread = after.saturating_sub(before) / 1_800;
            eprintln!("rss {before} -> {after} bytes: {per_thread} bytes per thread");
            // One thread's tree is 33 nodes (several KB); the rows hold no
            // per-thread copy, so what grows is allocator noise.
            if before > 0 {
                assert!(per_thread < 256, "{per_thread} bytes retained per thread");
            }
            let r = tickprof::report();
            assert_eq!(calls_of(&r, "work"), 2_000 * 33);
            assert!(r.threads.len() <= KEPT + 2);
            assert_eq!(r.run.threads, 2_001);
        }
        // Rows: merged by name, bounded, counted; totals exact.
        ["rows"] => {
            // TICKPROF_THREADS_KEPT=2: names a, b get rows; c and the
            // unnamed threads go to `<other threads>`.
            let names = ["a", "a", "b", "c", "c", "", "a"];
            churn(names.len() as u64, 1, |i| {
                Some(names[i as usize].to_owned()).filter(|s| !s.is_empty())
            });
            let r = tickprof::report();
            assert_eq!(calls_of(&r, "work"), 7 * 2);
            assert_eq!(r.run.threads, 8, "7 finished threads and the main one");
            let row = |name: &str| {
                let t = r.threads.iter().find(|t| t.name == name).unwrap();
                let calls: u64 = t.sites.iter().map(|s| s.calls).sum();
                (t.finished, t.count, calls)
            };
            assert_eq!(row("a"), (true, 3, 3 * 2));
            assert_eq!(row("b"), (true, 1, 2));
            assert_eq!(row("<other threads>"), (true, 3, 3 * 2));
            assert_eq!(r.threads.len(), 4, "a, b, <other threads> and main");
            let main = r.threads.iter().find(|t| !t.finished).unwrap();
            assert_eq!(main.count, 1);
            // The per-thread breakdown and the JSON say so too.
            let text = r.text(&tickprof::TextOptions::default().with_threads(true));
            assert!(
                text.contains("-- threads a (x3 finished, first #"),
                "{text}"
            );
            assert!(text.contains("-- thread b (#"), "{text}");
            assert!(
                text.contains("-- threads <other threads> (x3 finished"),
                "{text}"
            );
            // A reset forgets the rows.
            tickprof::reset();
            churn(1, 0, |_| Some("c".to_owned()));
            let r = tickprof::report();
            assert_eq!(row_names(&r), ["c"]);
        }
        other => panic!("unknown scenario {other:?}"),
    }
}

/// The names of the finished rows with calls.
fn row_names(r: &tickprof::Report) -> Vec<&str> {
    r.threads
        .iter()
        .filter(|t| t.finished)
        .map(|t| t.name.as_str())
        .collect()
}

fn run(mode: &str, env: &[(&str, &str)]) -> String {
    let mut cmd = child::child_command(CHILD, mode);
    cmd.env("TICKPROF_STDERR", "0");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{mode}: {stdout}\n{stderr}");
    stderr
}

#[test]
fn finished_threads_merge_by_name_into_bounded_rows() {
    run("rows", &[("TICKPROF_THREADS_KEPT", "2")]);
}

#[test]
fn memory_does_not_grow_with_finished_threads() {
    run("memory", &[]);
}

#[test]
fn many_threads_keep_exact_totals_and_bounded_rows() {
    run("churn:2000", &[]);
}
