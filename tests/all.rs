//! The integration tests that can share a process, as the modules of one
//! test binary: one crate to compile and link against the dev-dependencies
//! (tokio, criterion, proptest, prost, ...) instead of one per file. Run
//! one file's tests with `cargo test -p tickprof-testsuite --test all NAME::`
//! (`NAME` the file's name).
//!
//! The tests run on parallel threads of one process: a test that needs
//! the process to itself (it resets, pauses, or reads the whole process's
//! figures) is in `tests/alone.rs`; a test that needs its own start-up
//! settings, allocator or exit runs a child process (`support/child.rs`).
//! `tests/disabled.rs` is the third binary: CI builds it with the
//! `enabled` feature off.
#![cfg_attr(
    not(feature = "enabled"),
    allow(dead_code, unused_imports, unused_macros)
)]

mod support;

mod adapt;
mod alloc;
mod alternating;
mod async_tasks;
mod behaviour;
mod containers;
mod counted_calls;
mod counts;
mod coverage;
mod deep_exports;
mod dependency_graph;
mod docs;
mod dumps;
mod exit_allocator;
mod exit_report;
mod failpoints;
mod file_writes;
mod fork;
mod hooks;
mod http_server;
mod leaked_guards;
mod marked_allocator;
mod metrics;
mod names;
mod paths;
mod pprof;
mod pprof_paths;
mod push;
mod quickstart;
mod sampler;
mod settings_docs;
mod settings_env;
mod signals;
mod thread_churn;
mod trace;
mod trace_log;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

/// The process's global allocator, picked once at start-up, before
/// tickprof's constructor, from `TPTEST_ALLOCATOR` (`support/child.rs`):
/// unset or `counting`, tickprof's counting wrapper (the tests of
/// `alloc`, `counted_calls` and `pprof_paths` read its counts); `system`,
/// the system allocator (every child's default: a program that installs
/// none); `ledger` and `marked`, the allocators of `exit_allocator` and
/// `marked_allocator`, in their children. Every one allocates from the
/// system allocator, so a block allocated before the choice is freed
/// correctly after it.
struct Switch;

#[global_allocator]
static ALLOCATOR: Switch = Switch;

/// `SYSTEM` until the choice: an allocation through tickprof's wrapper
/// makes every report show allocation columns, also in a child that asked
/// for the system allocator.
static MODE: AtomicU8 = AtomicU8::new(SYSTEM);
const COUNTING: u8 = 0;
const SYSTEM: u8 = 1;
const LEDGER: u8 = 2;
const MARKED: u8 = 3;

static COUNTED: tickprof::Alloc = tickprof::Alloc::system();

#[ctor::ctor(unsafe, priority = early)]
fn pick_allocator() {
    let mode = match std::env::var(support::child::ALLOCATOR).as_deref() {
        Ok("system") => SYSTEM,
        Ok("ledger") => LEDGER,
        Ok("marked") => MARKED,
        _ => COUNTING,
    };
    MODE.store(mode, Relaxed);
}

/// Calls `method` of the allocator the mode names.
macro_rules! dispatch {
    ($method:ident($($arg:expr),*)) => {
        match MODE.load(Relaxed) {
            SYSTEM => System.$method($($arg),*),
            #[cfg(all(feature = "enabled", target_os = "linux"))]
            LEDGER => exit_allocator::Ledger.$method($($arg),*),
            #[cfg(feature = "enabled")]
            MARKED => marked_allocator::Marked.$method($($arg),*),
            _ => COUNTED.$method($($arg),*),
        }
    };
}

// SAFETY: every method forwards the caller's arguments, under the caller's
// contract, to one allocator, the same for the whole run (picked before
// `main`), and returns its result; all of them allocate from `System`.
unsafe impl GlobalAlloc for Switch {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        unsafe { dispatch!(alloc(l)) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        unsafe { dispatch!(alloc_zeroed(l)) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { dispatch!(dealloc(p, l)) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        unsafe { dispatch!(realloc(p, l, new)) }
    }
}
