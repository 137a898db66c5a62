//! HTTP for the service tests, written once: a child process serving
//! `TICKPROF_HTTP` on a free port and driven through its stdin ([`Server`],
//! with [`child_loop`] on the child's side), a client that sends a raw
//! request and reads the whole answer ([`request`]), and the receiving side
//! of a request for the tests that play a server ([`read_request`]).
//!
//! It re-exports `support/child.rs` (as `http::child`), and holds the one
//! marked function the children call, [`work`].
#![allow(dead_code)] // each test binary uses a part

pub use super::child;

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::{Duration, Instant};

/// Long enough for any answer on a busy machine; a test that waits this
/// long has failed.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// What the child prints when a command is done.
pub const DONE: &str = "tickprof-test-child: done";

/// The marked leaf the children call (its name ends with `::work`).
#[tickprof::profile]
pub fn work() {
    std::hint::black_box(0);
}

/// A loopback port nothing listens on (bound, then released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// An answer: the status code, the head (status line and fields) and the body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub head: String,
    pub body: Vec<u8>,
}

impl Answer {
    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Reads an answer to its end (the server closes the connection).
pub fn read_answer(s: &mut TcpStream) -> std::io::Result<Answer> {
    s.set_read_timeout(Some(PATIENCE))?;
    let mut all = Vec::new();
    s.read_to_end(&mut all)?;
    let end = find(&all, b"\r\n\r\n").ok_or(ErrorKind::InvalidData)?;
    let head = String::from_utf8_lossy(&all[..end]).into_owned();
    let status = head
        .strip_prefix("HTTP/1.1 ")
        .and_then(|r| r.get(..3))
        .and_then(|c| c.parse().ok())
        .ok_or(ErrorKind::InvalidData)?;
    Ok(Answer {
        status,
        head,
        body: all[end + 4..].to_vec(),
    })
}

/// Sends `raw` to `port` on loopback and reads the whole answer; `None`
/// when there is no connection or no well-formed answer.
pub fn request(port: u16, raw: &str) -> Option<Answer> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.write_all(raw.as_bytes()).ok()?;
    read_answer(&mut s).ok()
}

/// `GET target` on `port`, which must answer.
pub fn get(port: u16, target: &str) -> Answer {
    request(port, &format!("GET {target} HTTP/1.1\r\nHost: x\r\n\r\n")).expect("an answer")
}

/// Where `needle` starts in `hay`.
pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A child process (this test binary's `child_workload`, see
/// [`child_loop`]) serving `TICKPROF_HTTP` on a port of its own, its own
/// exit report off.
pub struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    pub port: u16,
}

impl Server {
    /// Starts the child (`marker=1` and `env` set) and waits until it
    /// answers `HEAD probe` with `200` (a `HEAD` takes no profile and
    /// moves no base).
    #[track_caller] // the caller's module names the child's test
    pub fn start(marker: &str, env: &[(&str, &str)], probe: &str) -> Server {
        let port = free_port();
        let mut cmd = child::child_command(marker, "1");
        cmd.env("TICKPROF_HTTP", format!("127.0.0.1:{port}"))
            .env("TICKPROF_STDERR", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("the child starts");
        let server = Server {
            stdin: child.stdin.take().expect("piped stdin"),
            stdout: BufReader::new(child.stdout.take().expect("piped stdout")),
            child,
            port,
        };
        let start = Instant::now();
        let head = format!("HEAD {probe} HTTP/1.1\r\n\r\n");
        while server.request(&head).map(|a| a.status) != Some(200) {
            assert!(start.elapsed() < PATIENCE, "the server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    /// A connection to the server.
    pub fn connect(&self) -> TcpStream {
        TcpStream::connect(("127.0.0.1", self.port)).expect("a connection")
    }

    /// Sends `raw` and reads the whole answer.
    pub fn request(&self, raw: &str) -> Option<Answer> {
        request(self.port, raw)
    }

    /// `GET target`, which must answer.
    pub fn get(&self, target: &str) -> Answer {
        get(self.port, target)
    }

    /// Has the child run `work N` (its [`child_loop`] closure with N) and
    /// waits until it is done.
    pub fn work(&mut self, n: u32) {
        writeln!(self.stdin, "work {n}").expect("the child reads");
        // The test harness prints on the same stdout (`test child_workload
        // ... ` without a line end, before the first answer).
        let mut line = String::new();
        while !line.trim_end().ends_with(DONE) {
            line.clear();
            let read = self
                .stdout
                .read_line(&mut line)
                .expect("the child's stdout");
            assert_ne!(read, 0, "the child ended");
        }
    }

    /// Ends the child with `exit code`; returns its exit code.
    pub fn exit(mut self, code: i32) -> Option<i32> {
        writeln!(self.stdin, "exit {code}").expect("the child reads");
        self.child.wait().expect("the child's status").code()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The child's side of [`Server`]: reads commands from stdin until it
/// closes: `work N` runs `work(N)`, then prints [`DONE`]; `exit C` exits
/// with C.
pub fn child_loop(mut work: impl FnMut(u32)) {
    let mut out = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("a command");
        match line.split_once(' ') {
            Some(("work", n)) => {
                work(n.parse().expect("work N"));
                writeln!(out, "{DONE}").expect("stdout");
                out.flush().expect("stdout");
            }
            Some(("exit", c)) => std::process::exit(c.parse().expect("exit C")),
            _ => panic!("unknown command {line:?}"),
        }
    }
}

/// A request as a server reads it: the target of its request line, its
/// header fields and its body (`Content-Length` bytes).
#[derive(Debug)]
pub struct Request {
    pub line: String,
    pub fields: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The request line's target.
    pub fn target(&self) -> &str {
        self.line.split(' ').nth(1).unwrap_or("")
    }

    /// The value of field `name` (any case); empty when absent.
    pub fn field(&self, name: &str) -> &str {
        self.fields
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map_or("", |(_, v)| v.as_str())
    }
}

/// Reads one request from `s` (head, then a `Content-Length` body); `None`
/// when the peer closes first or the head has no length.
pub fn read_request(s: &mut TcpStream) -> Option<Request> {
    s.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    let mut all = Vec::new();
    let mut buf = [0u8; 65536];
    let mut fill = |all: &mut Vec<u8>| -> Option<()> {
        let n = s.read(&mut buf).ok()?;
        all.extend_from_slice(&buf[..n]);
        (n > 0).then_some(())
    };
    let head_end = loop {
        if let Some(e) = find(&all, b"\r\n\r\n") {
            break e;
        }
        fill(&mut all)?;
    };
    let head = String::from_utf8_lossy(&all[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let line = lines.next()?.to_owned();
    let fields: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    let mut r = Request {
        line,
        fields,
        body: Vec::new(),
    };
    let len: usize = r.field("content-length").parse().ok()?;
    while all.len() < head_end + 4 + len {
        fill(&mut all)?;
    }
    r.body = all[head_end + 4..head_end + 4 + len].to_vec();
    Some(r)
}
