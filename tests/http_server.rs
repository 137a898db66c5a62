//! `TICKPROF_HTTP` against hostile and careless clients, in child
//! processes: idle and byte-a-second clients and a `?seconds=N` request do
//! not delay a normal request, and the first two are cut off at the head
//! deadline; bad `seconds` values get
//! `400` and leave the delta base where it was; a 1 MB head gets a `431`
//! the client reads (no reset); unknown paths, bad request lines and other
//! methods get `404`/`400`/`405`; connections beyond the cap get `503` and
//! the server recovers; the program's exit code is its own.
//!
//! The child makes marked calls when the parent writes `work N` on its
//! stdin (and answers `done`), and exits with `exit C`. Assertions are on
//! status codes and on call counts in the decoded profiles; the only
//! bounds on time are generous (well under a slow client's lifetime).
#![cfg(all(feature = "enabled", unix))]

use crate::support::http;
use crate::support::pprof_proto;

use http::{read_answer, Server, PATIENCE};
use pprof_proto::Profile;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const CHILD: &str = "TPTEST_HTTP_CHILD";
const PROFILE: &str = "/debug/pprof/profile";
/// The server's cap on connections whose head is arriving.
const MAX_PENDING: usize = 512;

/// The child: `work N` makes N marked calls, `exit C` exits with C.
#[test]
fn child_workload() {
    if std::env::var(CHILD).is_ok() {
        http::child_loop(|n| (0..n).for_each(|_| http::work()));
    }
}

fn start() -> Server {
    Server::start(CHILD, &[], PROFILE)
}

/// The calls of `work` in a `.pb.gz` profile.
fn work_calls(gz: &[u8]) -> i64 {
    let p = Profile::from_gz(gz);
    assert_eq!(p.types()[0], ("calls", "count"));
    p.leaf_sum("::work", ("calls", "count"))
}

/// The calls to `work` in a delta scrape.
fn delta_calls(server: &Server) -> i64 {
    let a = server.get(PROFILE);
    assert_eq!(a.status, 200, "{}", a.text());
    work_calls(&a.body)
}

/// The status of the answer to `raw`, which must come.
fn status_of(server: &Server, raw: &str) -> u16 {
    server.request(raw).expect("an answer").status
}

/// Whether `s` is still open with nothing to read.
fn still_waiting(s: &TcpStream) -> bool {
    s.set_nonblocking(true).unwrap();
    let r = s.peek(&mut [0u8; 1]);
    s.set_nonblocking(false).unwrap();
    matches!(r, Err(e) if e.kind() == ErrorKind::WouldBlock)
}

#[test]
fn slow_and_idle_clients_do_not_delay_a_normal_request() {
    let mut server = start();
    let idle: Vec<TcpStream> = (0..40).map(|_| server.connect()).collect();
    // A client that sends its request a byte per second (a minute's worth).
    let slow_request = format!(
        "GET {PROFILE} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: one byte a second\r\n\r\n"
    );
    let mut slow = server.connect();
    let slow_done = Arc::new(AtomicBool::new(false));
    let slow_thread = {
        let done = Arc::clone(&slow_done);
        std::thread::spawn(move || {
            let mut sent = 0;
            let mut answer = Vec::new();
            for b in slow_request.bytes() {
                if slow.write_all(&[b]).is_err() {
                    break;
                }
                sent += 1;
                std::thread::sleep(Duration::from_secs(1));
                slow.set_nonblocking(true).unwrap();
                let got = slow.read_to_end(&mut answer);
                slow.set_nonblocking(false).unwrap();
                if !answer.is_empty() || matches!(got, Ok(0)) {
                    break;
                }
            }
            slow.set_read_timeout(Some(PATIENCE)).unwrap();
            let _ = slow.read_to_end(&mut answer);
            done.store(true, Ordering::SeqCst);
            (
                sent,
                slow_request.len(),
                String::from_utf8_lossy(&answer).into_owned(),
            )
        })
    };
    // A profile of the next 4 s, waiting on its own worker meanwhile.
    let port = server.port;
    let waiting_done = Arc::new(AtomicBool::new(false));
    let waiting = {
        let done = Arc::clone(&waiting_done);
        std::thread::spawn(move || {
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            s.write_all(format!("GET {PROFILE}?seconds=4 HTTP/1.1\r\n\r\n").as_bytes())
                .unwrap();
            let answer = read_answer(&mut s).unwrap();
            done.store(true, Ordering::SeqCst);
            answer.status
        })
    };
    std::thread::sleep(Duration::from_secs(1));
    server.work(3);
    assert_eq!(delta_calls(&server), 3);
    server.work(2);
    assert_eq!(delta_calls(&server), 2);
    assert!(
        !slow_done.load(Ordering::SeqCst),
        "answered while the slow client is connected"
    );
    for s in &idle {
        assert!(
            still_waiting(s),
            "answered while the idle clients are connected"
        );
    }
    // The head deadline then ends both: 408, long before the slow
    // client's last byte.
    for mut s in idle {
        assert_eq!(read_answer(&mut s).unwrap().status, 408);
    }
    assert_eq!(waiting.join().unwrap(), 200);
    let (sent, len, answer) = slow_thread.join().unwrap();
    assert!(sent < len, "cut off after {sent} of {len} bytes");
    assert!(answer.starts_with("HTTP/1.1 408 "), "{answer:?}");
    assert_eq!(server.exit(0), Some(0));
}

#[test]
fn bad_seconds_get_400_and_do_not_move_the_delta_base() {
    let mut server = start();
    server.work(2);
    assert_eq!(delta_calls(&server), 2);
    server.work(5);
    for bad in [
        "-1",
        "abc",
        "1e1",
        "12345678901234567890",
        "0",
        "301",
        "1.5",
        "",
        "5&seconds=5",
        "5&x=1",
    ] {
        let http::Answer { status, body, .. } = server.get(&format!("{PROFILE}?seconds={bad}"));
        assert_eq!(status, 400, "seconds={bad}");
        assert!(
            String::from_utf8_lossy(&body).starts_with("tickprof: "),
            "{bad}"
        );
    }
    assert_eq!(
        status_of(&server, &format!("POST {PROFILE} HTTP/1.1\r\n\r\n")),
        405
    );
    let head = server.request(&format!("HEAD {PROFILE} HTTP/1.1\r\n\r\n"));
    let http::Answer { status, body, .. } = head.expect("an answer");
    assert_eq!((status, body.len()), (200, 0));
    // A well-formed ?seconds request has its own interval, not the base.
    let http::Answer { status, body, .. } = server.get(&format!("{PROFILE}?seconds=1"));
    assert_eq!((status, work_calls(&body)), (200, 0));
    assert_eq!(delta_calls(&server), 5, "the calls before the bad requests");
    assert_eq!(delta_calls(&server), 0);
    assert_eq!(server.exit(0), Some(0));
}

#[test]
fn a_large_head_gets_a_431_the_client_reads() {
    let server = start();
    let mut big = format!("GET {PROFILE} HTTP/1.1\r\nX-Big: ").into_bytes();
    big.resize(big.len() + (1 << 20), b'a');
    big.extend_from_slice(b"\r\n\r\n");
    let mut s = server.connect();
    s.write_all(&big)
        .expect("the server reads the whole request");
    let http::Answer { status, body, .. } = read_answer(&mut s).expect("an answer, not a reset");
    assert_eq!(status, 431, "{}", String::from_utf8_lossy(&body));
    let many = format!(
        "GET {PROFILE} HTTP/1.1\r\n{}\r\n",
        "X: y\r\n".repeat(10_000)
    );
    assert_eq!(status_of(&server, &many), 431);
    assert_eq!(server.get(PROFILE).status, 200);
}

#[test]
fn bad_requests_get_their_status_with_a_reason() {
    let server = start();
    let http::Answer { status, body, .. } = server.get("/debug/pprof/heap");
    assert_eq!(status, 404);
    assert!(String::from_utf8_lossy(&body).contains(PROFILE));
    assert_eq!(server.get("/../../etc/passwd").status, 404);
    for line in [
        "GET\r\n\r\n",
        "GET / HTTP/2.0\r\n\r\n",
        "GET noslash HTTP/1.1\r\n\r\n",
        "\u{1b}[31m / HTTP/1.1\r\n\r\n",
        "\r\n\r\n",
    ] {
        assert_eq!(status_of(&server, line), 400, "{line:?}");
    }
    assert_eq!(status_of(&server, "DELETE / HTTP/1.1\r\n\r\n"), 404);
    assert_eq!(
        status_of(&server, &format!("PUT {PROFILE} HTTP/1.0\r\n\r\n")),
        405
    );
    assert_eq!(server.get(PROFILE).status, 200);
}

/// Without `tickprof::Alloc` (this binary has none), `/debug/pprof/allocs`
/// is a valid profile of Go's allocation types with no samples and a
/// comment saying why; no path but the delta profile moves its base.
#[test]
fn allocs_without_alloc_is_an_empty_profile_that_says_why() {
    let mut server = start();
    server.work(5);
    let http::Answer { status, body, .. } = server.get("/debug/pprof/allocs");
    assert_eq!(status, 200);
    let p = Profile::from_gz(&body);
    assert_eq!(
        p.types(),
        [("alloc_objects", "count"), ("alloc_space", "bytes")]
    );
    assert!(p.sample.is_empty());
    assert_eq!(p.comment.len(), 1);
    assert!(p
        .s(p.comment[0])
        .starts_with("tickprof: no allocation data: tickprof::Alloc is not"));
    for path in [
        "/debug/pprof/block",
        "/debug/pprof/mutex",
        "/debug/pprof/goroutine",
    ] {
        assert_eq!(server.get(path).status, 200, "{path}");
        assert_eq!(
            server.get(&format!("{path}?seconds=5")).status,
            200,
            "{path}"
        );
    }
    assert_eq!(delta_calls(&server), 5, "the other paths left the base");
}

#[test]
fn connections_beyond_the_cap_get_503_and_the_server_recovers() {
    let mut server = start();
    let extra = 40;
    let conns: Vec<TcpStream> = (0..MAX_PENDING + extra).map(|_| server.connect()).collect();
    let mut busy = 0;
    let mut timed_out = 0;
    for mut s in conns {
        match read_answer(&mut s).map(|a| a.status) {
            Ok(503) => busy += 1,
            Ok(408) => timed_out += 1,
            other => panic!("{other:?}"),
        }
    }
    // Every connection beyond the cap is refused (fewer only if an idle
    // one timed out before the last connected, freeing its place).
    assert!(busy >= 1 && busy <= extra, "{busy} refused");
    assert_eq!(busy + timed_out, MAX_PENDING + extra);
    server.work(4);
    assert_eq!(delta_calls(&server), 4);
    assert_eq!(server.exit(0), Some(0));
}

#[test]
fn the_exit_code_is_the_programs_with_clients_connected() {
    let mut server = start();
    server.work(1);
    let _idle = server.connect();
    let mut waiting = server.connect();
    waiting
        .write_all(format!("GET {PROFILE}?seconds=30 HTTP/1.1\r\n\r\n").as_bytes())
        .unwrap();
    let mut half = server.connect();
    half.write_all(b"GET /debug").unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let _ = half.shutdown(Shutdown::Write);
    assert_eq!(server.exit(7), Some(7));
}

#[test]
fn clients_that_stay_open_after_their_answer_hold_no_worker() {
    let mut server = start();
    // More clients than workers (32), each answered (a 404) and then
    // neither closing nor sending: the server's drain waits on each until
    // its deadline, which must not keep a worker from other requests.
    let open: Vec<TcpStream> = (0..40)
        .map(|_| {
            let mut s = server.connect();
            s.write_all(b"GET /nope HTTP/1.1\r\n\r\n").unwrap();
            assert_eq!(read_answer(&mut s).unwrap().status, 404);
            s
        })
        .collect();
    server.work(3);
    assert_eq!(delta_calls(&server), 3);
    drop(open);
    assert_eq!(server.exit(0), Some(0));
}
