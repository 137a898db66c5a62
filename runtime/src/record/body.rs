//! The guard of a marked function whose body `#[profile]` emits once
//! ([`BodyGuard`]): its entry and exit out of line.

use super::guard::Guard;
use crate::site::CallSite;
use crate::switches::{mode, OFF};

/// The guard of a marked function whose body `#[profile]` emits once (it
/// could not be duplicated: see *Expansion* in the `profile` docs). The
/// entry and the exit run out of line: the function stays small enough
/// to inline where the unmarked one is, and with profiling off a call
/// costs the mode test and, at the exit, a test of the guard.
#[must_use = "the guard times until it is dropped"]
pub struct BodyGuard(core::mem::ManuallyDrop<Guard>);

impl BodyGuard {
    /// Starts one activation of `site` (see [`BodyGuard`]).
    #[inline(always)]
    pub fn enter(site: &'static CallSite) -> BodyGuard {
        if mode() == OFF {
            return BodyGuard(core::mem::ManuallyDrop::new(Guard::inert()));
        }
        BodyGuard(core::mem::ManuallyDrop::new(enter_outlined(site)))
    }

    /// Ends the activation of a call that returned (see [`Guard::exit`]).
    #[inline(always)]
    pub fn exit(self) {
        core::mem::ManuallyDrop::new(self).end(false);
    }

    /// [`BodyGuard::exit`] of a call that returned `value`, handed back
    /// after an opaque use (the compiler would otherwise compute a pure
    /// body after the exit's clock read).
    #[inline(always)]
    pub fn exit_with<T>(self, value: T) -> T {
        core::hint::black_box(&value);
        self.exit();
        value
    }

    #[inline(always)]
    fn end(&self, check: bool) {
        if !self.0.is_inert() {
            exit_outlined(&self.0, check);
        }
    }
}

impl Drop for BodyGuard {
    #[inline(always)]
    fn drop(&mut self) {
        self.end(true);
    }
}

/// [`Guard::enter`], out of line.
#[inline(never)]
fn enter_outlined(site: &'static CallSite) -> Guard {
    Guard::enter(site)
}

/// A [`BodyGuard`]'s exit, out of line.
#[inline(never)]
fn exit_outlined(g: &Guard, check: bool) {
    g.end(check);
}
