//! A thread's own lookup table (child nodes by parent and site, a site's
//! histogram, overflow nodes) in memory straight from the operating system
//! ([`super::pages`]): a thread's first call of a new path may run in a
//! signal handler that interrupted the program's allocator, so creating a
//! node must not allocate through it.
//!
//! Keys are two words, values a non-zero word (a pointer); open
//! addressing with linear probing, at most half full, grown by doubling
//! (a new mapping, every entry moved, the old one given back). Nothing is
//! ever removed. Owner thread only.

use super::pages;

/// One slot: the key and its value (0: empty).
#[derive(Clone, Copy)]
#[repr(C)]
struct Slot {
    k1: u64,
    k2: u64,
    v: usize,
}

/// Slots of the first table.
const FIRST: usize = 64;

/// A map from two-word keys to non-zero words.
pub(crate) struct PageMap {
    slots: *mut Slot,
    /// Slots in the table (a power of two; 0 before the first insert).
    cap: usize,
    len: usize,
}

// SAFETY: the table is only touched by its owner thread (the thread whose
// state or arena holds it), never shared; it is sent only to be freed.
unsafe impl Send for PageMap {}

impl PageMap {
    /// An empty map; nothing is allocated before the first insert.
    pub(crate) const fn new() -> PageMap {
        PageMap {
            slots: core::ptr::null_mut(),
            cap: 0,
            len: 0,
        }
    }

    /// The slot index `k` starts its probe at.
    fn start(&self, k1: u64, k2: u64) -> usize {
        let h = (k1.rotate_left(5) ^ k2).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> 32) as usize & (self.cap - 1)
    }

    /// The value of `(k1, k2)`, if inserted.
    pub(crate) fn get(&self, k1: u64, k2: u64) -> Option<usize> {
        if self.cap == 0 {
            return None;
        }
        let mut i = self.start(k1, k2);
        loop {
            // SAFETY: `i < cap`, and the table holds `cap` initialised
            // slots (zeroed pages, then written entries).
            let s = unsafe { *self.slots.add(i) };
            if s.v == 0 {
                return None;
            }
            if s.k1 == k1 && s.k2 == k2 {
                return Some(s.v);
            }
            i = (i + 1) & (self.cap - 1);
        }
    }

    /// Inserts `(k1, k2) → v` (`v` not 0; a key already there keeps its
    /// value). False when the system refused the memory to grow.
    pub(crate) fn insert(&mut self, k1: u64, k2: u64, v: usize) -> bool {
        debug_assert!(v != 0);
        if (self.len + 1) * 2 > self.cap && !self.grow() {
            return false;
        }
        let mut i = self.start(k1, k2);
        loop {
            // SAFETY: `i < cap`; see `get`.
            let s = unsafe { &mut *self.slots.add(i) };
            if s.v == 0 {
                *s = Slot { k1, k2, v };
                self.len += 1;
                return true;
            }
            if s.k1 == k1 && s.k2 == k2 {
                return true;
            }
            i = (i + 1) & (self.cap - 1);
        }
    }

    /// Doubles the table (or makes the first).
    fn grow(&mut self) -> bool {
        let cap = (self.cap * 2).max(FIRST);
        let p = pages::alloc_zeroed(cap * core::mem::size_of::<Slot>()).cast::<Slot>();
        if p.is_null() {
            return false;
        }
        let old = core::mem::replace(
            self,
            PageMap {
                slots: p,
                cap,
                len: 0,
            },
        );
        for i in 0..old.cap {
            // SAFETY: `i < old.cap`, a slot of the old table.
            let s = unsafe { *old.slots.add(i) };
            if s.v != 0 {
                self.insert(s.k1, s.k2, s.v);
            }
        }
        true
    }
}

impl Drop for PageMap {
    fn drop(&mut self) {
        if !self.slots.is_null() {
            // SAFETY: allocated by `grow` with `cap` slots, freed once.
            unsafe {
                pages::free(self.slots.cast(), self.cap * core::mem::size_of::<Slot>());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every inserted key finds its first value, through growth; no
        /// other key finds one.
        #[test]
        fn a_key_finds_its_value(keys in proptest::collection::vec((0u64..500, 0u64..500), 0..2000)) {
            let mut m = PageMap::new();
            let mut want = std::collections::HashMap::new();
            for (i, &(a, b)) in keys.iter().enumerate() {
                prop_assert!(m.insert(a, b, i + 1));
                want.entry((a, b)).or_insert(i + 1);
            }
            for (&(a, b), &v) in &want {
                prop_assert_eq!(m.get(a, b), Some(v));
            }
            prop_assert_eq!(m.get(1000, 1000), None);
            prop_assert_eq!(m.len, want.len());
        }
    }
}
