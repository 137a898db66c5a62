//! Per-thread trace buffers: one event per finished call (per poll, for
//! async sites), when tracing is on.
//!
//! Off unless a `.trace.json` output is requested or `TICKPROF_TRACE=1`;
//! events past the bound (`TICKPROF_TRACE_EVENTS`) are counted as dropped,
//! never stored. With tracing off, the hot path pays one predictable branch
//! on the mode read at entry (`crate::switches::MODE`).

use crate::site::CallSite;
use crate::switches::TRACE_LIMIT;
use core::sync::atomic::Ordering;
use std::cell::Cell;
use std::mem::ManuallyDrop;
use std::sync::{Mutex, MutexGuard};

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
pub(crate) struct Shared(Mutex<Buffer>);

impl Shared {
    /// Records one call. Called only when tracing is on.
    #[cold]
    #[inline(never)]
    pub fn record(&self, site: &'static CallSite, start: u64, end: u64) {
        if let Ok(mut b) = self.0.lock() {
            b.push(RawEvent { site, start, end });
        }
    }

    /// Copies the events (bounded wait: the owner holds the lock only to
    /// push one event).
    pub fn copy(&self) -> (Vec<RawEvent>, u64) {
        match self.0.try_lock() {
            Ok(b) => (b.events.clone(), b.dropped),
            Err(std::sync::TryLockError::Poisoned(e)) => {
                let b = e.into_inner();
                (b.events.clone(), b.dropped)
            }
            Err(std::sync::TryLockError::WouldBlock) => {
                std::thread::yield_now();
                self.0
                    .lock()
                    .map_or((Vec::new(), 0), |b| (b.events.clone(), b.dropped))
            }
        }
    }

    /// Forgets all events.
    pub fn clear(&self) {
        if let Ok(mut b) = self.0.lock() {
            b.events.clear();
            b.dropped = 0;
        }
    }
}

thread_local! {
    /// The forking thread's own trace buffer lock, held from the `fork`
    /// prepare handler to the parent or child handler.
    static HELD_FOR_FORK: Cell<Option<ManuallyDrop<MutexGuard<'static, Buffer>>>> =
        const { Cell::new(None) };
}

impl Shared {
    /// Before `fork`: takes the lock (a report on another thread may be
    /// copying the buffer), so that the child does not inherit it held.
    pub fn hold_for_fork(&'static self) {
        let g = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        HELD_FOR_FORK.with(|h| h.set(Some(ManuallyDrop::new(g))));
    }
}

/// After `fork`, in the parent or the child: releases the lock taken by
/// [`Shared::hold_for_fork`].
pub(crate) fn release_after_fork() {
    if let Some(g) = HELD_FOR_FORK.with(Cell::take) {
        drop(ManuallyDrop::into_inner(g));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m() {}
    static SITE: CallSite = CallSite::function(crate::site::path_of(m), Some("t"), "t.rs", 1);

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
        TRACE_LIMIT.store(crate::config::DEFAULT_TRACE_EVENTS, Ordering::Relaxed);
        assert_eq!(b.events.len(), 3);
        assert_eq!(b.dropped, 7);
        assert!(b.events.capacity() <= 1024);
    }
}
