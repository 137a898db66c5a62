//! Responses: the status line and fields, a write bounded by one deadline,
//! and a close that lets the client read the answer (no TCP reset).

use super::request::{Refusal, HEAD_CAP, HEAD_DEADLINE};
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

/// How long the client has to read a whole response.
pub(super) const WRITE_DEADLINE: Duration = Duration::from_secs(10);
/// After the response, how long what the client still sends is read and
/// dropped (so that closing does not reset the connection)...
pub(super) const DRAIN_DEADLINE: Duration = Duration::from_secs(2);
/// ...and how many bytes at most.
pub(super) const DRAIN_CAP: usize = 4 << 20;

/// One response; every response closes the connection.
#[derive(Debug)]
pub(super) struct Response {
    /// The status code.
    pub status: u16,
    /// Extra header fields, each `Name: value` without the line end.
    pub fields: Vec<String>,
    /// `Content-Type`.
    pub content_type: &'static str,
    /// The body (not sent for `HEAD`).
    pub body: Vec<u8>,
    /// Whether `Content-Length` is sent (false for a `HEAD` answered
    /// without making the body).
    pub sized: bool,
}

impl Response {
    /// A plain-text response: `message` and a line end.
    pub fn text(status: u16, message: &str) -> Response {
        Response {
            status,
            fields: Vec::new(),
            content_type: "text/plain; charset=utf-8",
            body: format!("{message}\n").into_bytes(),
            sized: true,
        }
    }

    /// The answer to a refused head (`None`: the client is gone).
    pub fn refusal(refusal: &Refusal) -> Option<Response> {
        Some(match refusal {
            Refusal::Malformed(why) => Response::text(400, &format!("tickprof: {why}")),
            Refusal::TooLarge => Response::text(
                431,
                &format!("tickprof: the request head is longer than {HEAD_CAP} bytes"),
            ),
            Refusal::Timeout => Response::text(
                408,
                &format!(
                    "tickprof: the request head did not arrive within {} s",
                    HEAD_DEADLINE.as_secs()
                ),
            ),
            Refusal::Gone => return None,
        })
    }

    /// `503`: no place for one more connection or request now.
    pub fn busy(what: &str) -> Response {
        Response::text(503, &format!("tickprof: {what}; try again"))
            .with("Retry-After: 1".to_owned())
    }

    /// Adds the header field `field` (`Name: value`).
    pub fn with(mut self, field: String) -> Response {
        self.fields.push(field);
        self
    }

    /// The status line and header fields, up to the blank line.
    pub fn head(&self) -> String {
        let mut h = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nConnection: close\r\n",
            self.status,
            reason(self.status),
            self.content_type,
        );
        if self.sized {
            h.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        }
        for f in &self.fields {
            h.push_str(f);
            h.push_str("\r\n");
        }
        h.push_str("\r\n");
        h
    }

    /// Writes the response (without its body when `head_only`) within
    /// [`WRITE_DEADLINE`]. Returns whether it was all written (then the
    /// caller closes as [`finish`] does).
    pub fn send(&self, stream: &mut TcpStream, head_only: bool) -> bool {
        let deadline = Instant::now() + WRITE_DEADLINE;
        let mut bytes = self.head().into_bytes();
        if !head_only {
            bytes.extend_from_slice(&self.body);
        }
        write_by(stream, &bytes, deadline).is_ok()
    }
}

/// The reason phrase of the codes this server sends.
pub(super) fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}

/// Writes all of `bytes` unless `deadline` passes first (each write waits
/// at most the time left).
fn write_by(stream: &mut TcpStream, mut bytes: &[u8], deadline: Instant) -> io::Result<()> {
    while !bytes.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        stream.set_write_timeout(Some(left))?;
        match stream.write(bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Ends the response: no more writes (the client sees the end), then
/// reads and drops what the client still sends until it closes, for at
/// most [`DRAIN_DEADLINE`] and [`DRAIN_CAP`] bytes. Closing a socket with
/// unread input resets the connection, and a reset can destroy the
/// response before the client read it.
pub(super) fn finish(stream: &mut TcpStream) {
    if stream.shutdown(Shutdown::Write).is_err() {
        return;
    }
    let deadline = Instant::now() + DRAIN_DEADLINE;
    let mut sink = [0u8; 16 * 1024];
    let mut drained = 0;
    while drained < DRAIN_CAP {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return;
        }
        match stream.read(&mut sink) {
            Ok(0) => return,
            Ok(n) => drained += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// Writes `response` without waiting (a short answer fits in the
/// socket's buffer; if it does not, the rest is dropped) and ends the
/// writing side. Returns whether the client may still be reading (then
/// what it sends should be drained before closing, as [`finish`] does).
pub(super) fn send_now(stream: &mut TcpStream, response: &Response) -> bool {
    let mut bytes = response.head().into_bytes();
    bytes.extend_from_slice(&response.body);
    stream.set_nonblocking(true).is_ok()
        && stream.write_all(&bytes).is_ok()
        && stream.shutdown(Shutdown::Write).is_ok()
}

#[cfg(test)]
mod tests {
    use super::{reason, Refusal, Response};

    #[test]
    fn heads() {
        let r = Response::text(404, "no").with("Allow: GET".into());
        assert_eq!(
            r.head(),
            "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\n\
             Connection: close\r\nContent-Length: 3\r\nAllow: GET\r\n\r\n"
        );
        assert_eq!(r.body, b"no\n");
        for s in [200, 400, 404, 405, 408, 431, 500, 503] {
            assert!(!reason(s).is_empty(), "{s}");
        }
        for (refusal, status) in [
            (Refusal::Malformed("x"), 400),
            (Refusal::TooLarge, 431),
            (Refusal::Timeout, 408),
        ] {
            assert_eq!(Response::refusal(&refusal).map(|r| r.status), Some(status));
        }
        assert!(Response::refusal(&Refusal::Gone).is_none());
    }
}
