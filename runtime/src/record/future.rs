//! `#[profile] async fn`: each poll is timed on the polling thread's stack.
//!
//! A poll pushes a frame for the site, so marked calls made during the poll
//! are its children, whichever thread polls and however tasks interleave.
//! The site's total and self time are *busy* time (the sum of its polls);
//! *wall* time runs from the first poll to completion. A future dropped
//! before it completes counts as cancelled.

use super::poll::{cancel, poll_enter, poll_exit, Poll as Frame};
use crate::site::CallSite;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

const NEW: u8 = 0;
const POLLED: u8 = 1;
const DONE: u8 = 2;

/// A future timed poll by poll. Created by the code `#[profile]` generates
/// for an `async fn`.
pub struct Instrumented<F> {
    site: &'static CallSite,
    inner: F,
    first_poll: u64,
    busy: u64,
    state: u8,
}

impl<F> Instrumented<F> {
    /// Wraps the body of an `async fn`.
    pub fn new(site: &'static CallSite, inner: F) -> Self {
        Instrumented {
            site,
            inner,
            first_poll: 0,
            busy: 0,
            state: NEW,
        }
    }
}

/// Pops the poll's frame when dropped, also while unwinding.
struct PollFrame<'a> {
    frame: Frame,
    busy: &'a mut u64,
    completed: Option<(u64, u64)>,
}

impl Drop for PollFrame<'_> {
    fn drop(&mut self) {
        *self.busy += poll_exit(&self.frame, self.completed);
    }
}

impl<F: Future> Future for Instrumented<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `inner` is structurally pinned: it is never moved out of
        // `self`, not by this method and not by `Drop`; the other fields are
        // plain data that are not pinned.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: see above; `this.inner` stays where it is.
        let inner = unsafe { Pin::new_unchecked(&mut this.inner) };
        let Some(frame) = poll_enter(this.site) else {
            let r = inner.poll(cx);
            if r.is_ready() {
                this.state = DONE;
            }
            return r;
        };
        if this.state == NEW {
            this.first_poll = frame.start();
            this.state = POLLED;
        }
        let busy_before = this.busy;
        let mut guard = PollFrame {
            frame,
            busy: &mut this.busy,
            completed: None,
        };
        let r = inner.poll(cx);
        if r.is_ready() {
            guard.completed = Some((busy_before, this.first_poll));
            this.state = DONE;
        }
        drop(guard);
        r
    }
}

impl<F> Drop for Instrumented<F> {
    fn drop(&mut self) {
        if self.state != DONE {
            cancel(self.site);
        }
    }
}
