//! The cold paths of a marked call, one for entries and one for exits,
//! shared by guards (functions and scopes) and async polls: the thread's
//! set-up, failpoints, hooks, tracing, hooks with the profile off, calls
//! made after the thread's state was torn down (detached), and exits out
//! of order.
//!
//! The fast paths (mode exactly `RECORD`, a cache hit, the call on top at
//! its exit) are in [`super::guard`]; they reach here for anything else.

use super::frame::{self, Decoded, Frame, NONE};
use super::hook::{self, Ended};
use super::node::{bump, Node};
use super::stack::ThreadState;
use super::{life, registry, sampler};
use crate::clock::ticks;
use crate::counters::Acc;
use crate::site::CallSite;
use crate::switches::{HOOK, LOG, MAX_TICKS, RECORD, RECORDED_ANY, TRACE};
use core::sync::atomic::Ordering;

/// Makes `site`'s child of the node on top the top, setting the thread up
/// first if this is its first marked call. Starts the sampler if it is not
/// running (a cold path is where it can: not the first call of a thread,
/// which may run in a signal handler).
#[cold]
#[inline(never)]
pub(super) fn enter_recording(s: &ThreadState, site: &'static CallSite) -> Frame {
    if s.needs_setup() && !life::set_up(s) {
        return s.no_frame(site);
    }
    if sampler::idle() {
        s.while_busy(sampler::try_start);
    }
    s.push(site)
}

/// An entry in any mode but plain recording and off: the bits of `mode`
/// say what to do. A function's or scope's entry (`poll` false) first
/// evaluates its failpoint (an async call's is evaluated once, when its
/// future is created). Tracing and hooks push the frame as usual and mark
/// it (see [`frame::pushed`]), which sends its exit to [`exit`], where the
/// call is also traced and the exit hooks run. Hooks with the profile off
/// give an unrecorded frame ([`frame::unrecorded`]) that only runs the
/// hooks. A marked call made by a hook is neither hooked nor recorded.
#[cold]
#[inline(never)]
pub(super) fn enter(site: &'static CallSite, mode: u8, poll: bool) -> Frame {
    if !poll {
        crate::fail::check::at_entry(site, mode);
    }
    let hooked = mode & (HOOK | LOG) != 0 && !site.is_internal();
    if hooked && hook::in_hook() {
        return NONE;
    }
    if mode & RECORD == 0 {
        return if hooked { unrecorded(site, poll) } else { NONE };
    }
    let s = super::stack::current();
    let (node, parent) = enter_recording(s, site);
    if node.is_null() || parent == frame::DETACHED {
        return (node, parent);
    }
    if hooked {
        // SAFETY: a pushed frame's node is a node of this thread's arena.
        let depth = unsafe { &*node }.depth.load(Ordering::Relaxed) as usize;
        hook::enter(site, depth, ticks(), poll);
    }
    frame::pushed(node, parent as *const Node, mode & TRACE != 0, hooked)
}

/// Hooks with the profile off: no frame; the depth is the hooks' own count
/// for this thread.
#[cold]
#[inline(never)]
fn unrecorded(site: &'static CallSite, poll: bool) -> Frame {
    let depth = hook::unrecorded_enter();
    hook::enter(site, depth, ticks(), poll);
    frame::unrecorded(site, depth)
}

/// The exit of a guard that is detached, traced, hooked, or not on top;
/// `check`: whether the call may be unwinding (the explicit exit of a
/// function that returned passes `false`).
#[cold]
#[inline(never)]
pub(super) fn exit(s: &ThreadState, f: Frame, (start, end): (u64, u64), check: bool) {
    // What the exit hooks are told (returned: the exit's `check` off).
    let ended =
        |site, depth, out_of_order| Ended::call(site, depth, (start, end), out_of_order, !check);
    match frame::decode(f) {
        Decoded::None => {}
        Decoded::Detached(site) => record_detached(site, start, end),
        Decoded::Unrecorded { site, depth } => {
            let out_of_order = hook::unrecorded_exit(depth);
            hook::exit(&ended(site, depth, out_of_order));
        }
        Decoded::Pushed {
            node,
            parent,
            traced,
            hooked,
        } => {
            let out_of_order = !s.is_top(node);
            if !s.pop_frame(node, parent as usize) {
                return;
            }
            // SAFETY: `node` was handed out by this thread's arena, which
            // is alive: the state is not torn down (`pop_frame` said so).
            let node = unsafe { &*node };
            node.record(end.wrapping_sub(start), check);
            if traced {
                s.trace(node, start, end);
            }
            if let (true, Some(site)) = (hooked, node.site()) {
                let depth = node.depth.load(Ordering::Relaxed) as usize;
                hook::exit(&ended(site, depth, out_of_order));
            }
        }
    }
}

/// The exit of a counted call whose node is not on top: resynchronised
/// like a timed call's (see [`ThreadState::pop_frame`]); nothing is
/// recorded (the call was counted on entry), except an unwound call.
#[cold]
#[inline(never)]
pub(super) fn exit_counted(s: &ThreadState, (node, parent): Frame, check: bool) {
    if s.pop_frame(node, parent) && check && std::thread::panicking() {
        unwound(node);
    }
}

/// A counted call of `node` ended by unwinding.
#[cold]
#[inline(never)]
pub(super) fn unwound(node: *const Node) {
    // SAFETY: called with the node of a call just ended on this thread, a
    // node of its arena, which outlives the state.
    bump(&unsafe { &*node }.c.unwound, 1);
}

/// A detached call (made after its thread's state was torn down): recorded
/// into the detached calls' table (atomics: no allocation, no lock, as a
/// signal handler past the thread's TLS destructors needs), reported as a
/// call with no marked caller; counted as lost when the table is full.
#[cold]
#[inline(never)]
fn record_detached(site: &'static CallSite, start: u64, end: u64) {
    let one = Acc::one_call(
        end.wrapping_sub(start),
        MAX_TICKS.load(Ordering::Relaxed),
        std::thread::panicking(),
    );
    if !site.is_internal() {
        RECORDED_ANY.store(true, Ordering::Relaxed);
    }
    if !super::detached::record(site, &one) {
        registry::note_lost();
    }
}
