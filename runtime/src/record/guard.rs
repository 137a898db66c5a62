//! Guards: what a marked function or scope holds from entry to exit
//! ([`Guard`]); the polls of an `async fn` are in [`super::poll`]. Both
//! leave the fast path for the same cold paths ([`super::cold`]).

use super::cold;
use super::frame::{self, Frame};
use super::node::Node;
use super::stack::{current, ThreadState, STATE};
use crate::clock::ticks;
use crate::site::CallSite;
use crate::switches::{mode, recording, OFF, RECORD};
use core::marker::PhantomData;
use core::sync::atomic::Ordering;

/// Times one activation of a call site, from [`Guard::enter`] to drop.
///
/// Created by the code `#[profile]` and `prof_scope!` generate. Not `Send`:
/// a guard belongs to the thread whose stack it was pushed on.
#[must_use = "the guard times until it is dropped"]
pub struct Guard {
    start: u64,
    node: *const Node,
    depth: usize,
    _not_send: PhantomData<*const ()>,
}

impl Guard {
    /// Starts timing one activation of `site`.
    ///
    /// The cold paths return only the frame (node and depth, 16 bytes, in
    /// registers) and the clock is read here: a cold path that returned a
    /// whole guard would return it through memory, and the guard of every
    /// call, fast path included, would then live on the stack.
    #[inline(always)]
    pub fn enter(site: &'static CallSite) -> Guard {
        Guard::enter_in_mode(site, mode())
    }

    /// [`Guard::enter`] with the mode already read: a marked function
    /// reads it once for its off test and this entry.
    #[inline(always)]
    pub(crate) fn enter_in_mode(site: &'static CallSite, mode: u8) -> Guard {
        let (node, depth) = if mode != RECORD {
            if mode == OFF {
                return Guard::inert();
            }
            cold::enter(site, mode, false)
        } else {
            current().push(site)
        };
        Guard {
            start: ticks(),
            node,
            depth,
            _not_send: PhantomData,
        }
    }

    /// A guard that does nothing: profiling is off.
    #[inline(always)]
    fn inert() -> Guard {
        Guard {
            start: 0,
            node: core::ptr::null(),
            depth: 0,
            _not_send: PhantomData,
        }
    }

    /// Ends the activation of a call that returned: the code `#[profile]`
    /// generates calls it after the body has produced its value. The call
    /// did not unwind, so the drop's unwinding check
    /// (`std::thread::panicking()`) is skipped. Early returns (`return`,
    /// `?`) and panics leave through the drop, which checks.
    ///
    /// Inlined always in optimised builds (the hot path); in builds with
    /// debug assertions a plain `#[inline]`, so that an unoptimised crate
    /// calls one copy instead of carrying a second inlined pop (after the
    /// drop's) in every marked function.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn exit(self) {
        core::mem::ManuallyDrop::new(self).end(false);
    }

    /// Reads the clock and pops the frame (nothing for an inert guard);
    /// `check`: whether the call may be unwinding (see [`Node::record`]).
    #[inline(always)]
    fn end(&self, check: bool) {
        if self.depth == 0 {
            return;
        }
        let end = ticks();
        pop(current(), (self.node, self.depth), self.start, end, check);
    }
}

impl Drop for Guard {
    #[inline(always)]
    fn drop(&mut self) {
        self.end(true);
    }
}

/// Pops a guard's frame and records the call: on top of the stack, the
/// fast path; anything else goes to the cold exit.
#[inline(always)]
fn pop(s: &ThreadState, f: Frame, start: u64, end: u64, check: bool) {
    if !s.pop_top(f.0, start, end, check) {
        cold::exit(s, f, start, end, check);
    }
}

/// Calls and ticks of `site` summed over this thread's tree nodes.
pub(crate) fn site_totals_on_this_thread(site: &'static CallSite) -> (u64, u64) {
    let want = (site as *const CallSite).cast_mut();
    STATE.with(|s| {
        let Some(arena) = s.arena() else {
            return (0, 0);
        };
        arena
            .nodes()
            .filter(|n| n.site.load(Ordering::Relaxed) == want)
            .fold((0, 0), |(c, t), n| {
                (
                    c + n.c.calls.load(Ordering::Relaxed),
                    t + n.c.ticks.load(Ordering::Relaxed),
                )
            })
    })
}

/// Records a raw delta against `site` as one finished call on this thread,
/// exactly as a guard's drop would (rejection included). For tests of the
/// accumulation and rejection rules without a real clock.
pub fn record_raw(site: &'static CallSite, delta: u64) {
    if !recording() {
        return;
    }
    STATE.with(|s| {
        let (node, depth) = s.push(site);
        if !node.is_null() && depth != frame::DETACHED {
            pop(s, (node, depth), 0, delta, true);
        }
    });
}
