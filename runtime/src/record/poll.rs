//! Async polls and spans entered from outside: each poll (or entry) is a
//! frame on the polling thread's stack, entered and left through the same
//! cold paths as guards ([`super::cold`]); a call completes, or is
//! cancelled, once.

use super::cold;
use super::frame::{self, Decoded, Frame};
use super::hook::{self, Ended};
use super::node::bump;
use super::stack::current;
use crate::clock::ticks;
use crate::site::CallSite;
use crate::switches::{mode, recording, OFF, RECORD};

/// One poll of an async call, pushed on this thread's stack (or, hooks
/// with the profile off, only counted by the hooks: an unrecorded frame).
pub(crate) struct Poll {
    site: &'static CallSite,
    frame: Frame,
    start: u64,
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
    if mode == OFF {
        return None;
    }
    let frame = if mode == RECORD {
        cold::enter_recording(current(), site)
    } else {
        cold::enter(site, mode, true)
    };
    if frame.0.is_null() || frame.1 == frame::DETACHED {
        return None;
    }
    Some(Poll {
        site,
        frame,
        start: ticks(),
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
    let (depth, hooked, out_of_order) = match frame::decode(p.frame) {
        Decoded::Unrecorded { depth, .. } => (depth, true, hook::unrecorded_exit(depth)),
        Decoded::Pushed {
            node,
            parent,
            hooked,
            ..
        } => {
            let s = current();
            let out_of_order = !s.is_top(node);
            let mut depth = 0;
            if s.pop_frame(node, parent as usize) {
                // SAFETY: a node of this thread's live arena (`pop_frame`
                // said so).
                let node = unsafe { &*node };
                depth = node.depth.load(core::sync::atomic::Ordering::Relaxed) as usize;
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
                    node.hist_add(busy_before + accepted);
                    bump(&node.c.wall, end.wrapping_sub(first_poll));
                }
            }
            (depth, hooked, out_of_order)
        }
        // `poll_enter` hands out neither.
        Decoded::None | Decoded::Detached(_) => return 0,
    };
    if hooked {
        hook::exit(&Ended {
            site: p.site,
            depth,
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
    let s = current();
    let (node, parent) = cold::enter_recording(s, site);
    if !node.is_null() && parent != frame::DETACHED && s.pop_frame(node, parent) {
        // SAFETY: as in `poll_exit`.
        bump(unsafe { &(*node).c.cancelled }, 1);
    }
}

/// Counts one call of `site` whose `busy` ticks were added poll by poll
/// (its first poll at tick `first`), on this thread's current path: a
/// tracing span closing.
#[cfg(feature = "tracing")]
pub(crate) fn complete(site: &'static CallSite, busy: u64, first: u64) {
    let Some(p) = poll_enter(site) else {
        return;
    };
    let Decoded::Pushed { node, parent, .. } = frame::decode(p.frame) else {
        return;
    };
    if current().pop_frame(node, parent as usize) {
        // SAFETY: as in `poll_exit`.
        let node = unsafe { &*node };
        bump(&node.c.calls, 1);
        node.min_max(busy);
        node.hist_add(busy);
        bump(&node.c.wall, ticks().wrapping_sub(first));
    }
}
