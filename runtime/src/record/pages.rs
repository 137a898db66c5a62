//! Memory straight from the operating system, for the recorder's own
//! structures (shadow stacks, tree segments, lookup tables, histograms).
//!
//! A thread's first marked call, or its first call of a new path, may run
//! in a signal handler that interrupted the program's allocator while it
//! held its lock: allocating through the global allocator there would wait
//! for that lock forever. `mmap` and `munmap` are system calls, safe in a
//! signal handler, and never reach the program's `#[global_allocator]`.
//! Off unix (no signal handlers interrupt a thread there) the system
//! allocator is used.
//!
//! Blocks of up to [`KEPT_PAGES`] pages that are given back are kept in
//! [`KEPT`] slots for the next allocation of the same size (zeroed then),
//! instead of being unmapped: a short thread's recorder memory (its
//! arena, first tree segment, histograms, tables: about nine blocks) is
//! the next thread's, with no system call (issue 54: 2,000 short threads
//! took ~9 `mmap`/`munmap` pairs each). A slot is one atomic word, the
//! block's address with its page count in the low bits (addresses are
//! page-aligned): taken with one compare-and-swap, no lock, so safe in a
//! signal handler; a block is only ever read by the one who took it out.
//! At most `KEPT × KEPT_PAGES` pages (8 MiB) are kept.

#[cfg(unix)]
use core::sync::atomic::{AtomicUsize, Ordering};

/// The slots of blocks kept for reuse (0: empty).
#[cfg(unix)]
const KEPT: usize = 128;
/// The largest block kept, in pages (64 KiB): a larger one is unmapped,
/// and zeroing it for reuse would cost more than mapping it afresh.
#[cfg(unix)]
const KEPT_PAGES: usize = 16;

/// The kept blocks: `address | pages`, 0 when empty.
#[cfg(unix)]
static SLOTS: [AtomicUsize; KEPT] = {
    #[allow(clippy::declare_interior_mutable_const)]
    const EMPTY: AtomicUsize = AtomicUsize::new(0);
    [EMPTY; KEPT]
};

/// A kept block of `pages` pages, taken out of its slot; null if none.
#[cfg(unix)]
fn take(pages: usize) -> *mut u8 {
    for slot in &SLOTS {
        let v = slot.load(Ordering::Relaxed);
        if v != 0
            && v & (PAGE - 1) == pages
            && slot
                .compare_exchange(v, 0, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            return (v & !(PAGE - 1)) as *mut u8;
        }
    }
    core::ptr::null_mut()
}

/// Keeps the block `p` of `pages` pages in an empty slot; false if none.
#[cfg(unix)]
fn keep(p: *mut u8, pages: usize) -> bool {
    let v = p as usize | pages;
    SLOTS.iter().any(|slot| {
        slot.load(Ordering::Relaxed) == 0
            && slot
                .compare_exchange(0, v, Ordering::Release, Ordering::Relaxed)
                .is_ok()
    })
}

/// The page size these allocations are rounded to.
pub(crate) const PAGE: usize = 4096;

/// `bytes` rounded up to whole pages.
pub(crate) fn rounded(bytes: usize) -> usize {
    bytes.div_ceil(PAGE).max(1) * PAGE
}

/// `bytes` (rounded up to whole pages) of zeroed memory, aligned to a
/// page; null when the system refuses.
pub(crate) fn alloc_zeroed(bytes: usize) -> *mut u8 {
    let len = rounded(bytes);
    #[cfg(unix)]
    {
        if len / PAGE <= KEPT_PAGES {
            let p = take(len / PAGE);
            if !p.is_null() {
                // SAFETY: a kept block of `len` bytes, mapped, ours alone
                // since it left its slot.
                unsafe { p.write_bytes(0, len) };
                return p;
            }
        }
        // SAFETY: an anonymous private mapping at an address the kernel
        // chooses: no existing memory is touched; the result is checked.
        let p = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            core::ptr::null_mut()
        } else {
            p.cast()
        }
    }
    #[cfg(not(unix))]
    {
        use std::alloc::GlobalAlloc;
        match std::alloc::Layout::from_size_align(len, PAGE) {
            // SAFETY: the layout has a non-zero size.
            Ok(l) => unsafe { std::alloc::System.alloc_zeroed(l) },
            Err(_) => core::ptr::null_mut(),
        }
    }
}

/// Gives back memory from [`alloc_zeroed`].
///
/// # Safety
///
/// `p` came from `alloc_zeroed(bytes)` with the same `bytes`, is freed
/// once, and nothing uses it afterwards.
pub(crate) unsafe fn free(p: *mut u8, bytes: usize) {
    if p.is_null() {
        return;
    }
    #[cfg(unix)]
    {
        let len = rounded(bytes);
        if len / PAGE <= KEPT_PAGES && keep(p, len / PAGE) {
            return;
        }
        // SAFETY: per the contract, a mapping of `rounded(bytes)` bytes
        // made by `alloc_zeroed`, unused from now on.
        unsafe { libc::munmap(p.cast(), len) };
    }
    #[cfg(not(unix))]
    {
        use std::alloc::GlobalAlloc;
        if let Ok(l) = std::alloc::Layout::from_size_align(rounded(bytes), PAGE) {
            // SAFETY: per the contract, allocated with this layout.
            unsafe { std::alloc::System.dealloc(p, l) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_zeroed_writable_and_freed() {
        let p = alloc_zeroed(10_000);
        assert!(!p.is_null());
        assert_eq!(p as usize % PAGE, 0);
        // SAFETY: 12,288 bytes were mapped.
        let s = unsafe { core::slice::from_raw_parts_mut(p, rounded(10_000)) };
        assert!(s.iter().all(|&b| b == 0));
        s[12_287] = 7;
        // SAFETY: allocated above with the same size, not used again.
        unsafe { free(p, 10_000) };
        assert_eq!(rounded(0), PAGE);
        assert_eq!(rounded(PAGE + 1), 2 * PAGE);
    }

    #[cfg(unix)]
    #[test]
    fn a_block_given_back_is_the_next_of_its_size_zeroed() {
        // 13 pages: a size no other test allocates.
        let bytes = 13 * PAGE;
        let p = alloc_zeroed(bytes);
        // SAFETY: `bytes` were mapped.
        unsafe { p.add(bytes - 1).write(9) };
        // SAFETY: allocated above with the same size, not used again.
        unsafe { free(p, bytes) };
        let q = alloc_zeroed(bytes);
        assert_eq!(q, p, "reused");
        // SAFETY: `bytes` are mapped at `q`.
        let s = unsafe { core::slice::from_raw_parts(q, bytes) };
        assert!(s.iter().all(|&b| b == 0));
        // A block past the kept size is unmapped, not kept.
        let big = alloc_zeroed((KEPT_PAGES + 1) * PAGE);
        // SAFETY: as above.
        unsafe { free(big, (KEPT_PAGES + 1) * PAGE) };
        assert!(SLOTS
            .iter()
            .all(|s| s.load(Ordering::Relaxed) & (PAGE - 1) != KEPT_PAGES + 1));
        // SAFETY: as above.
        unsafe { free(q, bytes) };
    }
}
