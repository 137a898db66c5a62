//! Workers: a received head is answered on a thread of its own
//! (`tickprof http conn`), at most [`MAX_WORKERS`] at a time, so a slow
//! answer (`?seconds=N`, a client that reads slowly) delays no other.

use super::request::{Refusal, Request, HEAD_CAP, HEAD_DEADLINE};
use super::response::{self, Response};
use super::routes::{self, Source};
use std::net::TcpStream;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The most requests answered at once (one thread each); one more gets
/// `503` at once.
pub(super) const MAX_WORKERS: usize = 32;

/// The count of live workers.
pub(super) struct Workers(Arc<AtomicUsize>);

impl Workers {
    /// No worker yet.
    pub fn new() -> Workers {
        Workers(Arc::new(AtomicUsize::new(0)))
    }

    /// A place for one more worker, if one is free.
    fn take(&self) -> Option<Slot> {
        let was = self.0.fetch_add(1, Ordering::AcqRel);
        let slot = Slot(Arc::clone(&self.0));
        (was < MAX_WORKERS).then_some(slot)
    }
}

/// A worker's place, given back on drop (also when its thread unwinds).
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Answers `head` on `stream` on a new worker thread, or with `503` at
/// once when all places are taken or no thread can be started.
pub(super) fn dispatch(
    mut stream: TcpStream,
    head: Result<Request, Refusal>,
    workers: &Workers,
    source: Source,
) {
    let Some(slot) = workers.take() else {
        return response::refuse_busy(&mut stream);
    };
    let spare = stream.try_clone();
    let spawned = std::thread::Builder::new()
        .name("tickprof http conn".to_owned())
        .spawn(move || {
            let _slot = slot;
            crate::record::quietly(|| answer(stream, head, &source));
        });
    if let (Err(_), Ok(mut spare)) = (spawned, spare) {
        response::refuse_busy(&mut spare);
    }
}

/// Answers one request (or refusal) on `stream` and closes it.
fn answer(mut stream: TcpStream, head: Result<Request, Refusal>, source: &Source) {
    if stream.set_nonblocking(false).is_err() {
        return;
    }
    let (response, head_only) = match head {
        // A handler that panics (it should not) costs its client a 500,
        // never the server or the program.
        Ok(req) => (
            catch_unwind(AssertUnwindSafe(|| routes::answer(&req, source)))
                .unwrap_or_else(|_| Response::text(500, "tickprof: internal error")),
            req.head_only(),
        ),
        Err(refusal) => match refused(&refusal) {
            Some(r) => (r, false),
            None => return,
        },
    };
    response.send(&mut stream, head_only);
}

/// The answer to a refused head (`None`: the client is gone).
fn refused(refusal: &Refusal) -> Option<Response> {
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
