//! Guards: what a marked function or scope holds from entry to exit
//! ([`Guard`]); the polls of an `async fn` are in [`super::poll`]. Both
//! leave the fast path for the same cold paths ([`super::cold`]).

use super::cold;
use super::frame::{self, Frame};
use super::node::Node;
use super::stack::{current, ThreadState, STATE};
use super::timing;
use crate::clock::ticks;
use crate::site::CallSite;
use crate::switches::{mode, recording, OFF, RECORD};
use core::marker::PhantomData;

/// Times one activation of a call site, from [`Guard::enter`] to drop.
///
/// Created by the code `#[profile]` and `prof_scope!` generate. Not `Send`:
/// a guard belongs to the thread whose stack it was pushed on.
#[must_use = "the guard times until it is dropped"]
pub struct Guard {
    start: u64,
    node: *const Node,
    depth: usize,
    /// A timed call's mark: the thread's ended calls at its entry (see
    /// `ThreadState::ended`).
    mark: u64,
    _not_send: PhantomData<*const ()>,
}

impl Guard {
    /// Starts timing one activation of `site`.
    ///
    /// The cold paths return only the frame (node and depth, 16 bytes, in
    /// registers) and the clock is read here: a cold path that returned a
    /// whole guard would return it through memory, and the guard of every
    /// call, fast path included, would then live on the stack.
    ///
    /// A node whose timing state (see `record::adapt`) is 0 is cached
    /// plainly in its parent's child cache: its call is timed with no
    /// check at all. A node cached with the flag has its state checked: a
    /// counted state gives a counted call (no clock read, the call counted
    /// and the countdown stepped in one add, a guard whose `start` is 0);
    /// any other goes through `timing::settle` and is timed.
    #[inline(always)]
    pub fn enter(site: &'static CallSite) -> Guard {
        Guard::enter_as::<false>(site)
    }

    /// [`Guard::enter`] for `__private::timed`, whose caller marked the
    /// instrumentation on (`inside`) and which ends it itself
    /// (`outside`) right before the body, so that
    /// what the compiler puts between the guard and the body (the
    /// captures' spills) is found as instrumentation, not as the call's
    /// own time: a counted call's word stays as it was set entering the
    /// call, a timed call's says, after its clock read, that what follows
    /// is inside the call's time (`ThreadState::inst_inside`).
    #[inline(always)]
    pub fn enter_held(site: &'static CallSite) -> Guard {
        Guard::enter_as::<true>(site)
    }

    /// [`Guard::enter`]; `HELD`: [`Guard::enter_held`].
    #[inline(always)]
    fn enter_as<const HELD: bool>(site: &'static CallSite) -> Guard {
        let mode = mode();
        if mode != RECORD {
            if mode == OFF {
                return Guard::inert();
            }
            let s = current();
            if !HELD {
                let _ = s.inst_on_entry();
            }
            let (node, depth) = cold::enter(site, mode, false);
            let g = Guard::timed_or_none(node, depth, s.ended());
            if !HELD {
                s.inst_off();
            } else if g.start != 0 {
                // Held and timed: inside the call after its clock read.
                s.inst_inside();
            }
            return g;
        }
        let s = current();
        // Held: the caller set the word (`inside`): inside the call on
        // top, which is the caller's until the push.
        let depth = if HELD {
            s.top_depth()
        } else {
            s.inst_on_entry()
        };
        let g = s.push_at(
            depth,
            site,
            |node, depth| {
                // Held: the new frame's own instrumentation up to the
                // clock read (outside its time), inside it after.
                if HELD {
                    s.inst_on(depth);
                }
                let g = Guard::timed(node, depth, s.ended());
                if HELD {
                    s.inst_inside();
                }
                g
            },
            |parent, node, depth| {
                if timing::count_if_counted(node) {
                    return Guard::counted(node, depth);
                }
                // A slow path's timed call (learning, or a counted
                // site's sample) leaves its word as set entering the
                // call: returned through memory, a guard made here would
                // put every call's guard on the stack.
                Guard::from_slow(timing::settle(parent, node, depth), s.ended())
            },
            || Guard::from_slow(enter_slow(s, site), s.ended()),
        );
        if !HELD {
            s.inst_off();
        }
        g
    }

    /// The guard of a frame a slow path returned: counted when its node
    /// is tagged [`COUNTED_TAG`], inert when nothing was pushed, else
    /// timed (with `mark`).
    #[inline(always)]
    pub(super) fn from_slow((node, depth): Frame, mark: u64) -> Guard {
        if node as usize & COUNTED_TAG != 0 {
            Guard::counted(node.cast::<u8>().wrapping_sub(COUNTED_TAG).cast(), depth)
        } else {
            Guard::timed_or_none(node, depth, mark)
        }
    }

    /// A timed guard: the clock read now; `mark`, the thread's ended
    /// calls.
    #[inline(always)]
    fn timed(node: *const Node, depth: usize, mark: u64) -> Guard {
        Guard {
            start: start_stamp(),
            node,
            depth,
            mark,
            _not_send: PhantomData,
        }
    }

    /// A timed guard, or an inert one when nothing was pushed (depth 0).
    #[inline(always)]
    fn timed_or_none(node: *const Node, depth: usize, mark: u64) -> Guard {
        if depth == 0 {
            return Guard::inert();
        }
        Guard::timed(node, depth, mark)
    }

    /// A counted call's guard: `start` 0 and a frame (the call was
    /// counted on entry).
    #[inline(always)]
    fn counted(node: *const Node, depth: usize) -> Guard {
        Guard {
            start: 0,
            node,
            depth,
            mark: 0,
            _not_send: PhantomData,
        }
    }

    /// A guard that does nothing: profiling is off.
    #[inline(always)]
    pub(super) fn inert() -> Guard {
        Guard {
            start: 0,
            node: core::ptr::null(),
            depth: 0,
            mark: 0,
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

    /// [`Guard::exit`] for a guard from [`Guard::enter_held`] (in
    /// `__private::timed`, whose caller ends the instrumentation:
    /// `outside`), after `inside`: a counted call's word stays as `inside` set it
    /// through the pop (whose side of the pop it is on does not matter for
    /// a counted call's figures), a timed call's says its own
    /// instrumentation from the exit's clock read on, outside its time.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn exit_held(self) {
        core::mem::ManuallyDrop::new(self).end_with(
            false,
            |f, check| pop_counted(current(), f, check),
            |f, stamps, below, check| {
                let s = current();
                s.inst_on(f.1);
                pop(s, f, stamps, below, check);
            },
        );
    }

    /// Reads the clock and pops the frame; a counted call's guard (`start`
    /// 0) only pops its frame, and an inert one (`start` and depth 0) does
    /// nothing. `check`: whether the call may be unwinding (see
    /// [`Node::record`]).
    #[inline(always)]
    fn end(&self, check: bool) {
        self.end_with(
            check,
            |f, check| {
                let s = current();
                s.inst_on(f.1);
                pop_counted(s, f, check);
                s.inst_off();
            },
            |f, stamps, below, check| {
                let s = current();
                s.inst_on(f.1);
                pop(s, f, stamps, below, check);
                s.inst_off();
            },
        );
    }

    /// [`Guard::end`] with its two pops given: `counted(frame, check)`
    /// and `timed(frame, (start, end), below, check)`, `below` the marked
    /// calls made beneath the call.
    ///
    /// The calls beneath are counted before the clock is read: computed
    /// after it, from the count the pop reads, they held back the
    /// histogram's add that takes them, and a timed call cost 1.44 times
    /// the two-read floor instead of 1.00 to 1.08 (AMD EPYC, quiet
    /// machine; see `docs/measured.md`).
    #[inline(always)]
    pub(super) fn end_with(
        &self,
        check: bool,
        counted: impl FnOnce(Frame, bool),
        timed: impl FnOnce(Frame, (u64, u64), u64, bool),
    ) {
        if self.start == 0 {
            if self.depth != 0 {
                counted((self.node, self.depth), check);
            }
            return;
        }
        let below = current().ended().wrapping_sub(self.mark);
        let end = ticks();
        timed((self.node, self.depth), (self.start, end), below, check);
    }
}

impl Drop for Guard {
    #[inline(always)]
    fn drop(&mut self) {
        self.end(true);
    }
}

/// Marks what follows as instrumentation inside the call on top (see
/// `__private::recorded`): in the marked function before it calls
/// `__private::timed` (the caller's call, until the push: what
/// [`Guard::enter_held`] expects), and in `timed` after the body, up to
/// the exit's clock read (the call's own, for [`Guard::exit_held`]).
#[inline(always)]
pub fn inside() {
    current().inst_inside();
}

/// Ends the instrumentation: in `__private::timed` right before the body
/// (and, through [`Leave`], in the marked function after `timed`
/// returns).
#[inline(always)]
pub fn outside() {
    current().inst_off();
}

/// The calling thread's instrumentation word, handed back by
/// `__private::timed` to the marked function, which ends the
/// instrumentation with it after the call returns ([`Leave::outside`]:
/// `timed`'s epilogue and return are the call's instrumentation, on the
/// caller's side; the store's fence also keeps that call from being a
/// tail call). Handed back rather than found again: the marked function
/// then keeps no address in a register across the call, which it saved
/// and restored with profiling off too (11 → 13 instructions).
#[derive(Clone, Copy)]
pub struct Leave(&'static ThreadState);

impl Leave {
    /// The calling thread's word.
    #[inline(always)]
    pub fn here() -> Leave {
        Leave(current())
    }

    /// Ends the instrumentation (see [`Leave`]).
    #[inline(always)]
    pub fn outside(self) {
        self.0.inst_off();
    }
}

/// Pops a guard's frame and records the call (`below`: the marked calls
/// made beneath it): on top of the stack, the fast path; anything else
/// goes to the cold exit.
#[inline(always)]
pub(super) fn pop(s: &ThreadState, f: Frame, stamps: (u64, u64), below: u64, check: bool) {
    if !s.pop_top(f.0, stamps, below, check) {
        cold::exit(s, f, stamps, below, check);
    }
}

/// Pops a counted call's frame: on top of the stack, the fast path;
/// anything else goes to [`cold::exit_counted`]. A counted call that
/// unwinds is counted as unwound.
#[inline(always)]
pub(super) fn pop_counted(s: &ThreadState, f: Frame, check: bool) {
    if !s.pop_top_counted(f.0) {
        return cold::exit_counted(s, f, check);
    }
    if check && std::thread::panicking() {
        cold::unwound(f.0);
    }
}

/// Set in the node address of the frame [`enter_slow`] returns for a
/// counted call (nodes are aligned to 64 bytes; [`frame::TAG`] is bit 0).
const COUNTED_TAG: usize = 2;

/// A guard's entry that missed the child cache (or found no room): the
/// slow push, then the node's timing state as on the fast path. A counted
/// call's frame comes back with its node tagged [`COUNTED_TAG`].
#[cold]
#[inline(never)]
pub(super) fn enter_slow(s: &ThreadState, site: &'static CallSite) -> Frame {
    let (node, depth) = s.push_slow(site);
    if node.is_null() || depth == 0 || depth == frame::DETACHED {
        return (node, depth);
    }
    // SAFETY: any other frame a push returns holds a stacked node of this
    // thread's arena.
    if timing::state(unsafe { &*node }) == 0 {
        return (node, depth);
    }
    counted_or_settled(s.parent_of(depth), node, depth)
}

/// The frame of a pushed node whose timing state is not 0: tagged
/// [`COUNTED_TAG`] for a counted call (see [`counted_now`]), else
/// as [`timing::settle`] moves the state on (a timed call).
#[inline(always)]
pub(super) fn counted_or_settled(parent: &Node, node: *const Node, depth: usize) -> Frame {
    if timing::count_if_counted(node) {
        return (node.cast::<u8>().wrapping_add(COUNTED_TAG).cast(), depth);
    }
    timing::settle(parent, node, depth)
}

/// The clock's reading at a timed call's entry, never 0 (0 marks a
/// counted or inert guard): the time-stamp counter is far from 0 once the
/// machine runs; the monotonic fallback counts from its first read.
#[inline(always)]
fn start_stamp() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        ticks()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        ticks().max(1)
    }
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
            pop(s, (node, depth), (0, delta), 0, true);
        }
    });
}
