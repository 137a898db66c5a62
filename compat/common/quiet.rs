//! Test builds only: the test binary's own exit report is not printed
//! (`TICKPROF_STDERR=0` unless the variable is set already), so that a
//! passing `cargo test --workspace` shows test results, not reports
//! nobody asserts on. Runs before tickprof's constructor, which reads the
//! environment once.
#![allow(unsafe_code)]

#[ctor::ctor(unsafe, priority = early)]
#[allow(unused_unsafe)] // `set_var` is unsafe from edition 2024 on
fn quiet_exit_report() {
    if std::env::var_os("TICKPROF_STDERR").is_none() {
        // SAFETY: runs in a constructor, before `main` and before any other
        // thread exists, so no thread reads the environment concurrently.
        unsafe { std::env::set_var("TICKPROF_STDERR", "0") };
    }
}
