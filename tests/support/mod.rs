//! What the test binaries share, compiled once per binary: `tests/all.rs`
//! (every integration test that can share a process) and `tests/alone.rs`
//! (those that need the process to themselves) declare it as `mod support`.
#![allow(dead_code)] // each binary uses a part

pub mod accuracy_cases;
pub mod cct_model;
pub mod child;
pub mod forking;
pub mod http;
pub mod pprof_proto;
pub mod quiet;
pub mod spin;
pub mod time_modes;

/// The lock the tests of `tests/alone.rs` take for their whole run: each
/// resets, pauses or reads the whole process's figures, so they take turns
/// (`cargo test` runs a binary's tests on parallel threads).
pub fn alone() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}
