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
    /// The request was sent and the receiver closed the connection
    /// without a byte of answer (not sent again either).
    Closed,
    /// The receiver answered something that is not a well-formed HTTP/1.x
    /// status line (not sent again either).
    Garbled,
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
            Failure::Closed => 64,
            Failure::Garbled => 128,
        }
    }

    /// What happened, for the warning line.
    pub fn describe(self, detail: &str) -> String {
        match self {
            Failure::Resolve => format!("cannot resolve the host{detail}"),
            Failure::Connect => format!("cannot connect{detail}"),
            Failure::Send => format!("cannot send the request{detail}"),
            Failure::NoAnswer => format!("no answer within the deadline{detail}"),
            Failure::Closed => {
                format!("the receiver closed the connection without answering{detail}")
            }
            Failure::Garbled => {
                format!("the receiver's answer is not an HTTP/1.x status line{detail}")
            }
            Failure::Status(s) => format!("the receiver answered HTTP {s}{detail}"),
        }
    }
}

/// The detail of an I/O error for a warning line: `: why`. A timeout
/// says so in words (a socket timeout is `EAGAIN` to the system, whose
/// message, "Resource temporarily unavailable (os error 11)", does not).
fn detail(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => ": the deadline passed".to_owned(),
        _ => format!(": {e}"),
    }
}

/// Posts `body` (of type `content_type`) to `path` on `authority`
/// (`host:port`), all of it before `deadline`. `Ok` on a well-formed
/// `2xx` status line; the error detail is what went wrong, if more can
/// be said.
pub(crate) fn post(
    authority: &str,
    path: &str,
    content_type: &str,
    body: &[u8],
    deadline: Instant,
) -> Result<(), (Failure, String)> {
    let left = || deadline.saturating_duration_since(Instant::now());
    let addrs: Vec<_> = authority
        .to_socket_addrs()
        .map_err(|e| (Failure::Resolve, format!(": {e}")))?
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
            Err(e) => last = detail(&e),
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
        write_by(&mut s, chunk, deadline).map_err(|e| (Failure::Send, detail(&e)))?;
    }
    match read_status(&mut s, deadline)? {
        200..=299 => Ok(()),
        status => Err((Failure::Status(status), String::new())),
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

/// The longest status line read.
const MAX_STATUS_LINE: usize = 1024;

/// The status code of the answer's status line, read before `deadline`
/// (at most [`MAX_STATUS_LINE`] bytes).
fn read_status(s: &mut TcpStream, deadline: Instant) -> Result<u16, (Failure, String)> {
    let mut got = Vec::with_capacity(64);
    let mut buf = [0u8; 256];
    while !got.contains(&b'\n') && got.len() < MAX_STATUS_LINE {
        let t = deadline.saturating_duration_since(Instant::now());
        let read = if t.is_zero() {
            Err(io::ErrorKind::TimedOut.into())
        } else {
            s.set_read_timeout(Some(t)).and_then(|()| s.read(&mut buf))
        };
        match read {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Err((Failure::NoAnswer, String::new()));
            }
            Err(e) => return Err((Failure::Closed, format!(": {e}"))),
        }
    }
    if got.is_empty() {
        return Err((Failure::Closed, String::new()));
    }
    let line = got.split(|&b| b == b'\n').next().unwrap_or_default();
    let complete = got.len() > line.len();
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    match status_code(line) {
        Some(code) if complete => Ok(code),
        _ => Err((Failure::Garbled, format!(": {}", shown(line)))),
    }
}

/// The code of a well-formed status line (without its line end):
/// `HTTP/1.0` or `HTTP/1.1`, one space, three digits from `100` to `599`,
/// then the end or a space and a reason.
pub(crate) fn status_code(line: &[u8]) -> Option<u16> {
    let rest = line
        .strip_prefix(b"HTTP/1.1 ")
        .or_else(|| line.strip_prefix(b"HTTP/1.0 "))?;
    let (code, after) = (rest.get(..3)?, &rest[3..]);
    if !code.iter().all(u8::is_ascii_digit) || !(after.is_empty() || after[0] == b' ') {
        return None;
    }
    let code = code.iter().fold(0u16, |n, d| n * 10 + u16::from(d - b'0'));
    (100..600).contains(&code).then_some(code)
}

/// A few bytes of an answer, quoted for a warning line.
fn shown(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(&line[..line.len().min(40)]);
    let more = if line.len() > 40 { "…" } else { "" };
    format!("{text:?}{more}")
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
        let r = answered(b"HTTP/1.1 422 Unprocessable\r\n\r\n");
        assert_eq!(r.unwrap_err().0, Failure::Status(422));
        assert!(!Failure::NoAnswer.retryable() && Failure::Connect.retryable());
    }

    #[test]
    fn only_a_well_formed_status_line_has_a_code() {
        for (line, code) in [
            (&b"HTTP/1.1 200 OK"[..], Some(200)),
            (b"HTTP/1.0 204", Some(204)),
            (b"HTTP/1.1 299 Whatever it says", Some(299)),
            (b"HTTP/1.1 503 Busy", Some(503)),
            (b"HTTP/1.1 2999", None),
            (b"HTTP/1.1 204x", None),
            (b"HTTP/1.1 20", None),
            (b"HTTP/1.9 200 OK", None),
            (b"HTTP/2 200", None),
            (b"http/1.1 200 OK", None),
            (b"HTTP/1.1  200 OK", None),
            (b"HTTP/1.1 +20 OK", None),
            (b"HTTP/1.1 099 Low", None),
            (b"HTTP/1.1 600 High", None),
            (b"200 OK", None),
            (b"", None),
        ] {
            assert_eq!(
                status_code(line),
                code,
                "{:?}",
                String::from_utf8_lossy(line)
            );
        }
    }

    /// A receiver that reads the whole request and answers `answer` (then
    /// closes); what `post` makes of it.
    fn answered(answer: &'static [u8]) -> Result<(), (Failure, String)> {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap().to_string();
        let t = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut got = Vec::new();
            let mut buf = [0u8; 4096];
            // Unread bytes at the close would reset the connection.
            while !got.ends_with(b"\r\n\r\nbody") {
                let n = s.read(&mut buf).unwrap();
                assert_ne!(n, 0);
                got.extend_from_slice(&buf[..n]);
            }
            s.write_all(answer).unwrap();
        });
        let r = post(
            &addr,
            "/ingest",
            "x",
            b"body",
            Instant::now() + Duration::from_secs(20),
        );
        t.join().unwrap();
        r
    }

    #[test]
    fn a_push_counts_only_on_a_well_formed_2xx_and_failures_say_what_happened() {
        assert_eq!(answered(b"HTTP/1.1 200 OK\r\n\r\n"), Ok(()));
        assert_eq!(answered(b"HTTP/1.0 204 No Content\n\n"), Ok(()));
        for bad in [
            &b"HTTP/1.1 2999 OK\r\n\r\n"[..],
            b"HTTP/1.1 204x\r\n\r\n",
            b"HTTP/1.9 200 OK\r\n\r\n",
            b"garbage\r\n",
            b"HTTP/1.1 200 OK",
        ] {
            let (f, detail) = answered(bad).unwrap_err();
            assert_eq!(f, Failure::Garbled, "{:?}", String::from_utf8_lossy(bad));
            let line = f.describe(&detail);
            assert!(
                line.starts_with("the receiver's answer is not an HTTP/1.x status line: \""),
                "{line}"
            );
            assert!(
                !line.contains("deadline") && !line.contains("os error"),
                "{line}"
            );
        }
        let (f, detail) = answered(b"").unwrap_err();
        assert_eq!((f, detail.as_str()), (Failure::Closed, ""));
        assert_eq!(
            f.describe(&detail),
            "the receiver closed the connection without answering"
        );
        assert_eq!(
            answered(b"HTTP/1.1 404 Not Found\r\n\r\n").unwrap_err().0,
            Failure::Status(404)
        );
        // A real timeout says so, not "os error 11".
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap().to_string();
        let soon = Instant::now() + Duration::from_millis(300);
        let (f, detail) = post(&addr, "/ingest", "x", b"body", soon).unwrap_err();
        assert_eq!(f.describe(&detail), "no answer within the deadline");
    }
}
