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

#[path = "support/child.rs"]
mod child;
#[path = "support/pprof_proto.rs"]
mod pprof_proto;
#[path = "support/quiet.rs"]
mod quiet;

use pprof_proto::{unstore, Profile};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tickprof::profile;

const CHILD: &str = "TPTEST_HTTP_CHILD";
/// The child's answer to `work N`.
const DONE: &str = "tickprof-http-child: done";
const PROFILE: &str = "/debug/pprof/profile";
/// The server's cap on connections whose head is arriving.
const MAX_PENDING: usize = 512;
/// Long enough for any answer on a busy machine; a test that waits this
/// long has failed.
const PATIENCE: Duration = Duration::from_secs(60);

#[profile]
fn work() {
    std::hint::black_box(0);
}

/// The child: `work N` makes N marked calls, `exit C` exits with C.
#[test]
fn child_workload() {
    if std::env::var(CHILD).is_err() {
        return;
    }
    let mut out = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        match line.split_once(' ') {
            Some(("work", n)) => {
                (0..n.parse::<u32>().unwrap()).for_each(|_| work());
                writeln!(out, "{DONE}").unwrap();
                out.flush().unwrap();
            }
            Some(("exit", c)) => std::process::exit(c.parse().unwrap()),
            _ => panic!("unknown command {line:?}"),
        }
    }
}

/// A child serving on a port of its own.
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
        cmd.env("TICKPROF_HTTP", format!("127.0.0.1:{port}"))
            .env("TICKPROF_STDERR", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let server = Server {
            child,
            stdin,
            stdout,
            port,
        };
        // HEAD takes no profile and moves no base.
        let start = Instant::now();
        while server
            .try_request(&format!("HEAD {PROFILE} HTTP/1.1\r\n\r\n"))
            .map(|r| r.0)
            != Some(200)
        {
            assert!(start.elapsed() < PATIENCE, "the server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    fn connect(&self) -> TcpStream {
        TcpStream::connect(("127.0.0.1", self.port)).unwrap()
    }

    /// Makes `n` marked calls in the child.
    fn work(&mut self, n: u32) {
        writeln!(self.stdin, "work {n}").unwrap();
        // The test harness prints on the same stdout (`test child_workload
        // ... ` without a line end, before the first answer).
        let mut line = String::new();
        while !line.trim_end().ends_with(DONE) {
            line.clear();
            assert_ne!(
                self.stdout.read_line(&mut line).unwrap(),
                0,
                "the child ended"
            );
        }
    }

    /// Sends `raw` and reads the whole answer: status and body.
    fn try_request(&self, raw: &str) -> Option<(u16, Vec<u8>)> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        s.write_all(raw.as_bytes()).ok()?;
        read_answer(&mut s).ok()
    }

    fn request(&self, raw: &str) -> (u16, Vec<u8>) {
        self.try_request(raw).expect("an answer")
    }

    fn get(&self, target: &str) -> (u16, Vec<u8>) {
        self.request(&format!("GET {target} HTTP/1.1\r\nHost: x\r\n\r\n"))
    }

    /// The calls to `work` in a delta scrape.
    fn delta_calls(&self) -> i64 {
        let (status, body) = self.get(PROFILE);
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
        work_calls(&body)
    }

    /// Ends the child with `exit code`; returns its exit code.
    fn exit(mut self, code: i32) -> Option<i32> {
        writeln!(self.stdin, "exit {code}").unwrap();
        self.child.wait().unwrap().code()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads a response to its end: its status code and body.
fn read_answer(s: &mut TcpStream) -> std::io::Result<(u16, Vec<u8>)> {
    s.set_read_timeout(Some(PATIENCE))?;
    let mut all = Vec::new();
    s.read_to_end(&mut all)?;
    let end = all
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or(ErrorKind::InvalidData)?;
    let head = String::from_utf8_lossy(&all[..end]).into_owned();
    let status = head
        .strip_prefix("HTTP/1.1 ")
        .and_then(|r| r.get(..3))
        .and_then(|c| c.parse().ok())
        .ok_or(ErrorKind::InvalidData)?;
    Ok((status, all[end + 4..].to_vec()))
}

/// The calls of `work` in a `.pb.gz` profile.
fn work_calls(gz: &[u8]) -> i64 {
    let p: Profile = prost::Message::decode(unstore(gz).as_slice()).unwrap();
    assert_eq!(p.types()[0], ("calls", "count"));
    let names: HashMap<u64, &str> = p.function.iter().map(|f| (f.id, p.s(f.name))).collect();
    let loc: HashMap<u64, &str> = p
        .location
        .iter()
        .map(|l| (l.id, names[&l.line[0].function_id]))
        .collect();
    p.sample
        .iter()
        .filter(|s| loc[&s.location_id[0]].ends_with("::work"))
        .map(|s| s.value[0])
        .sum()
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
    let mut server = Server::start();
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
            answer.0
        })
    };
    std::thread::sleep(Duration::from_secs(1));
    server.work(3);
    assert_eq!(server.delta_calls(), 3);
    server.work(2);
    assert_eq!(server.delta_calls(), 2);
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
        assert_eq!(read_answer(&mut s).unwrap().0, 408);
    }
    assert_eq!(waiting.join().unwrap(), 200);
    let (sent, len, answer) = slow_thread.join().unwrap();
    assert!(sent < len, "cut off after {sent} of {len} bytes");
    assert!(answer.starts_with("HTTP/1.1 408 "), "{answer:?}");
    assert_eq!(server.exit(0), Some(0));
}

#[test]
fn bad_seconds_get_400_and_do_not_move_the_delta_base() {
    let mut server = Server::start();
    server.work(2);
    assert_eq!(server.delta_calls(), 2);
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
        let (status, body) = server.get(&format!("{PROFILE}?seconds={bad}"));
        assert_eq!(status, 400, "seconds={bad}");
        assert!(
            String::from_utf8_lossy(&body).starts_with("tickprof: "),
            "{bad}"
        );
    }
    let (status, _) = server.request(&format!("POST {PROFILE} HTTP/1.1\r\n\r\n"));
    assert_eq!(status, 405);
    let (status, body) = server.request(&format!("HEAD {PROFILE} HTTP/1.1\r\n\r\n"));
    assert_eq!((status, body.len()), (200, 0));
    // A well-formed ?seconds request has its own interval, not the base.
    let (status, body) = server.get(&format!("{PROFILE}?seconds=1"));
    assert_eq!((status, work_calls(&body)), (200, 0));
    assert_eq!(server.delta_calls(), 5, "the calls before the bad requests");
    assert_eq!(server.delta_calls(), 0);
    assert_eq!(server.exit(0), Some(0));
}

#[test]
fn a_large_head_gets_a_431_the_client_reads() {
    let server = Server::start();
    let mut big = format!("GET {PROFILE} HTTP/1.1\r\nX-Big: ").into_bytes();
    big.resize(big.len() + (1 << 20), b'a');
    big.extend_from_slice(b"\r\n\r\n");
    let mut s = server.connect();
    s.write_all(&big)
        .expect("the server reads the whole request");
    let (status, body) = read_answer(&mut s).expect("an answer, not a reset");
    assert_eq!(status, 431, "{}", String::from_utf8_lossy(&body));
    let many = format!(
        "GET {PROFILE} HTTP/1.1\r\n{}\r\n",
        "X: y\r\n".repeat(10_000)
    );
    assert_eq!(server.request(&many).0, 431);
    assert_eq!(server.get(PROFILE).0, 200);
}

#[test]
fn bad_requests_get_their_status_with_a_reason() {
    let server = Server::start();
    let (status, body) = server.get("/debug/pprof/heap");
    assert_eq!(status, 404);
    assert!(String::from_utf8_lossy(&body).contains(PROFILE));
    assert_eq!(server.get("/../../etc/passwd").0, 404);
    for line in [
        "GET\r\n\r\n",
        "GET / HTTP/2.0\r\n\r\n",
        "GET noslash HTTP/1.1\r\n\r\n",
        "\u{1b}[31m / HTTP/1.1\r\n\r\n",
        "\r\n\r\n",
    ] {
        assert_eq!(server.request(line).0, 400, "{line:?}");
    }
    assert_eq!(server.request("DELETE / HTTP/1.1\r\n\r\n").0, 404);
    assert_eq!(
        server.request(&format!("PUT {PROFILE} HTTP/1.0\r\n\r\n")).0,
        405
    );
    assert_eq!(server.get(PROFILE).0, 200);
}

/// Without `tickprof::Alloc` (this binary has none), `/debug/pprof/allocs`
/// is a valid profile of Go's allocation types with no samples and a
/// comment saying why; no path but the delta profile moves its base.
#[test]
fn allocs_without_alloc_is_an_empty_profile_that_says_why() {
    let mut server = Server::start();
    server.work(5);
    let (status, body) = server.get("/debug/pprof/allocs");
    assert_eq!(status, 200);
    let p: Profile = prost::Message::decode(unstore(&body).as_slice()).unwrap();
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
        assert_eq!(server.get(path).0, 200, "{path}");
        assert_eq!(server.get(&format!("{path}?seconds=5")).0, 200, "{path}");
    }
    assert_eq!(server.delta_calls(), 5, "the other paths left the base");
}

#[test]
fn connections_beyond_the_cap_get_503_and_the_server_recovers() {
    let mut server = Server::start();
    let extra = 40;
    let conns: Vec<TcpStream> = (0..MAX_PENDING + extra).map(|_| server.connect()).collect();
    let mut busy = 0;
    let mut timed_out = 0;
    for mut s in conns {
        match read_answer(&mut s).map(|a| a.0) {
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
    assert_eq!(server.delta_calls(), 4);
    assert_eq!(server.exit(0), Some(0));
}

#[test]
fn the_exit_code_is_the_programs_with_clients_connected() {
    let mut server = Server::start();
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
    let mut server = Server::start();
    // More clients than workers (32), each answered (a 404) and then
    // neither closing nor sending: the server's drain waits on each until
    // its deadline, which must not keep a worker from other requests.
    let open: Vec<TcpStream> = (0..40)
        .map(|_| {
            let mut s = server.connect();
            s.write_all(b"GET /nope HTTP/1.1\r\n\r\n").unwrap();
            assert_eq!(read_answer(&mut s).unwrap().0, 404);
            s
        })
        .collect();
    server.work(3);
    assert_eq!(server.delta_calls(), 3);
    drop(open);
    assert_eq!(server.exit(0), Some(0));
}
