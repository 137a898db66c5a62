//! Receiving and parsing a request head, a few bytes at a time as they
//! arrive: it must fit in [`HEAD_CAP`] bytes; only the request line is
//! interpreted (the header fields are read and skipped).

use std::io::{self, Read};
use std::net::TcpStream;
use std::time::Duration;

/// The largest request head accepted (request line and header fields).
pub(super) const HEAD_CAP: usize = 8 * 1024;

/// How long a client has to send its whole request head, from the accept
/// (however the bytes are spread out).
pub(super) const HEAD_DEADLINE: Duration = Duration::from_secs(5);

/// A request line, checked: `GET` or `HEAD` (others are kept, and routed
/// to `405`), an origin-form target split into path and query.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Request {
    /// The method, as sent (an HTTP token).
    pub method: String,
    /// The target's path (starts with `/`).
    pub path: String,
    /// The target's query, without the `?` (empty when there is none).
    pub query: String,
}

impl Request {
    /// Whether the response carries no body (`HEAD`).
    pub fn head_only(&self) -> bool {
        self.method == "HEAD"
    }
}

/// Why a request head was refused (each has its status code).
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Refusal {
    /// `400`: not an HTTP/1.x request line, or not text.
    Malformed(&'static str),
    /// `431`: the head is longer than [`HEAD_CAP`].
    TooLarge,
    /// `408`: the head did not arrive before the deadline.
    Timeout,
    /// The client closed or reset the connection before a whole head:
    /// nothing to answer.
    Gone,
}

/// A head being received: its bytes so far.
pub(super) struct Partial {
    /// The bytes received (at most [`HEAD_CAP`] plus one read).
    buf: Vec<u8>,
}

impl Partial {
    /// Nothing received yet.
    pub fn new() -> Partial {
        Partial { buf: Vec::new() }
    }

    /// Reads what `stream` (non-blocking) has now. `None` while the head
    /// is incomplete; then the request, or why it is refused.
    pub fn read(&mut self, stream: &mut TcpStream) -> Option<Result<Request, Refusal>> {
        let mut chunk = [0u8; 2048];
        loop {
            let n = match stream.read(&mut chunk) {
                Ok(0) => return Some(Err(Refusal::Gone)),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return None,
                Err(_) => return Some(Err(Refusal::Gone)),
            };
            if let Some(done) = self.add(&chunk[..n]) {
                return Some(done);
            }
        }
    }

    /// Adds received bytes: `None` while the head is incomplete.
    pub fn add(&mut self, bytes: &[u8]) -> Option<Result<Request, Refusal>> {
        // Search from a little before the new bytes (the blank line may
        // straddle two reads).
        let from = self.buf.len().saturating_sub(3);
        self.buf.extend_from_slice(bytes);
        if let Some(end) = head_end(&self.buf, from) {
            return Some(parse(&self.buf[..end]));
        }
        (self.buf.len() >= HEAD_CAP).then_some(Err(Refusal::TooLarge))
    }
}

/// The length of the head in `buf` (up to and including its blank line:
/// `\r\n\r\n`, or bare `\n\n`), searching from `from`; `None` while it is
/// incomplete. A head longer than [`HEAD_CAP`] is not found.
pub(super) fn head_end(buf: &[u8], from: usize) -> Option<usize> {
    let limit = buf.len().min(HEAD_CAP);
    (from..limit).find_map(|i| {
        if buf[i] != b'\n' {
            return None;
        }
        let rest = &buf[i + 1..limit];
        if rest.starts_with(b"\n") {
            Some(i + 2)
        } else if rest.starts_with(b"\r\n") {
            Some(i + 3)
        } else {
            None
        }
    })
}

/// Parses a complete head (its request line; the fields must be text).
pub(super) fn parse(head: &[u8]) -> Result<Request, Refusal> {
    let head =
        std::str::from_utf8(head).map_err(|_| Refusal::Malformed("the head is not UTF-8"))?;
    let line = head.split('\n').next().unwrap_or("");
    let line = line.strip_suffix('\r').unwrap_or(line);
    parse_line(line)
}

/// Parses `METHOD SP /target SP HTTP/1.x`.
pub(super) fn parse_line(line: &str) -> Result<Request, Refusal> {
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Refusal::Malformed(
            "the request line is not `METHOD /path HTTP/1.1`",
        ));
    };
    if method.is_empty() || !method.bytes().all(is_token_byte) {
        return Err(Refusal::Malformed("the method is not an HTTP token"));
    }
    if !matches!(version, "HTTP/1.0" | "HTTP/1.1") {
        return Err(Refusal::Malformed(
            "the version is not HTTP/1.0 or HTTP/1.1",
        ));
    }
    if !target.starts_with('/') || !target.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Refusal::Malformed(
            "the target is not a path starting with `/`",
        ));
    }
    let target = target.split_once('#').map_or(target, |(t, _)| t);
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    Ok(Request {
        method: method.to_owned(),
        path: path.to_owned(),
        query: query.to_owned(),
    })
}

/// RFC 9110 `tchar`.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::{head_end, parse, parse_line, Partial, Refusal, Request, HEAD_CAP};

    fn req(method: &str, path: &str, query: &str) -> Request {
        Request {
            method: method.into(),
            path: path.into(),
            query: query.into(),
        }
    }

    #[test]
    fn request_lines() {
        assert_eq!(
            parse_line("GET /debug/pprof/profile?seconds=5 HTTP/1.1"),
            Ok(req("GET", "/debug/pprof/profile", "seconds=5"))
        );
        assert_eq!(parse_line("HEAD / HTTP/1.0"), Ok(req("HEAD", "/", "")));
        assert_eq!(
            parse_line("POST /x?a=1&b=2#frag HTTP/1.1"),
            Ok(req("POST", "/x", "a=1&b=2"))
        );
        for bad in [
            "",
            "GET",
            "GET /",
            "GET / HTTP/2.0",
            "GET / HTTP/1.1 extra",
            "GET  / HTTP/1.1",
            "GET x HTTP/1.1",
            "GET http://host/ HTTP/1.1",
            "G(T / HTTP/1.1",
            "GET /\u{1b}[31m HTTP/1.1",
            "GET /\t HTTP/1.1",
        ] {
            assert!(
                matches!(parse_line(bad), Err(Refusal::Malformed(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn heads() {
        let h = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n";
        assert_eq!(head_end(h, 0), Some(h.len()));
        assert_eq!(parse(h), Ok(req("GET", "/a", "")));
        let bare = b"GET /a HTTP/1.0\nHost: x\n\nbody";
        assert_eq!(head_end(bare, 0), Some(bare.len() - 4));
        assert_eq!(head_end(b"GET /a HTTP/1.1\r\nHost: x\r\n", 0), None);
        assert_eq!(head_end(b"GET /a HTTP/1.1\r\n\r", 0), None);
        assert!(matches!(
            parse(b"GET /\xff HTTP/1.1\r\n\r\n"),
            Err(Refusal::Malformed(_))
        ));
        assert!(matches!(
            parse(b"GET / HTTP/1.1\r\nX: \xff\r\n\r\n"),
            Err(Refusal::Malformed(_))
        ));
    }

    #[test]
    fn the_cap_bounds_the_search() {
        let mut long = b"GET / HTTP/1.1\r\n".to_vec();
        long.resize(HEAD_CAP, b'a');
        long.extend_from_slice(b"\r\n\r\n");
        assert_eq!(head_end(&long, 0), None);
        let mut fits = b"GET / HTTP/1.1\r\nX: ".to_vec();
        fits.resize(HEAD_CAP - 4, b'a');
        fits.extend_from_slice(b"\r\n\r\n");
        assert_eq!(head_end(&fits, 0), Some(HEAD_CAP));
    }

    #[test]
    fn partial_heads() {
        let mut p = Partial::new();
        for b in b"GET /a?b HTTP/1.1\r\nHost: x\r\n\r".iter() {
            assert_eq!(p.add(&[*b]), None);
        }
        assert_eq!(p.add(b"\n"), Some(Ok(req("GET", "/a", "b"))));
        let mut p = Partial::new();
        assert_eq!(p.add(b"GET / HTTP/1.1\r\n"), None);
        let mut refused = None;
        for _ in 0..HEAD_CAP {
            refused = p.add(b"X: 1\r\n");
            if refused.is_some() {
                break;
            }
        }
        assert_eq!(refused, Some(Err(Refusal::TooLarge)));
    }
}
