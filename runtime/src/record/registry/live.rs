//! The live threads' arenas: a list a starting thread joins without a
//! lock or an allocation (one compare-and-swap at its head), left and
//! walked under the registry's lock.

use super::{Registry, NEXT_THREAD_ID};
use crate::record::arena::{Arena, Name};
use core::sync::atomic::{AtomicPtr, Ordering};
use std::sync::MutexGuard;

/// The live arenas: a list through [`Arena::next`], joined at its head
/// without the lock ([`new_thread`]); left, and walked, under it.
pub(super) static LIVE: AtomicPtr<Arena> = AtomicPtr::new(core::ptr::null_mut());

/// A new arena for the calling thread (one reference, the caller's),
/// listed as live; `name` is `None` when not known yet (a placeholder
/// with the thread's number is used). Null when the system refuses the
/// memory. Async-signal-safe: pages and one compare-and-swap, no lock,
/// no allocation.
pub(in crate::record) fn new_thread(name: Option<&str>) -> *const Arena {
    let id = NEXT_THREAD_ID.fetch_add(1, Ordering::Relaxed);
    let name = name.map_or_else(|| Name::placeholder(id), Name::new);
    let arena = Arena::create(name, id);
    if arena.is_null() {
        return arena;
    }
    // SAFETY: just created, not yet shared.
    let a = unsafe { &*arena };
    a.retain(); // the list's reference
    let mut head = LIVE.load(Ordering::Relaxed);
    loop {
        a.next.store(head, Ordering::Relaxed);
        match LIVE.compare_exchange_weak(
            head,
            arena.cast_mut(),
            Ordering::Release,
            Ordering::Relaxed,
        ) {
            Ok(_) => return arena,
            Err(now) => head = now,
        }
    }
}

/// Every live arena, each with a reference the caller gives back
/// ([`Arena::release`]). Under the lock (`_g`).
pub(super) fn live(_g: &MutexGuard<'static, Registry>) -> Vec<*const Arena> {
    let mut out = Vec::new();
    let mut p = LIVE.load(Ordering::Acquire).cast_const();
    // SAFETY: listed arenas hold the list's reference until they leave it,
    // under the lock, which the caller holds.
    while let Some(a) = unsafe { p.as_ref() } {
        a.retain();
        out.push(p);
        p = a.next.load(Ordering::Acquire);
    }
    out
}

/// Takes `arena` off the live list (under the lock, `_g`); gives back the
/// list's reference. New arenas may join at the head meanwhile: only they
/// touch it without the lock.
pub(super) fn unlist(_g: &MutexGuard<'static, Registry>, arena: *const Arena) {
    // SAFETY: the caller holds a reference to it.
    let next = unsafe { &*arena }.next.load(Ordering::Acquire);
    loop {
        let head = LIVE.load(Ordering::Acquire);
        if core::ptr::eq(head, arena) {
            if LIVE
                .compare_exchange(head, next, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                break;
            }
            continue;
        }
        // Past the head, only the lock's holder changes the list.
        let mut p = head.cast_const();
        // SAFETY: listed arenas are alive (see `live`).
        while let Some(a) = unsafe { p.as_ref() } {
            let n = a.next.load(Ordering::Acquire);
            if core::ptr::eq(n, arena) {
                a.next.store(next, Ordering::Release);
                break;
            }
            p = n;
        }
        break;
    }
    // SAFETY: the list's reference, given back once.
    unsafe { Arena::release(arena) };
}
