//! Included by every integration test binary that makes marked calls: its
//! own exit report is not printed (`TICKPROF_STDERR=0`, unless the variable
//! is set already), so a passing `cargo test` shows test results, not
//! reports nobody asserts on. The tests check `tickprof::report()` values;
//! the exit-report tests run child processes with a clean environment
//! (`support/child.rs` removes every `TICKPROF*` variable). The ui test's
//! pass cases inherit the setting.

/// Runs before tickprof's own constructor (`early` comes before the default
/// priority), which reads the environment once.
#[ctor::ctor(unsafe, priority = early)]
fn quiet_exit_report() {
    if std::env::var_os("TICKPROF_STDERR").is_none() {
        std::env::set_var("TICKPROF_STDERR", "0");
    }
}
