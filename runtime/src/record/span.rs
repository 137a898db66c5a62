//! Frames for spans entered and exited from outside tickprof's own guards
//! (the `tracing` bridge): timed by the rules of `#[profile] async fn`.
//!
//! Each enter pushes a frame on the entering thread's stack, so marked calls
//! made while the span is entered are its children; each exit pops it and
//! adds the time to the node (busy time, no call). When the span closes, the
//! call is counted once with its summed busy time (min/max) and its wall
//! time (first enter to close), on the closing thread's current path, as a
//! cancelled future is counted on the dropping thread's. Exits out of order
//! are resynchronised as guards dropped out of order are.

use super::poll::{complete, poll_enter, poll_exit, Poll};
use crate::site::CallSite;

/// One entry of a span: a frame on this thread's stack.
pub(crate) struct Entry(Poll);

impl Entry {
    /// The tick count at entry.
    pub(crate) fn start(&self) -> u64 {
        self.0.start()
    }
}

/// Pushes a frame for one entry of `site`; `None` when not recording.
pub(crate) fn enter(site: &'static CallSite) -> Option<Entry> {
    poll_enter(site).map(Entry)
}

/// Pops an entry's frame and adds its time; returns the accepted delta.
pub(crate) fn exit(entry: &Entry) -> u64 {
    poll_exit(&entry.0, None)
}

/// Counts one call of `site` with `busy` ticks, entered first at tick
/// `first`, on this thread's current path.
pub(crate) fn close(site: &'static CallSite, busy: u64, first: u64) {
    complete(site, busy, first);
}
