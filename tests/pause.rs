//! `pause()` / `resume()`: exact counts across a pause (calls made while
//! paused are not counted; a call that began while recording is counted
//! once), on several threads, and with `TICKPROF=off` or
//! `TICKPROF_PAUSED=on` at start-up (child processes).
#![cfg(feature = "enabled")]

#[path = "support/quiet.rs"]
mod quiet;

#[path = "support/child.rs"]
mod child;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use tickprof::profile;

/// A body `#[profile]` duplicates (the off path runs the plain copy).
#[profile]
fn leaf(x: u64) -> u64 {
    std::hint::black_box(x) + 1
}

/// A body `#[profile]` does not duplicate (it defines a `static`): one
/// guarded body, inert while paused.
#[profile]
fn single(x: u64) -> u64 {
    static RUNS: AtomicU64 = AtomicU64::new(0);
    RUNS.fetch_add(1, Ordering::Relaxed);
    std::hint::black_box(x) + 1
}

/// Begins while recording, pauses inside: counted once; its 3 `leaf`
/// calls, made while paused, are not.
#[profile]
fn spans_a_pause() {
    assert!(tickprof::pause());
    for i in 0..3 {
        leaf(i);
    }
}

/// Begins while paused, resumes inside: not counted; its 2 `leaf` calls,
/// made after the resume, are.
#[profile]
fn begins_paused() {
    assert!(tickprof::resume());
    for i in 0..2 {
        leaf(i);
    }
}

fn calls(r: &tickprof::Report, name: &str) -> u64 {
    r.sites
        .iter()
        .find(|s| s.name.ends_with(name))
        .map_or(0, |s| s.calls)
}

#[test]
fn calls_made_while_paused_are_not_counted() {
    let threads = 4;
    let barrier = Arc::new(Barrier::new(threads + 1));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                for (phase, n) in [1000, 500, 250].into_iter().enumerate() {
                    for i in 0..n {
                        leaf(i);
                        single(i);
                    }
                    if phase < 2 {
                        barrier.wait(); // done with this phase
                        barrier.wait(); // the main thread switched
                    }
                }
            })
        })
        .collect();
    barrier.wait();
    assert!(tickprof::pause());
    assert!(!tickprof::pause(), "already paused");
    barrier.wait();
    barrier.wait();
    assert!(tickprof::resume());
    assert!(!tickprof::resume(), "not paused");
    barrier.wait();
    for h in handles {
        h.join().unwrap();
    }
    // Recording: 1000 + 250 calls of each on each thread.
    let r = tickprof::report();
    assert_eq!(calls(&r, "::leaf"), 4 * 1250);
    assert_eq!(calls(&r, "::single"), 4 * 1250);
    assert_eq!(r.run.pauses, 1);
    assert!(r.run.paused_ns > 0);

    spans_a_pause();
    begins_paused();
    let r = tickprof::report();
    assert_eq!(calls(&r, "::spans_a_pause"), 1);
    assert_eq!(calls(&r, "::begins_paused"), 0);
    assert_eq!(calls(&r, "::leaf"), 4 * 1250 + 2);
    assert_eq!(r.run.pauses, 2);
    // The 2 `leaf` calls after the resume have no recorded caller.
    let spans = r.sites.iter().find(|s| s.name.ends_with("::spans_a_pause"));
    assert!(spans.is_some_and(|s| s.callees.is_empty()));
    let text = r.text(&tickprof::TextOptions::default());
    assert!(text.contains("recording paused 2 times, "), "{text}");

    // A reset zeroes the pause figures with the calls.
    tickprof::reset();
    assert_eq!(tickprof::report().run.pauses, 0);
}

/// The child's work; does nothing unless run as a child.
#[test]
fn child_workload() {
    let Ok(mode) = std::env::var("PAUSE_CHILD") else {
        return;
    };
    for i in 0..5 {
        leaf(i);
        single(i);
    }
    let resumed = tickprof::resume();
    for i in 0..3 {
        leaf(i);
        single(i);
    }
    let r = tickprof::report();
    match mode.as_str() {
        "off" => {
            assert!(!resumed);
            assert!(!tickprof::pause(), "profiling off: nothing to pause");
            assert!(r.sites.is_empty());
            assert_eq!(r.run.pauses, 0);
        }
        "paused" => {
            assert!(resumed);
            assert_eq!(calls(&r, "::leaf"), 3);
            assert_eq!(calls(&r, "::single"), 3);
            assert_eq!(r.run.pauses, 1);
            assert!(r.run.paused_ns > 0);
        }
        other => panic!("unknown mode {other}"),
    }
    println!("child ok");
}

#[test]
fn off_at_start_up_cannot_be_resumed() {
    let (out, stderr) = child::run_quiet("PAUSE_CHILD", "off", &[("TICKPROF", "off")]);
    assert!(out.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("child ok"));
}

#[test]
fn paused_at_start_up_counts_from_the_resume() {
    let (out, stderr) = child::run_quiet("PAUSE_CHILD", "paused", &[("TICKPROF_PAUSED", "on")]);
    assert!(out.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("child ok"));
}
