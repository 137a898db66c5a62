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
        // SAFETY: per the contract, a mapping of `rounded(bytes)` bytes
        // made by `alloc_zeroed`, unused from now on.
        unsafe { libc::munmap(p.cast(), rounded(bytes)) };
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
}
