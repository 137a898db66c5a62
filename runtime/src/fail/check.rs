//! The failpoint checks a mark makes, in one place: at its entry (the
//! guard's cold entry path and `__private::instrument`) and, for
//! `#[profile(fail)]`, the `return` left for the call (the expansion calls
//! [`injected`]). When no table is armed each is one relaxed load and a
//! branch; with the `failpoints` feature off, nothing.

use super::Injected;
use crate::site::CallSite;

/// Evaluates `site`'s failpoint at a marked call's entry if `mode` (the
/// mode the call read) says a table is armed: sleeps, delays, prints or
/// panics here; a `return` is left for [`injected`].
#[inline(always)]
pub(crate) fn at_entry(site: &'static CallSite, mode: u8) {
    #[cfg(feature = "failpoints")]
    if armed(mode) {
        super::eval::at_entry(site);
    }
    #[cfg(not(feature = "failpoints"))]
    let _ = (site, mode);
}

/// The error a failpoint's `return` left for this call of `site`, taken
/// (and counted as injected); `None` at once when no table is armed.
#[inline(always)]
pub fn injected(site: &'static CallSite) -> Option<Injected> {
    #[cfg(feature = "failpoints")]
    if armed(crate::switches::mode()) {
        return super::eval::take_injected(site);
    }
    let _ = site;
    None
}

/// Whether `mode` says a failpoint table is armed (the `FAIL` bit, kept
/// by `eval` whenever a table is armed or emptied).
#[cfg(feature = "failpoints")]
#[inline(always)]
fn armed(mode: u8) -> bool {
    mode & crate::switches::FAIL != 0
}
