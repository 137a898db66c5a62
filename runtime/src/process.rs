//! The program's process id, for what a report says about its process
//! (the header's `pid`, `%p` in output paths, the pprof mapping, the push
//! counts): this process's, except in a copy of the process that writes a
//! report for it (`exit::copy`), which speaks for the process it was
//! copied from. A leaf: it imports nothing of the crate.

use core::sync::atomic::{AtomicU32, Ordering};

/// In a copy writing a report: the process it was copied from (0 else).
static COPY_OF: AtomicU32 = AtomicU32::new(0);

/// The process id; 0 on wasm, which has none (`std::process::id` panics
/// there).
pub(crate) fn process_id() -> u32 {
    #[cfg(target_family = "wasm")]
    let id = 0;
    #[cfg(not(target_family = "wasm"))]
    let id = std::process::id();
    id
}

/// The id of the program's process.
pub(crate) fn program_pid() -> u32 {
    match COPY_OF.load(Ordering::Relaxed) {
        0 => process_id(),
        pid => pid,
    }
}

/// Makes this process a copy of `pid` (first thing in the copy).
#[cfg(all(feature = "enabled", target_os = "linux"))]
pub(crate) fn set_copy_of(pid: u32) {
    COPY_OF.store(pid, Ordering::Relaxed);
}
