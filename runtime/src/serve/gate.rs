//! The thread `tickprof http`: accepts connections and receives their
//! request heads, all of them at once, without blocking on any client;
//! a complete (or refused) head goes to a worker ([`conn::dispatch`]).
//!
//! A client that sends nothing, or a byte at a time, costs a place among
//! [`MAX_PENDING`] and at most [`request::HEAD_CAP`] bytes until its
//! [`HEAD_DEADLINE`], never a thread or another client's time.

use super::conn::{self, Workers};
use super::poll;
use super::request::{Partial, Refusal, HEAD_DEADLINE};
use super::response;
use super::routes::Source;
use std::io;
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// The most connections whose head is still arriving; one more gets `503`
/// at once.
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

/// The body of `tickprof http`, for ever. `listener` is non-blocking.
pub(super) fn run(listener: &TcpListener, source: Source) {
    let workers = Workers::new();
    let mut pending: Vec<Pending> = Vec::new();
    loop {
        let now = Instant::now();
        let timeout = pending
            .iter()
            .map(|p| p.deadline.saturating_duration_since(now))
            .min();
        let streams: Vec<&TcpStream> = pending.iter().map(|p| &p.stream).collect();
        let (incoming, ready) = poll::wait(listener, &streams, timeout);
        drop(streams);
        // Heads first (in arrival order), then new connections.
        let now = Instant::now();
        let mut waiting = Vec::with_capacity(pending.len());
        for (mut p, ready) in pending.drain(..).zip(ready) {
            let done = if ready {
                p.head.read(&mut p.stream)
            } else {
                None
            };
            match done.or_else(|| (now >= p.deadline).then_some(Err(Refusal::Timeout))) {
                None => waiting.push(p),
                Some(Err(Refusal::Gone)) => {}
                Some(head) => conn::dispatch(p.stream, head, &workers, source),
            }
        }
        pending = waiting;
        if incoming {
            accept_all(listener, &mut pending);
        }
    }
}

/// Accepts every connection waiting: each joins `pending`, or gets `503`
/// when [`MAX_PENDING`] are pending already.
fn accept_all(listener: &TcpListener, pending: &mut Vec<Pending>) {
    loop {
        match listener.accept() {
            Ok((mut stream, _)) => {
                if pending.len() >= MAX_PENDING || stream.set_nonblocking(true).is_err() {
                    response::refuse_busy(&mut stream);
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
