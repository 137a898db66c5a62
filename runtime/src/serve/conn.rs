//! Workers: a received request is answered on a thread of its own
//! (`tickprof http conn`), at most [`MAX_WORKERS`] at a time, so a slow
//! answer (`?seconds=N`, a client that reads slowly) delays no other.

use super::request::Request;
use super::response::{self, Response};
use super::routes::{self, Source};
use std::net::TcpStream;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};

/// The most requests answered at once (one thread each); one more gets
/// `503` at once.
pub(super) const MAX_WORKERS: usize = 32;

/// The most answered connections being drained at once (each on the
/// thread that answered it, after giving back its worker's place); one
/// more is closed at once.
pub(super) const MAX_DRAINING: usize = 128;

/// The count of live workers (or, for [`DRAINING`], of draining threads).
pub(super) struct Workers(Arc<AtomicUsize>, usize);

/// The threads draining an answered connection.
static DRAINING: LazyLock<Workers> = LazyLock::new(|| Workers::capped(MAX_DRAINING));

impl Workers {
    /// No worker yet.
    pub fn new() -> Workers {
        Workers::capped(MAX_WORKERS)
    }

    /// No worker yet, at most `cap` at a time.
    fn capped(cap: usize) -> Workers {
        Workers(Arc::new(AtomicUsize::new(0)), cap)
    }

    /// A place for one more worker, if one is free.
    fn take(&self) -> Option<Slot> {
        let was = self.0.fetch_add(1, Ordering::AcqRel);
        let slot = Slot(Arc::clone(&self.0));
        (was < self.1).then_some(slot)
    }
}

/// A worker's place, given back on drop (also when its thread unwinds).
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Answers `req` on `stream` on a new worker thread. Gives `stream` back
/// when all places are taken or no thread can be started.
pub(super) fn dispatch(
    stream: TcpStream,
    req: Request,
    workers: &Workers,
    source: Source,
) -> Result<(), TcpStream> {
    let Some(slot) = workers.take() else {
        return Err(stream);
    };
    let spare = stream.try_clone();
    let spawned = std::thread::Builder::new()
        .name("tickprof http conn".to_owned())
        .spawn(move || {
            crate::record::quietly(|| answer(stream, &req, &source, slot));
        });
    match (spawned, spare) {
        (Ok(_), _) => Ok(()),
        (Err(_), Ok(spare)) => Err(spare),
        (Err(_), Err(_)) => Ok(()),
    }
}

/// Answers one request on `stream` and closes it. The worker's `slot` is
/// given back once the response is written: draining what the client
/// still sends (a client trickling bytes keeps that going for
/// [`DRAIN_DEADLINE`]) takes a place among [`MAX_DRAINING`] instead, or,
/// when none is free, the connection is closed at once.
///
/// [`DRAIN_DEADLINE`]: super::response::DRAIN_DEADLINE
fn answer(mut stream: TcpStream, req: &Request, source: &Source, slot: Slot) {
    if stream.set_nonblocking(false).is_err() {
        return;
    }
    // A handler that panics (it should not) costs its client a 500, never
    // the server or the program.
    let response = catch_unwind(AssertUnwindSafe(|| routes::answer(req, source)))
        .unwrap_or_else(|_| Response::text(500, "tickprof: internal error"));
    let written = response.send(&mut stream, req.head_only());
    drop(slot);
    if written {
        if let Some(_place) = DRAINING.take() {
            response::finish(&mut stream);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Workers, MAX_WORKERS};

    #[test]
    fn workers_are_capped_and_places_come_back() {
        let w = Workers::new();
        let slots: Vec<_> = (0..MAX_WORKERS).map(|_| w.take().unwrap()).collect();
        assert!(w.take().is_none());
        assert!(w.take().is_none());
        drop(slots);
        assert!(w.take().is_some());
        assert_eq!(w.0.load(std::sync::atomic::Ordering::SeqCst), 0);
    }
}
