//! A lock held across `fork`, the one pattern of every `fork` handler.
//!
//! A `fork` copies only the forking thread, so a lock another thread holds
//! at that moment stays held for ever in the child. The prepare handler
//! therefore takes each lock the child may need and keeps its guard in a
//! thread-local slot of the forking thread (declared beside the lock, of
//! type [`Held`]); the parent and child handlers take it back out and
//! release it (the child first uses it to reset what it guards).
//!
//! Used by the registry, the trace buffers and the trace log's sink. A
//! leaf: it imports nothing of the crate.

use std::cell::Cell;
use std::mem::ManuallyDrop;
use std::sync::MutexGuard;
use std::thread::LocalKey;

/// A thread-local slot for a guard held across `fork`. (`ManuallyDrop`:
/// the thread-local then needs no destructor.)
pub(crate) type Held<T> = Cell<Option<ManuallyDrop<MutexGuard<'static, T>>>>;

/// Before `fork`: keeps `guard` in this thread's `slot` until [`take`].
pub(crate) fn hold<T: 'static>(slot: &'static LocalKey<Held<T>>, guard: MutexGuard<'static, T>) {
    slot.with(|h| h.set(Some(ManuallyDrop::new(guard))));
}

/// After `fork`: the guard [`hold`] kept in this thread's `slot`, if any;
/// dropping it releases the lock.
pub(crate) fn take<T: 'static>(slot: &'static LocalKey<Held<T>>) -> Option<MutexGuard<'static, T>> {
    slot.with(Cell::take).map(ManuallyDrop::into_inner)
}

#[cfg(test)]
mod tests {
    use super::{hold, take, Held};
    use std::sync::Mutex;

    static LOCK: Mutex<u32> = Mutex::new(0);
    thread_local! {
        static SLOT: Held<u32> = const { std::cell::Cell::new(None) };
    }

    #[test]
    fn a_held_guard_keeps_the_lock_until_taken_back() {
        hold(&SLOT, LOCK.lock().unwrap());
        assert!(LOCK.try_lock().is_err(), "held across the fork");
        let mut g = take(&SLOT).expect("the guard is back");
        *g += 1;
        drop(g);
        assert_eq!(*LOCK.try_lock().expect("released"), 1);
        assert!(take(&SLOT).is_none(), "taken once");
    }
}
