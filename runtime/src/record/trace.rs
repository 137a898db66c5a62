//! Per-thread trace buffers: one event per finished call (per poll, for
//! async sites), when tracing is on.
//!
//! Off unless a `.trace.json` output is requested or `TICKPROF_TRACE=1`;
//! events past the bound (`TICKPROF_TRACE_EVENTS`) are counted as dropped,
//! never stored. With tracing off, the hot path pays one predictable branch
//! on the mode read at entry (`crate::switches::MODE`).

#[cfg(unix)]
use crate::fork_lock;
use crate::site::CallSite;
use crate::switches::TRACE_LIMIT;
use core::sync::atomic::{AtomicU64, Ordering};
#[cfg(unix)]
use std::cell::Cell;
use std::sync::Mutex;

/// One recorded call, in raw ticks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawEvent {
    pub site: &'static CallSite,
    pub start: u64,
    pub end: u64,
}

/// One thread's events.
#[derive(Debug, Default)]
pub(crate) struct Buffer {
    pub events: Vec<RawEvent>,
    pub dropped: u64,
}

impl Buffer {
    /// Appends an event, or counts it as dropped past the bound.
    pub fn push(&mut self, e: RawEvent) {
        let limit = TRACE_LIMIT.load(Ordering::Relaxed);
        if self.events.len() < limit {
            if self.events.len() == self.events.capacity() {
                // Grow by doubling up to the bound, never past it.
                let want = (self.events.capacity() * 2).max(1024).min(limit);
                self.events.reserve_exact(want - self.events.len());
            }
            self.events.push(e);
        } else {
            self.dropped += 1;
        }
    }
}

/// One thread's recorded events, as the report copies them.
#[derive(Clone, Debug)]
pub(crate) struct ThreadEvents {
    pub thread_id: u64,
    pub thread_name: String,
    pub events: Vec<RawEvent>,
    pub dropped: u64,
}

/// A thread's trace buffer, shared with the report.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    buffer: Mutex<Buffer>,
    /// Events not stored because the buffer was locked when they ended: by
    /// the report copying it, or by this very thread (a marked call in a
    /// signal handler that interrupted a `record`). Never waited for.
    contended: AtomicU64,
}

impl Shared {
    /// Records one call. Called only when tracing is on, by the owning
    /// thread; never blocks (a signal handler on this thread may be
    /// interrupting a `record` that holds the lock).
    #[cold]
    #[inline(never)]
    pub fn record(&self, site: &'static CallSite, start: u64, end: u64) {
        match self.buffer.try_lock() {
            Ok(mut b) => b.push(RawEvent { site, start, end }),
            Err(std::sync::TryLockError::Poisoned(e)) => {
                e.into_inner().push(RawEvent { site, start, end });
            }
            Err(std::sync::TryLockError::WouldBlock) => {
                self.contended.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Copies the events (bounded wait: the owner holds the lock only to
    /// push one event).
    pub fn copy(&self) -> (Vec<RawEvent>, u64) {
        let contended = self.contended.load(Ordering::Relaxed);
        let (events, dropped) = match self.buffer.try_lock() {
            Ok(b) => (b.events.clone(), b.dropped),
            Err(std::sync::TryLockError::Poisoned(e)) => {
                let b = e.into_inner();
                (b.events.clone(), b.dropped)
            }
            Err(std::sync::TryLockError::WouldBlock) => {
                std::thread::yield_now();
                self.buffer
                    .lock()
                    .map_or((Vec::new(), 0), |b| (b.events.clone(), b.dropped))
            }
        };
        (events, dropped + contended)
    }

    /// Forgets all events.
    pub fn clear(&self) {
        if let Ok(mut b) = self.buffer.lock() {
            b.events.clear();
            b.dropped = 0;
        }
        self.contended.store(0, Ordering::Relaxed);
    }
}

thread_local! {
    /// The forking thread's own trace buffer lock, held from the `fork`
    /// prepare handler to the parent or child handler.
    #[cfg(unix)]
    static HELD_FOR_FORK: fork_lock::Held<Buffer> = const { Cell::new(None) };
}

#[cfg(unix)]
impl Shared {
    /// Before `fork`: takes the lock (a report on another thread may be
    /// copying the buffer), so that the child does not inherit it held.
    pub fn hold_for_fork(&'static self) {
        let g = self
            .buffer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        fork_lock::hold(&HELD_FOR_FORK, g);
    }
}

/// After `fork`, in the parent or the child: releases the lock taken by
/// [`Shared::hold_for_fork`].
#[cfg(unix)]
pub(crate) fn release_after_fork() {
    drop(fork_lock::take(&HELD_FOR_FORK));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m() {}
    static SITE: CallSite = CallSite::function(crate::site::path_of(m), Some("t"), "t.rs", 1);

    #[test]
    fn a_record_that_finds_the_buffer_locked_counts_a_drop_instead_of_waiting() {
        let shared = Shared::default();
        shared.record(&SITE, 1, 2);
        {
            let _held = shared.buffer.lock().unwrap();
            shared.record(&SITE, 3, 4); // would deadlock with a blocking lock
        }
        let (events, dropped) = shared.copy();
        assert_eq!((events.len(), dropped), (1, 1));
        shared.clear();
        assert_eq!(shared.copy().1, 0);
    }

    #[test]
    fn buffer_is_bounded_and_counts_drops() {
        TRACE_LIMIT.store(3, Ordering::Relaxed);
        let mut b = Buffer::default();
        for i in 0..10 {
            b.push(RawEvent {
                site: &SITE,
                start: i,
                end: i + 1,
            });
        }
        TRACE_LIMIT.store(crate::defaults::DEFAULT_TRACE_EVENTS, Ordering::Relaxed);
        assert_eq!(b.events.len(), 3);
        assert_eq!(b.dropped, 7);
        assert!(b.events.capacity() <= 1024);
    }
}
