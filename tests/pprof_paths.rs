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

#[path = "support/child.rs"]
mod child;
#[path = "support/pprof_proto.rs"]
mod pprof_proto;

use pprof_proto::{unstore, Profile};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tickprof::profile;

#[global_allocator]
static A: tickprof::Alloc = tickprof::Alloc::system();

const CHILD: &str = "TPTEST_PPROF_PATHS_CHILD";
const DONE: &str = "tickprof-pprof-paths-child: done";
const PATIENCE: Duration = Duration::from_secs(60);

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
    if std::env::var(CHILD).is_err() {
        return;
    }
    let mut out = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        if let Some(n) = line.strip_prefix("work ") {
            (0..n.parse::<u32>().unwrap()).for_each(|_| allocating());
            writeln!(out, "{DONE}").unwrap();
            out.flush().unwrap();
        } else {
            std::process::exit(0);
        }
    }
}

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    port: u16,
}

impl Server {
    fn start() -> Server {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut cmd = child::child_command(CHILD, "1");
        cmd.env("TICKPROF_HTTP", port.to_string())
            .env("TICKPROF_STDERR", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let s = Server {
            child,
            stdin,
            stdout,
            port,
        };
        let start = Instant::now();
        while s.get_raw("HEAD /debug/pprof/goroutine").map(|r| r.0) != Some(200) {
            assert!(start.elapsed() < PATIENCE, "the server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        s
    }

    fn work(&mut self, n: u32) {
        writeln!(self.stdin, "work {n}").unwrap();
        let mut line = String::new();
        while !line.trim_end().ends_with(DONE) {
            line.clear();
            assert_ne!(self.stdout.read_line(&mut line).unwrap(), 0, "child ended");
        }
    }

    fn get_raw(&self, request_line: &str) -> Option<(u16, Vec<u8>)> {
        get_at(self.port, request_line)
    }

    /// `GET path`, which must answer `200`: the decoded profile.
    fn profile(&self, path: &str) -> Profile {
        let (status, body) = self.get_raw(&format!("GET {path}")).expect("an answer");
        assert_eq!(status, 200, "{path}: {}", String::from_utf8_lossy(&body));
        prost::Message::decode(unstore(&body).as_slice()).unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends `request_line` to the child on `port`; its status and body.
fn get_at(port: u16, request_line: &str) -> Option<(u16, Vec<u8>)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    write!(s, "{request_line} HTTP/1.1\r\nHost: x\r\n\r\n").ok()?;
    s.set_read_timeout(Some(PATIENCE)).ok()?;
    let mut all = Vec::new();
    s.read_to_end(&mut all).ok()?;
    let end = all.windows(4).position(|w| w == b"\r\n\r\n")?;
    let status = std::str::from_utf8(&all[9..12]).ok()?.parse().ok()?;
    Some((status, all[end + 4..].to_vec()))
}

/// The sum of value `index` over samples whose leaf is `allocating`.
fn leaf_sum(p: &Profile, index: usize) -> i64 {
    let names: HashMap<u64, &str> = p.function.iter().map(|f| (f.id, p.s(f.name))).collect();
    let loc: HashMap<u64, &str> = p
        .location
        .iter()
        .map(|l| (l.id, names[&l.line[0].function_id]))
        .collect();
    p.sample
        .iter()
        .filter(|s| loc[&s.location_id[0]].ends_with("::allocating"))
        .map(|s| s.value[index])
        .sum()
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
    let mut s = Server::start();
    s.work(7);
    let before = now_ns();
    let p = s.profile("/debug/pprof/profile");
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
        let a = s.profile("/debug/pprof/allocs");
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
        let p = s.profile(path);
        assert_eq!(p.types(), types, "{path}");
        assert!(p.sample.is_empty(), "{path}");
        check_metadata(&p, *types.last().unwrap());
        assert_eq!(p.comment.len(), 1, "{path}");
        assert!(p.s(p.comment[0]).starts_with("tickprof: no "), "{path}");
        // A `?seconds=N` is checked, and answered at once.
        assert_eq!(s.get_raw(&format!("GET {path}?seconds=0")).unwrap().0, 400);
        assert_eq!(s.get_raw(&format!("HEAD {path}")).unwrap(), (200, vec![]));
    }
}

#[test]
fn a_profile_in_flight_holds_no_other_path() {
    let mut s = Server::start();
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
        let p = s.profile(path);
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
    let p: Profile = prost::Message::decode(unstore(&body).as_slice()).unwrap();
    assert_eq!(leaf_sum(&p, 2), 4, "the calls made during the 3 s");
}
