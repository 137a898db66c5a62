//! The guard of a marked function whose body `#[profile]` emits once
//! ([`BodyGuard`]): its push and pops out of line.

use super::cold;
use super::frame::Frame;
use super::guard::{counted_or_settled, enter_slow, pop, pop_counted, Guard};
use super::stack::current;
use crate::site::CallSite;
use crate::switches::{mode, OFF, RECORD};

/// The guard of a marked function whose body `#[profile]` emits once (it
/// could not be duplicated: see *Expansion* in the `profile` docs). The
/// push and the pop run out of line, the clock is read in the function:
/// the function stays small enough to inline where the unmarked one is,
/// and with profiling off or paused a call costs the mode test and, at
/// the exit, two tests of the guard's registers.
#[must_use = "the guard times until it is dropped"]
pub struct BodyGuard(core::mem::ManuallyDrop<Guard>);

impl BodyGuard {
    /// Starts one activation of `site` (see [`BodyGuard`]).
    #[inline(always)]
    pub fn enter(site: &'static CallSite) -> BodyGuard {
        if mode() == OFF {
            return BodyGuard(core::mem::ManuallyDrop::new(Guard::inert()));
        }
        let frame = push_outlined(site);
        BodyGuard(core::mem::ManuallyDrop::new(Guard::from_slow(
            frame,
            current().ended(),
        )))
    }

    /// Ends the activation of a call that returned (see [`Guard::exit`]):
    /// two tests and, recording, the clock and a call (in every build).
    #[inline(always)]
    pub fn exit(self) {
        core::mem::ManuallyDrop::new(self).end(false);
    }

    /// [`Guard::end`] with the pops out of line.
    #[inline(always)]
    fn end(&self, check: bool) {
        self.0.end_with(check, pop_counted_outlined, pop_outlined);
    }
}

impl Drop for BodyGuard {
    #[inline(always)]
    fn drop(&mut self) {
        self.end(true);
    }
}

/// [`Guard::enter`]'s push, out of line: the frame, its node tagged
/// [`COUNTED_TAG`] for a counted call, depth 0 when nothing was pushed.
#[inline(never)]
fn push_outlined(site: &'static CallSite) -> Frame {
    let mode = mode();
    if mode == OFF {
        return (core::ptr::null(), 0);
    }
    let s = current();
    let depth = s.inst_on_entry();
    let f = if mode != RECORD {
        cold::enter(site, mode, false)
    } else {
        s.push_at(
            depth,
            site,
            |node, depth| (node, depth),
            counted_or_settled,
            || enter_slow(s, site),
        )
    };
    s.inst_off();
    f
}

/// A timed call's pop for a [`BodyGuard`], out of line (`below`: the
/// marked calls made beneath the call).
#[inline(never)]
fn pop_outlined(f: Frame, stamps: (u64, u64), below: u64, check: bool) {
    let s = current();
    s.inst_on(f.1);
    pop(s, f, stamps, below, check);
    s.inst_off();
}

/// A counted call's pop for a [`BodyGuard`], out of line.
#[inline(never)]
fn pop_counted_outlined(f: Frame, check: bool) {
    let s = current();
    s.inst_on(f.1);
    pop_counted(s, f, check);
    s.inst_off();
}
