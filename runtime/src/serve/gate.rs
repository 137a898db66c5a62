//! The thread `tickprof http`: accepts connections, receives their request
//! heads, and answers refusals, for all clients at once and without
//! blocking on any; a complete head goes to a worker ([`conn::dispatch`]).
//!
//! A client that sends nothing, or a byte at a time, costs a place among
//! [`MAX_PENDING`] and at most [`HEAD_CAP`] bytes until its
//! [`HEAD_DEADLINE`], never a thread or another client's time. A refused
//! client (`400`, `408`, `431`, `503`) gets its answer at once; then what
//! it still sends is drained for at most [`DRAIN_DEADLINE`] (among at most
//! [`MAX_PENDING`] such), so that the close does not reset the answer.
//!
//! [`HEAD_CAP`]: super::request::HEAD_CAP

use super::conn::{self, Workers};
use super::poll;
use super::request::{Partial, Refusal, HEAD_DEADLINE};
use super::response::{self, Response, DRAIN_CAP, DRAIN_DEADLINE};
use super::routes::Source;
use std::io::{self, Read};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// The most connections whose head is arriving; one more gets `503` at
/// once. (The same bound holds the refused connections being drained.)
pub(super) const MAX_PENDING: usize = 512;

/// The pause after a failed `accept` (out of file descriptors, say), so
/// the thread does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// A connection whose head is arriving.
struct Pending {
    stream: TcpStream,
    head: Partial,
    deadline: Instant,
}

/// A refused connection, answered, whose input is drained until it closes.
struct Closing {
    stream: TcpStream,
    deadline: Instant,
    drained: usize,
}

/// The body of `tickprof http`, for ever. `listener` is non-blocking.
pub(super) fn run(listener: &TcpListener, source: Source) {
    let workers = Workers::new();
    let mut pending: Vec<Pending> = Vec::new();
    let mut closing: Vec<Closing> = Vec::new();
    loop {
        let now = Instant::now();
        let timeout = (pending.iter().map(|p| p.deadline))
            .chain(closing.iter().map(|c| c.deadline))
            .min()
            .map(|d| d.saturating_duration_since(now));
        let streams: Vec<&TcpStream> = (pending.iter().map(|p| &p.stream))
            .chain(closing.iter().map(|c| &c.stream))
            .collect();
        let (incoming, mut ready) = poll::wait(listener, &streams, timeout);
        drop(streams);
        let ready_closing = ready.split_off(pending.len().min(ready.len()));
        let now = Instant::now();
        for (mut c, ready) in std::mem::take(&mut closing).into_iter().zip(ready_closing) {
            if (!ready || drain(&mut c)) && now < c.deadline {
                closing.push(c);
            }
        }
        // Heads in arrival order, then new connections.
        for (mut p, ready) in std::mem::take(&mut pending).into_iter().zip(ready) {
            let done = if ready {
                p.head.read(&mut p.stream)
            } else {
                None
            };
            match done.or_else(|| (now >= p.deadline).then_some(Err(Refusal::Timeout))) {
                None => pending.push(p),
                Some(Ok(req)) => {
                    if let Err(stream) = conn::dispatch(p.stream, req, &workers, source) {
                        let busy = Response::busy("too many requests in progress");
                        refuse(stream, &busy, &mut closing);
                    }
                }
                Some(Err(refusal)) => {
                    if let Some(r) = Response::refusal(&refusal) {
                        refuse(p.stream, &r, &mut closing);
                    }
                }
            }
        }
        if incoming {
            accept_all(listener, &mut pending, &mut closing);
        }
    }
}

/// Accepts every connection waiting: each joins `pending`, or gets `503`
/// when [`MAX_PENDING`] are pending already.
fn accept_all(listener: &TcpListener, pending: &mut Vec<Pending>, closing: &mut Vec<Closing>) {
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                if pending.len() >= MAX_PENDING || stream.set_nonblocking(true).is_err() {
                    refuse(stream, &Response::busy("too many connections"), closing);
                    continue;
                }
                pending.push(Pending {
                    stream,
                    head: Partial::new(),
                    deadline: Instant::now() + HEAD_DEADLINE,
                });
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(_) => return std::thread::sleep(ACCEPT_BACKOFF),
        }
    }
}

/// Answers `stream` with `response` at once, then drains it (or closes it
/// at once when [`MAX_PENDING`] are being drained already).
fn refuse(mut stream: TcpStream, response: &Response, closing: &mut Vec<Closing>) {
    if response::send_now(&mut stream, response) && closing.len() < MAX_PENDING {
        closing.push(Closing {
            stream,
            deadline: Instant::now() + DRAIN_DEADLINE,
            drained: 0,
        });
    }
}

/// Reads and drops what `c` has now. Returns whether to keep draining
/// (false at its end, an error, or [`DRAIN_CAP`] bytes).
fn drain(c: &mut Closing) -> bool {
    let mut sink = [0u8; 16 * 1024];
    loop {
        match c.stream.read(&mut sink) {
            Ok(0) => return false,
            Ok(n) => {
                c.drained += n;
                if c.drained >= DRAIN_CAP {
                    return false;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return e.kind() == io::ErrorKind::WouldBlock,
        }
    }
}
