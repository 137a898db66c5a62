//! Guards: what a marked call holds from entry to exit, for functions and
//! scopes ([`Guard`]) and for the polls of an `async fn` ([`Poll`]).

use super::node::{bump, Node};
use super::registry;
use super::stack::{current, ThreadState, STATE};
use crate::clock::ticks;
use crate::counters::Acc;
use crate::site::CallSite;
use crate::switches::{mode, recording, MAX_TICKS, OFF, RECORD, RECORDED_ANY, TRACE};
use crate::tree::Tree;
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
    #[inline(always)]
    pub fn enter(site: &'static CallSite) -> Guard {
        let mode = mode();
        if mode != RECORD {
            if mode == OFF {
                return Guard::inert();
            }
            return Guard::enter_slow(site, mode);
        }
        match current().push(site) {
            Some((node, depth)) => Guard {
                start: ticks(),
                node,
                depth,
                _not_send: PhantomData,
            },
            None => Guard::miss(site),
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

    /// Any mode but plain recording and off: the bits of `mode` say what
    /// to do. With tracing on, the frame is pushed as usual and the
    /// guard's depth carries [`TRACED`], which sends its drop to the slow
    /// path, where the call is also appended to the thread's trace buffer.
    #[cold]
    #[inline(never)]
    fn enter_slow(site: &'static CallSite, mode: u8) -> Guard {
        #[cfg(feature = "failpoints")]
        if mode & crate::switches::FAIL != 0 {
            crate::fail::state::at_entry(site);
        }
        if mode & RECORD == 0 {
            return Guard::inert();
        }
        if mode & TRACE == 0 {
            return match STATE.with(|s| s.push(site)) {
                Some((node, depth)) => Guard {
                    start: ticks(),
                    node,
                    depth,
                    _not_send: PhantomData,
                },
                None => Guard::miss(site),
            };
        }
        match STATE.with(|s| s.push(site)) {
            Some((node, depth)) => Guard {
                start: ticks(),
                node,
                depth: depth | TRACED,
                _not_send: PhantomData,
            },
            None => Guard::miss(site),
        }
    }

    /// No frame was pushed: profiling off, a re-entrant call, or this
    /// thread's state already torn down (then the call is timed detached).
    #[cold]
    #[inline(never)]
    fn miss(site: &'static CallSite) -> Guard {
        if recording() && STATE.with(ThreadState::is_dead) {
            return Guard::detached(site);
        }
        Guard::inert()
    }

    /// A guard for a call made after this thread's profiler state was torn
    /// down (from another thread-local's destructor): it has no stack, and
    /// `node` holds the site.
    #[cold]
    #[inline(never)]
    fn detached(site: &'static CallSite) -> Guard {
        Guard {
            start: ticks(),
            node: (site as *const CallSite).cast(),
            depth: DETACHED,
            _not_send: PhantomData,
        }
    }
}

/// Depth of a guard created after its thread's profiler state was gone.
pub(super) const DETACHED: usize = usize::MAX;
/// Bit set in the depth of a guard whose call is also traced.
pub(super) const TRACED: usize = 1 << (usize::BITS - 2);

/// A detached call (made after its thread's state was torn down): recorded
/// straight into the finished threads' tree, as a call with no marked
/// caller, or counted as lost if that lock cannot be had promptly.
#[cold]
#[inline(never)]
pub(super) fn record_detached(site: &'static CallSite, start: u64, end: u64) {
    let one = Acc::one_call(
        end.wrapping_sub(start),
        MAX_TICKS.load(Ordering::Relaxed),
        std::thread::panicking(),
    );
    if !site.is_internal() {
        RECORDED_ANY.store(true, Ordering::Relaxed);
    }
    // Merging allocates: with a marked global allocator that is a marked
    // call, which must not be recorded detached in turn.
    current().while_busy(|| registry::add_detached(&Tree::single(site, one)));
}

impl Drop for Guard {
    #[inline(always)]
    fn drop(&mut self) {
        if self.depth == 0 {
            return;
        }
        let end = ticks();
        current().pop(self.depth, self.node, self.start, end);
    }
}

/// One poll of an async call, pushed on this thread's stack.
pub(crate) struct Poll {
    node: *const Node,
    depth: usize,
    start: u64,
}

impl Poll {
    /// The tick count at the start of the poll.
    pub(crate) fn start(&self) -> u64 {
        self.start
    }
}

/// Pushes a frame for one poll of `site`; `None` when not recording.
#[inline]
pub(crate) fn poll_enter(site: &'static CallSite) -> Option<Poll> {
    if !recording() {
        return None;
    }
    let (node, depth) = STATE.with(|s| s.push(site))?;
    Some(Poll {
        node,
        depth,
        start: ticks(),
    })
}

/// Pops a poll's frame and adds its busy time. If the call completed,
/// also counts the call with its busy time (min/max) and wall time.
/// Returns the poll's accepted delta (0 if rejected).
#[inline]
pub(crate) fn poll_exit(p: &Poll, completed: Option<(u64, u64)>) -> u64 {
    let end = ticks();
    let delta = end.wrapping_sub(p.start);
    let mut accepted = 0;
    STATE.with(|s| {
        if !s.pop_frame(p.depth, p.node) {
            return;
        }
        // SAFETY: as in `ThreadState::pop`: a node of this thread's live arena.
        let node = unsafe { &*p.node };
        accepted = node.record_poll(delta);
        if std::thread::panicking() {
            bump(&node.c.unwound, 1);
        }
        if crate::switches::tracing() {
            s.trace(node, p.start, end);
        }
        if let Some((busy_before, first_poll)) = completed {
            bump(&node.c.calls, 1);
            node.min_max(busy_before + accepted);
            bump(&node.c.wall, end.wrapping_sub(first_poll));
        }
    });
    accepted
}

/// Counts an async call of `site` dropped before completion, on the
/// dropping thread's current path.
pub(crate) fn cancel(site: &'static CallSite) {
    if let Some(p) = poll_enter(site) {
        STATE.with(|s| {
            if s.pop_frame(p.depth, p.node) {
                // SAFETY: as in `poll_exit`.
                bump(unsafe { &(*p.node).c.cancelled }, 1);
            }
        });
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
        if let Some((node, depth)) = s.push(site) {
            s.pop(depth, node, 0, delta);
        }
    });
}
