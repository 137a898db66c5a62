//! `TICKPROF_HTTP`: the HTTP server, for `go tool pprof http://…` and
//! continuous-profiling agents. Its paths are one table
//! ([`routes::ROUTES`]); today `/debug/pprof/profile`.
//!
//! No client can stall it or the program:
//!
//! - the thread `tickprof http` accepts; each connection is served on its
//!   own thread (`tickprof http conn`), at most [`MAX_CONNECTIONS`] at a
//!   time; one more gets `503` at once, unread;
//! - the whole request head must arrive within [`conn::HEAD_DEADLINE`]
//!   (`408` otherwise) and fit in [`request::HEAD_CAP`] bytes (`431`); a
//!   malformed request line is a `400`, a method other than `GET`/`HEAD` a
//!   `405`, an unknown path a `404` listing the served paths;
//! - the response must be read within [`response::WRITE_DEADLINE`]; then
//!   the server stops writing and drains what the client still sends
//!   (bounded), so closing does not reset the connection under the answer.
//!
//! Everything runs inside `record::quietly`: the server's own work is
//! never recorded, and its threads never appear in reports.

mod conn;
mod request;
mod response;
mod routes;

pub(crate) use routes::Source;

use crate::record;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The most connections served at once (one thread each).
pub(crate) const MAX_CONNECTIONS: usize = 32;

/// The pause after a failed `accept` (out of file descriptors, say), so
/// the accept thread does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Binds `addr` and starts the accept thread `tickprof http`. Returns the
/// warning lines to print (an address beyond this machine; a failure to
/// bind or to start, after which nothing is served).
pub(crate) fn start(addr: SocketAddr, source: Source) -> Vec<String> {
    let mut warnings = Vec::new();
    if !addr.ip().is_loopback() {
        warnings.push(format!(
            "tickprof: warning: TICKPROF_HTTP={addr}: profiles are served beyond this machine (anyone who can reach {addr} can read the names and timings of your code)\n"
        ));
    }
    let started = TcpListener::bind(addr).and_then(|listener| {
        std::thread::Builder::new()
            .name("tickprof http".to_owned())
            .spawn(move || record::quietly(|| accept(&listener, source)))
    });
    if let Err(e) = started {
        warnings.push(format!(
            "tickprof: warning: TICKPROF_HTTP={addr}: cannot serve: {e}\n"
        ));
    }
    warnings
}

/// The accept loop: hands each connection to [`admit`], for ever.
fn accept(listener: &TcpListener, source: Source) {
    let live = Arc::new(AtomicUsize::new(0));
    loop {
        match listener.accept() {
            Ok((stream, _)) => admit(stream, &live, source),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => std::thread::sleep(ACCEPT_BACKOFF),
        }
    }
}

/// A connection's place among the [`MAX_CONNECTIONS`], given back on drop
/// (also when its thread unwinds).
struct Slot(Arc<AtomicUsize>);

impl Slot {
    /// A place, if one is free.
    fn take(live: &Arc<AtomicUsize>) -> Option<Slot> {
        let was = live.fetch_add(1, Ordering::AcqRel);
        let slot = Slot(Arc::clone(live));
        (was < MAX_CONNECTIONS).then_some(slot)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Starts a thread for `stream`, or answers `503` when all places are
/// taken or no thread can be started.
fn admit(mut stream: TcpStream, live: &Arc<AtomicUsize>, source: Source) {
    let Some(slot) = Slot::take(live) else {
        return response::refuse_busy(&mut stream);
    };
    let spare = stream.try_clone();
    let spawned = std::thread::Builder::new()
        .name("tickprof http conn".to_owned())
        .spawn(move || {
            let _slot = slot;
            record::quietly(|| conn::handle(stream, &source));
        });
    if let (Err(_), Ok(mut spare)) = (spawned, spare) {
        response::refuse_busy(&mut spare);
    }
}
