//! One `POST` over plain HTTP/1.1, bounded by one deadline (resolving the
//! name aside: the system's resolver has no timeout), and the
//! `multipart/form-data` body Pyroscope's `/ingest` reads.

use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Instant;

/// Why a push failed, one kind per warning line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The host name did not resolve.
    Resolve,
    /// No connection (refused, unreachable, or not within the deadline):
    /// nothing was sent, so the push may be tried again.
    Connect,
    /// The request could not be written whole before the deadline or the
    /// peer closed: the receiver may have part of it, but no complete
    /// request, so the push may be tried again.
    Send,
    /// The request was sent but no status line came back before the
    /// deadline: the receiver may have stored it, so it is not sent again.
    NoAnswer,
    /// The receiver answered with this status (not `2xx`).
    Status(u16),
}

impl Failure {
    /// Whether the push can be sent again without risking a duplicate.
    pub fn retryable(self) -> bool {
        matches!(self, Failure::Resolve | Failure::Connect | Failure::Send)
    }

    /// The bit of this kind in the warned-once mask.
    pub fn bit(self) -> u32 {
        match self {
            Failure::Resolve => 1,
            Failure::Connect => 2,
            Failure::Send => 4,
            Failure::NoAnswer => 8,
            Failure::Status(s) if s >= 500 => 16,
            Failure::Status(_) => 32,
        }
    }

    /// What happened, for the warning line.
    pub fn describe(self, detail: &str) -> String {
        match self {
            Failure::Resolve => format!("cannot resolve the host{detail}"),
            Failure::Connect => format!("cannot connect{detail}"),
            Failure::Send => format!("cannot send the request{detail}"),
            Failure::NoAnswer => format!("no answer within the deadline{detail}"),
            Failure::Status(s) => format!("the receiver answered HTTP {s}{detail}"),
        }
    }
}

/// Posts `body` (of type `content_type`) to `path` on `authority`
/// (`host:port`), all of it before `deadline`. `Ok` on a `2xx` answer;
/// the error detail is the system's message, if any.
pub(crate) fn post(
    authority: &str,
    path: &str,
    content_type: &str,
    body: &[u8],
    deadline: Instant,
) -> Result<(), (Failure, String)> {
    let left = || deadline.saturating_duration_since(Instant::now());
    let detail = |e: io::Error| format!(": {e}");
    let addrs: Vec<_> = authority
        .to_socket_addrs()
        .map_err(|e| (Failure::Resolve, detail(e)))?
        .collect();
    let mut stream = None;
    let mut last = String::from(": no address");
    for a in &addrs {
        let t = left();
        if t.is_zero() {
            break;
        }
        match TcpStream::connect_timeout(a, t) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = detail(e),
        }
    }
    let mut s = stream.ok_or((Failure::Connect, last))?;
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: tickprof/{}\r\n\
         Content-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        env!("CARGO_PKG_VERSION"),
        body.len()
    );
    let _ = s.set_nodelay(true);
    for chunk in [head.as_bytes(), body] {
        write_by(&mut s, chunk, deadline).map_err(|e| (Failure::Send, detail(e)))?;
    }
    let status = read_status(&mut s, deadline).map_err(|e| (Failure::NoAnswer, detail(e)))?;
    if (200..300).contains(&status) {
        Ok(())
    } else {
        Err((Failure::Status(status), String::new()))
    }
}

/// Writes all of `buf` before `deadline`.
fn write_by(s: &mut TcpStream, mut buf: &[u8], deadline: Instant) -> io::Result<()> {
    while !buf.is_empty() {
        let t = deadline.saturating_duration_since(Instant::now());
        if t.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        s.set_write_timeout(Some(t))?;
        match s.write(buf) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => buf = &buf[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The status code of the answer's status line (`HTTP/1.x NNN …`), read
/// before `deadline`; at most 1 KiB is read.
fn read_status(s: &mut TcpStream, deadline: Instant) -> io::Result<u16> {
    let mut got = Vec::with_capacity(64);
    let mut buf = [0u8; 256];
    while !got.windows(2).any(|w| w == b"\r\n") && got.len() < 1024 {
        let t = deadline.saturating_duration_since(Instant::now());
        if t.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        s.set_read_timeout(Some(t))?;
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let line = String::from_utf8_lossy(&got);
    let mut words = line.split(' ');
    match (words.next(), words.next().and_then(|c| c.get(..3))) {
        (Some(v), Some(code)) if v.starts_with("HTTP/1.") => code
            .parse()
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not an HTTP answer")),
        _ if got.is_empty() => Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the connection closed without an answer",
        )),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not an HTTP answer",
        )),
    }
}

/// A `multipart/form-data` body of file fields `(name, file name, bytes)`;
/// returns the body and its `Content-Type`. The boundary is derived from
/// `seed` and lengthened until no part contains it.
pub(crate) fn multipart(parts: &[(&str, &str, &[u8])], seed: u64) -> (Vec<u8>, String) {
    let mut boundary = format!("tickprof-{seed:016x}");
    while parts
        .iter()
        .any(|(_, _, b)| b.windows(boundary.len()).any(|w| w == boundary.as_bytes()))
    {
        boundary.push_str(&format!("{:x}", boundary.len()));
    }
    let mut body = Vec::new();
    for (name, file, bytes) in parts {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; \
                 filename=\"{file}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (body, format!("multipart/form-data; boundary={boundary}"))
}

/// `s` percent-encoded for a query value (unreserved characters kept).
pub(crate) fn query_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::time::Duration;

    #[test]
    fn multipart_boundaries_avoid_the_parts() {
        let (body, ct) = multipart(&[("a", "a.bin", b"xx tickprof-0000000000000001 xx")], 1);
        let b = ct.split("boundary=").nth(1).unwrap();
        assert_ne!(b, "tickprof-0000000000000001");
        let text = String::from_utf8_lossy(&body);
        assert_eq!(text.matches(b).count(), 2);
        assert!(text.ends_with(&format!("--{b}--\r\n")));
        assert_eq!(query_value("a{b=c,d=e}"), "a%7Bb%3Dc%2Cd%3De%7D");
    }

    #[test]
    fn failures_are_classified() {
        // Refused: nothing listens on a port just released.
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let soon = Instant::now() + Duration::from_secs(2);
        let r = post(&format!("127.0.0.1:{port}"), "/ingest", "x", b"", soon);
        assert_eq!(r.unwrap_err().0, Failure::Connect);
        // Accepted, never answered: no answer by the deadline.
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap().to_string();
        let start = Instant::now();
        let r = post(
            &addr,
            "/ingest",
            "x",
            b"body",
            start + Duration::from_millis(300),
        );
        assert_eq!(r.unwrap_err().0, Failure::NoAnswer);
        // Answered with an error status.
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap().to_string();
        let t = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            s.write_all(b"HTTP/1.1 422 Unprocessable\r\n\r\n").unwrap();
        });
        let r = post(
            &addr,
            "/ingest",
            "x",
            b"body",
            Instant::now() + Duration::from_secs(5),
        );
        assert_eq!(r.unwrap_err().0, Failure::Status(422));
        t.join().unwrap();
        assert!(!Failure::NoAnswer.retryable() && Failure::Connect.retryable());
    }
}
