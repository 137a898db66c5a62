//! The five paths continuous-profiling agents scrape, served by a child
//! process with `tickprof::Alloc` installed: `/debug/pprof/profile` and
//! `/debug/pprof/allocs` carry the exact counts of the child's marked
//! calls and allocations, `block`, `mutex` and `goroutine` are valid empty
//! profiles of Go's sample types with a comment saying why; every profile
//! has its `period_type`, `period`, `time_nanos`, `duration_nanos` and the
//! program's path as its mapping's file name. A `?seconds=N` request in
//! flight does not hold the other paths: they are answered before it ends
//! (an ordering, not a timing).
#![cfg(all(feature = "enabled", unix))]

use crate::support::http;
use crate::support::pprof_proto;

use http::Server;
use pprof_proto::Profile;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tickprof::profile;

// tickprof's counting allocator is this binary's (`tests/all.rs`).

const CHILD: &str = "TPTEST_PPROF_PATHS_CHILD";

/// Three allocations a call.
#[profile]
fn allocating() {
    for i in 0..3u64 {
        std::hint::black_box(Box::new([i; 4]));
    }
}

/// The child: `work N` makes N calls of `allocating`.
#[test]
fn child_workload() {
    if std::env::var(CHILD).is_ok() {
        http::child_loop(|n| (0..n).for_each(|_| allocating()));
    }
}

fn start() -> Server {
    // The counting allocator: the profiles' allocation sample types.
    Server::start(
        CHILD,
        &[(http::child::ALLOCATOR, "counting")],
        "/debug/pprof/goroutine",
    )
}

/// `METHOD target` (`request_line` without its version) on `port`: its
/// status and body, if it answers.
fn get_at(port: u16, request_line: &str) -> Option<(u16, Vec<u8>)> {
    let raw = format!("{request_line} HTTP/1.1\r\nHost: x\r\n\r\n");
    http::request(port, &raw).map(|a| (a.status, a.body))
}

/// `GET path`, which must answer `200`: the decoded profile.
fn profile(s: &Server, path: &str) -> Profile {
    let a = s.get(path);
    assert_eq!(a.status, 200, "{path}: {}", a.text());
    Profile::from_gz(&a.body)
}

/// The sum of value `index` over samples whose leaf is `allocating`.
fn leaf_sum(p: &Profile, index: usize) -> i64 {
    let (kind, unit) = p.types()[index];
    p.leaf_sum("::allocating", (kind, unit))
}

fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64
}

/// `period_type`, `period`, the mapping's file (the child's executable).
fn check_metadata(p: &Profile, period: (&str, &str)) {
    let pt = p.period_type.as_ref().expect("period_type");
    assert_eq!((p.s(pt.r#type), p.s(pt.unit)), period);
    assert_eq!(p.period, 1);
    assert_eq!(p.mapping.len(), 1);
    let exe = std::env::current_exe().unwrap();
    assert_eq!(p.s(p.mapping[0].filename), exe.to_string_lossy());
}

#[test]
fn every_agent_path_answers_a_valid_profile_with_metadata() {
    let mut s = start();
    s.work(7);
    let before = now_ns();
    let p = profile(&s, "/debug/pprof/profile");
    assert_eq!(
        p.types(),
        [
            ("alloc_objects", "count"),
            ("alloc_space", "bytes"),
            ("calls", "count"),
            ("time", "nanoseconds")
        ]
    );
    check_metadata(&p, ("calls", "count"));
    assert_eq!(leaf_sum(&p, 2), 7, "calls");
    assert_eq!(leaf_sum(&p, 0), 21, "allocations");
    assert!(p.duration_nanos > 0);
    // time_nanos is the start of the profile: now minus its duration.
    assert!(p.time_nanos > 0 && p.time_nanos <= now_ns() - p.duration_nanos + 1);
    assert!(p.time_nanos + p.duration_nanos >= before - 1_000_000_000);
    assert!(p.comment.is_empty());

    // allocs: the whole run (cumulative, as Go's), allocation types only.
    s.work(5);
    for _ in 0..2 {
        let a = profile(&s, "/debug/pprof/allocs");
        assert_eq!(
            a.types(),
            [("alloc_objects", "count"), ("alloc_space", "bytes")]
        );
        check_metadata(&a, ("alloc_space", "bytes"));
        assert_eq!(a.s(a.default_sample_type), "alloc_space");
        assert_eq!(leaf_sum(&a, 0), 36, "12 calls, 3 allocations each");
        assert_eq!(leaf_sum(&a, 1), 36 * 32, "32 bytes each");
    }

    // No such data: a valid empty profile of Go's types, saying why.
    for (path, types) in [
        (
            "/debug/pprof/block",
            vec![("contentions", "count"), ("delay", "nanoseconds")],
        ),
        (
            "/debug/pprof/mutex",
            vec![("contentions", "count"), ("delay", "nanoseconds")],
        ),
        ("/debug/pprof/goroutine", vec![("goroutine", "count")]),
    ] {
        let p = profile(&s, path);
        assert_eq!(p.types(), types, "{path}");
        assert!(p.sample.is_empty(), "{path}");
        check_metadata(&p, *types.last().unwrap());
        assert_eq!(p.comment.len(), 1, "{path}");
        assert!(p.s(p.comment[0]).starts_with("tickprof: no "), "{path}");
        // A `?seconds=N` is checked, and answered at once.
        assert_eq!(
            get_at(s.port, &format!("GET {path}?seconds=0")).unwrap().0,
            400
        );
        assert_eq!(
            get_at(s.port, &format!("HEAD {path}")).unwrap(),
            (200, vec![])
        );
    }
}

#[test]
fn a_profile_in_flight_holds_no_other_path() {
    let mut s = start();
    s.work(3);
    let port = s.port;
    let finished = Arc::new(AtomicBool::new(false));
    let slow = {
        let finished = Arc::clone(&finished);
        std::thread::spawn(move || {
            let r = get_at(port, "GET /debug/pprof/profile?seconds=3");
            finished.store(true, Ordering::SeqCst);
            r
        })
    };
    // Let the slow request arrive first: once it has taken its start
    // capture, calls made now are in its window.
    std::thread::sleep(Duration::from_millis(500));
    s.work(4);
    for path in [
        "/debug/pprof/allocs",
        "/debug/pprof/goroutine",
        "/debug/pprof/block",
        "/debug/pprof/profile",
    ] {
        let p = profile(&s, path);
        assert!(
            !finished.load(Ordering::SeqCst),
            "{path} was answered after the ?seconds=3 profile"
        );
        if path == "/debug/pprof/profile" {
            assert_eq!(leaf_sum(&p, 2), 7, "the delta since the start");
        }
    }
    let (status, body) = slow.join().unwrap().expect("an answer");
    assert_eq!(status, 200);
    let p = Profile::from_gz(&body);
    assert_eq!(leaf_sum(&p, 2), 4, "the calls made during the 3 s");
}
