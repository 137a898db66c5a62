//! The program-counter samples' signal taken over by the program (feature
//! `inlined`): every thread's clock closed.

use super::{try_lock, LIVE};
use core::sync::atomic::Ordering;
use std::time::Duration;

/// Stops every thread's program-counter samples if the program has set
/// its own disposition for their signal (its handler would get them):
/// called by the sampler thread now and then. Takes the lock only then,
/// and only if it is free within a millisecond (else the next check).
pub(in crate::record) fn check_pc_signal() {
    static STOPPED: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);
    if STOPPED.load(Ordering::Relaxed) {
        return;
    }
    if !super::super::pcs::taken_over() && !super::super::pcs::given_up() {
        return;
    }
    let Some(_g) = try_lock(Duration::from_millis(1)) else {
        return;
    };
    let mut p = LIVE.load(Ordering::Acquire).cast_const();
    // SAFETY: listed arenas stay allocated while the lock is held (a
    // finishing thread unlists its arena under it).
    while let Some(a) = unsafe { p.as_ref() } {
        if let Some(pcs) = a.pcs() {
            super::super::pcs::stop_other(pcs);
        }
        p = a.next.load(Ordering::Acquire);
    }
    STOPPED.store(true, Ordering::Relaxed);
}
