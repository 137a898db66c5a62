//! Guards: what a marked call holds from entry to exit, for functions and
//! scopes ([`Guard`]) and for the polls of an `async fn` ([`Poll`]).

use super::hook::{self, Ended};
use super::node::{bump, Node};
use super::registry;
use super::stack::{current, STATE};
use crate::clock::ticks;
use crate::counters::Acc;
use crate::site::CallSite;
use crate::switches::{mode, recording, HOOK, LOG, MAX_TICKS, OFF, RECORD, RECORDED_ANY, TRACE};
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
    ///
    /// The cold paths return only the frame (node and depth, 16 bytes, in
    /// registers) and the clock is read here: a cold path that returned a
    /// whole guard would return it through memory, and the guard of every
    /// call, fast path included, would then live on the stack.
    #[inline(always)]
    pub fn enter(site: &'static CallSite) -> Guard {
        let mode = mode();
        let (node, depth) = if mode != RECORD {
            if mode == OFF {
                return Guard::inert();
            }
            Guard::enter_slow(site, mode)
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

    /// Any mode but plain recording and off: the bits of `mode` say what
    /// to do. Tracing and hooks push the frame as usual, the guard's depth
    /// carries [`TRACED`] / [`HOOKED`] and its node address is tagged
    /// ([`TAG`]), which sends its drop to the slow path (`pop_slow`), where
    /// the call is also traced and the exit hooks run. Hooks with the profile off give a guard marked
    /// [`UNRECORDED`] that only runs the hooks.
    #[cold]
    #[inline(never)]
    fn enter_slow(site: &'static CallSite, mode: u8) -> (*const Node, usize) {
        #[cfg(feature = "failpoints")]
        if mode & crate::switches::FAIL != 0 {
            crate::fail::state::at_entry(site);
        }
        let hooked = mode & (HOOK | LOG) != 0 && !site.is_internal();
        if hooked && hook::in_hook() {
            // A marked call made by a hook: not hooked, not recorded.
            return (core::ptr::null(), 0);
        }
        if mode & RECORD == 0 {
            return if hooked {
                Guard::unrecorded(site)
            } else {
                (core::ptr::null(), 0)
            };
        }
        let mut bits = 0;
        if mode & TRACE != 0 {
            bits |= TRACED;
        }
        if hooked {
            bits |= HOOKED;
        }
        let (node, depth) = STATE.with(|s| s.push(site));
        if node.is_null() || depth == DETACHED {
            return (node, depth);
        }
        if hooked {
            hook::enter(site, depth, ticks(), false);
        }
        // Tagged, so that the drop's fast path (which compares the node
        // only) cannot match it: it goes to `pop_slow` to be traced and
        // hooked.
        let node = if bits != 0 {
            node.cast::<u8>().wrapping_add(TAG).cast::<Node>()
        } else {
            node
        };
        (node, depth | bits)
    }

    /// Hooks with the profile off: no frame, `node` holds the site, and the
    /// depth is the hooks' own count for this thread.
    #[cold]
    #[inline(never)]
    fn unrecorded(site: &'static CallSite) -> (*const Node, usize) {
        // The drop reads the top of the thread's stack: make sure there is
        // one to read, set up or not.
        current().ensure_stack();
        let depth = hook::unrecorded_enter();
        hook::enter(site, depth, ticks(), false);
        (
            (site as *const CallSite).cast(),
            depth | HOOKED | UNRECORDED,
        )
    }
}

/// Depth of a guard created after its thread's profiler state was gone.
pub(super) const DETACHED: usize = usize::MAX;
/// Bit set in the depth of a guard whose call is also traced.
pub(super) const TRACED: usize = 1 << (usize::BITS - 2);
/// Bit set in the depth of a guard whose exit runs the hooks.
pub(super) const HOOKED: usize = 1 << (usize::BITS - 3);
/// Bit set in the depth of a hooked guard with no frame (profile off):
/// its `node` holds the site.
pub(super) const UNRECORDED: usize = 1 << (usize::BITS - 4);
/// The depth bits that are not the depth.
pub(super) const FLAGS: usize = TRACED | HOOKED | UNRECORDED;
/// Set in the node address of a traced or hooked guard (nodes are aligned
/// to 64 bytes, so the bit is free): the drop's fast path compares the
/// guard's node with the node on top of the stack and nothing else, and a
/// tagged address never equals a stacked one.
pub(super) const TAG: usize = 1;

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

impl Guard {
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
        current().pop(self.depth, self.node, self.start, end, check);
    }
}

impl Drop for Guard {
    #[inline(always)]
    fn drop(&mut self) {
        self.end(true);
    }
}

/// One poll of an async call, pushed on this thread's stack (or, hooks
/// with the profile off, only counted by the hooks: `node` null).
pub(crate) struct Poll {
    site: &'static CallSite,
    node: *const Node,
    depth: usize,
    start: u64,
    hooked: bool,
}

impl Poll {
    /// The tick count at the start of the poll.
    pub(crate) fn start(&self) -> u64 {
        self.start
    }
}

/// Pushes a frame for one poll of `site` and runs the entry hooks; `None`
/// when neither recording nor hooked.
#[inline]
pub(crate) fn poll_enter(site: &'static CallSite) -> Option<Poll> {
    let mode = mode();
    let hooked = mode & (HOOK | LOG) != 0 && !site.is_internal();
    if hooked && hook::in_hook() {
        return None;
    }
    if mode & RECORD == 0 {
        if !hooked {
            return None;
        }
        let depth = hook::unrecorded_enter();
        hook::enter(site, depth, ticks(), true);
        return Some(Poll {
            site,
            node: core::ptr::null(),
            depth,
            start: ticks(),
            hooked,
        });
    }
    let (node, depth) = STATE.with(|s| s.push(site));
    if node.is_null() || depth == DETACHED {
        return None;
    }
    if hooked {
        hook::enter(site, depth, ticks(), true);
    }
    Some(Poll {
        site,
        node,
        depth,
        start: ticks(),
        hooked,
    })
}

/// Pops a poll's frame and adds its busy time. If the call completed,
/// also counts the call with its busy time (min/max) and wall time.
/// Returns the poll's accepted delta (0 if rejected). Then runs the exit
/// hooks.
#[inline]
pub(crate) fn poll_exit(p: &Poll, completed: Option<(u64, u64)>) -> u64 {
    let end = ticks();
    let delta = end.wrapping_sub(p.start);
    let mut accepted = 0;
    let mut out_of_order = false;
    if p.node.is_null() {
        out_of_order = hook::unrecorded_exit(p.depth);
    } else {
        STATE.with(|s| {
            out_of_order = s.top_depth() != p.depth;
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
    }
    if p.hooked {
        hook::exit(&Ended {
            site: p.site,
            depth: p.depth,
            start: p.start,
            end,
            out_of_order,
            poll: true,
            completed: completed.is_some(),
            returned: false,
        });
    }
    accepted
}

/// Counts an async call of `site` dropped before completion, on the
/// dropping thread's current path.
pub(crate) fn cancel(site: &'static CallSite) {
    if !recording() {
        return;
    }
    STATE.with(|s| {
        let (node, depth) = s.push(site);
        if !node.is_null() && depth != DETACHED && s.pop_frame(depth, node) {
            // SAFETY: as in `poll_exit`.
            bump(unsafe { &(*node).c.cancelled }, 1);
        }
    });
}

/// Counts one call of `site` whose `busy` ticks were added poll by poll
/// (its first poll at tick `first`), on this thread's current path: a
/// tracing span closing.
#[cfg(feature = "tracing")]
pub(crate) fn complete(site: &'static CallSite, busy: u64, first: u64) {
    if let Some(p) = poll_enter(site) {
        STATE.with(|s| {
            if s.pop_frame(p.depth, p.node) {
                // SAFETY: as in `poll_exit`.
                let node = unsafe { &*p.node };
                bump(&node.c.calls, 1);
                node.min_max(busy);
                bump(&node.c.wall, ticks().wrapping_sub(first));
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
        let (node, depth) = s.push(site);
        if !node.is_null() && depth != DETACHED {
            s.pop(depth, node, 0, delta, true);
        }
    });
}
