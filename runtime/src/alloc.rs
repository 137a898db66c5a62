//! [`Alloc`]: the global-allocator wrapper that counts every allocation,
//! reallocation and free against the marked call running on the allocating
//! thread.

use core::alloc::{GlobalAlloc, Layout};
use std::alloc::System;

/// A global allocator that counts allocations per marked call: install it
/// with two lines, and every report gains allocation counts and bytes, self
/// and total, per call site and per call path.
///
/// ```
/// #[global_allocator]
/// static A: tickprof_runtime::Alloc = tickprof_runtime::Alloc::system();
/// # fn main() {}
/// ```
///
/// (Through the facade: `tickprof::Alloc`.) Around another allocator, e.g.
/// jemalloc or mimalloc: `tickprof::Alloc::new(mimalloc::MiMalloc)`.
///
/// # What is counted, and where
///
/// - Every allocation and free is counted on the marked call that is
///   current on the calling thread (its calling-context tree node); outside
///   any marked call, on the thread's root, the report's
///   `<outside marked calls>` row. A site's total includes its marked
///   callees' allocations; its self does not.
/// - A reallocation counts as one allocation of the new size and one free
///   of the old size (as DHAT counts it).
/// - A block freed on another thread is counted as a free where it is
///   freed (on the freeing thread's current call), not where it was
///   allocated.
/// - Allocations made by tickprof itself (its trees, buffers and reports),
///   on its sampler thread, on a thread that never makes a marked call,
///   or after the thread's profiler state was torn down at thread exit are
///   not counted. A thread's allocations before its first marked call are
///   added to its `<outside marked calls>` row at that call.
///
/// # Cost
///
/// Per allocation, a few thread-local loads and two relaxed load + store
/// pairs on a node only the calling thread writes: no lock, no atomic
/// read-modify-write, no allocation, no thread-local with a destructor. The
/// time profiling of marked calls is unchanged whether or not the wrapper
/// is installed. With `TICKPROF=off`, after the exit report, and with the
/// `enabled` feature off, it is a plain pass-through to the inner allocator.
#[derive(Clone, Copy, Debug, Default)]
pub struct Alloc<A = System> {
    inner: A,
}

impl Alloc<System> {
    /// The wrapper around the system allocator.
    ///
    /// # Examples
    ///
    /// ```
    /// #[global_allocator]
    /// static A: tickprof_runtime::Alloc = tickprof_runtime::Alloc::system();
    /// # fn main() {}
    /// ```
    pub const fn system() -> Alloc<System> {
        Alloc { inner: System }
    }
}

impl<A> Alloc<A> {
    /// The wrapper around `inner` (any [`GlobalAlloc`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::alloc::System;
    /// #[global_allocator]
    /// static A: tickprof_runtime::Alloc<System> = tickprof_runtime::Alloc::new(System);
    /// # fn main() {}
    /// ```
    pub const fn new(inner: A) -> Alloc<A> {
        Alloc { inner }
    }

    /// The wrapped allocator.
    pub const fn inner(&self) -> &A {
        &self.inner
    }
}

/// Whether allocations are counted now (recording, and the feature on).
#[inline(always)]
fn counting() -> bool {
    #[cfg(feature = "enabled")]
    {
        crate::switches::recording()
    }
    #[cfg(not(feature = "enabled"))]
    {
        false
    }
}

#[cfg(feature = "enabled")]
use crate::record::alloc::{on_alloc, on_free, on_realloc};

#[cfg(not(feature = "enabled"))]
fn on_alloc(_: usize) {}
#[cfg(not(feature = "enabled"))]
fn on_free(_: usize) {}
#[cfg(not(feature = "enabled"))]
fn on_realloc(_: usize, _: usize) {}

// SAFETY: every method forwards to `inner` with the caller's arguments
// unchanged and returns its result; counting neither allocates nor touches
// the blocks.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Alloc<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        let p = unsafe { self.inner.alloc(layout) };
        if !p.is_null() && counting() {
            on_alloc(layout.size());
        }
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc_zeroed`'s contract.
        let p = unsafe { self.inner.alloc_zeroed(layout) };
        if !p.is_null() && counting() {
            on_alloc(layout.size());
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller upholds `GlobalAlloc::dealloc`'s contract.
        unsafe { self.inner.dealloc(ptr, layout) };
        if counting() {
            on_free(layout.size());
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract.
        let p = unsafe { self.inner.realloc(ptr, layout, new_size) };
        if !p.is_null() && counting() {
            on_realloc(layout.size(), new_size);
        }
        p
    }
}
