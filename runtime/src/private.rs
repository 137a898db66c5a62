//! Used by generated code (`#[profile]`, `prof_scope!`), not public API.

pub use crate::config::{parse_duration, settings_markdown};

/// `name` made safe to print on a terminal line, as the text report
/// prints names (control characters become spaces, invisible and
/// bidirectional characters visible escapes). Used by the `tickprof`
/// command for the names it prints itself.
pub fn terminal_safe(name: &str) -> std::borrow::Cow<'_, str> {
    crate::naming::terminal_safe(name)
}
#[cfg(feature = "enabled")]
pub use crate::record::future::Instrumented;
#[cfg(feature = "enabled")]
pub use crate::record::guard::record_raw;

/// `mark!(SITE)`: puts a mark's call site in the list of every mark
/// (coverage, failpoint names), and what its expansion names.
#[cfg(feature = "enabled")]
pub use crate::__tickprof_mark as mark;
#[cfg(feature = "enabled")]
pub use crate::coverage::list::expansion::*;
#[cfg(feature = "enabled")]
pub use crate::record::body::BodyGuard;
#[cfg(feature = "enabled")]
pub use crate::record::guard::{Guard, Leave};
pub use crate::site::{path_of, CallSite};

/// Whether a marked call does nothing: profiling off (`TICKPROF=off`)
/// or paused, and no hook, log or failpoint armed. `#[profile]` tests
/// it at entry and then runs the body as written, with no guard: one
/// compare with memory and one predictable branch (the mode is not
/// kept in a register for [`timed`], which reads it again).
#[cfg(feature = "enabled")]
#[inline(always)]
pub fn off() -> bool {
    crate::switches::mode() == crate::switches::OFF
}

/// Runs a marked function's body (a `move` closure, built on this path
/// only) under its guard, out of line: the recording path of a body
/// `#[profile]` duplicated (see *Expansion* in the `profile` docs),
/// called by [`recorded`], which has marked the instrumentation on.
/// Its captures and its value pass through opaque barriers: without
/// them the compiler computed a pure body after the exit's clock read.
/// The instrumentation ends right before the body and starts again
/// right after it.
///
/// Returns the thread's instrumentation word with the value, for
/// [`recorded`] to end the instrumentation after the call.
#[cfg(feature = "enabled")]
#[inline(never)]
pub fn timed<R>(body: impl FnOnce() -> R, site: &'static CallSite) -> (R, Leave) {
    let guard = Guard::enter_held(site);
    let body = core::hint::black_box(body);
    crate::record::guard::outside();
    let value = body();
    crate::record::guard::inside();
    core::hint::black_box(&value);
    guard.exit_held();
    (value, Leave::here())
}

/// The recording path of a marked function (`#[profile]`'s expansion),
/// inline in it: marks the instrumentation on (one store of a constant),
/// calls [`timed`], which ends it right before the body and starts it
/// again right after, and ends it after the call returns. So the call,
/// `timed`'s prologue and epilogue and what the compiler puts between
/// the guard and the body are found as the instrumentation they are (in
/// the caller's calls' time), not as the program's: before, a counted
/// call's ~30 instructions outside its push and pop were credited to its
/// caller or to itself (pulldown-cmark's `Tree::index`, ~1 ns unmarked,
/// read 15–30 ns a call). The store after the call goes through the
/// address `timed` hands back ([`Leave`]): found again here, it was kept
/// in a register across the call, which the marked function's path with
/// profiling off saved and restored (11 → 13 instructions). Ending the
/// window inside `timed` instead left its epilogue to the caller
/// (semver's `is_empty_or_inline` read 7–10% of the run against 1–3%),
/// and a word of its own for the return, addressed afresh after the
/// call, took the accuracy cases' parents out with the instrumentation
/// (case A −86%).
#[cfg(feature = "enabled")]
#[inline(always)]
pub fn recorded<R>(body: impl FnOnce() -> R, site: &'static CallSite) -> R {
    crate::record::guard::inside();
    let (value, leave) = timed(body, site);
    // Also no tail call: the marked function keeps its frame (in
    // backtraces and other profilers).
    leave.outside();
    value
}

/// An opaque use of a guarded body's value before its guard's exit
/// (see [`timed`]).
#[cfg(feature = "enabled")]
#[inline(always)]
pub fn barrier<T: ?Sized>(value: &T) {
    core::hint::black_box(value);
}

/// Always true. `#[profile]` takes the body's value as
/// `if ALWAYS { body } else { never_taken() }`: the `else` does not
/// diverge, so a body that never returns leaves no unreachable code
/// (the guard's exit) after it.
#[cfg(feature = "enabled")]
pub const ALWAYS: bool = true;

/// The `else` of that `if`, never taken: a value of any type, for the
/// type checker only.
#[cfg(feature = "enabled")]
#[inline(always)]
pub fn never_taken<T>() -> T {
    unreachable!("tickprof: the `else` of `if ALWAYS` was taken")
}

/// Wraps the future of a marked `async fn` (or the `async` block a
/// marked function returns) in the poll-by-poll timer.
///
/// The `Output = T` bound lets the compiler infer the block's output
/// type from the function's declared one before it checks the block, so
/// `?` and `return` inside it infer as they do unwrapped.
///
/// Armed failpoints are evaluated here: at the first poll of an
/// `async fn`, when a function returning a future is called.
#[cfg(feature = "enabled")]
pub fn instrument<T, F: core::future::Future<Output = T>>(
    site: &'static CallSite,
    future: F,
) -> Instrumented<F> {
    crate::fail::check::at_entry(site, crate::switches::mode());
    Instrumented::new(site, future)
}

/// The error a failpoint's `return` left for this call of a
/// `#[profile(fail)]` function: one relaxed load when no table is armed.
#[cfg(feature = "enabled")]
pub use crate::fail::check::injected;

pub use core::convert::From;
pub use core::result::Result::Err;

// Paths the expansions name through `$crate` / the `tickprof` crate, so
// they resolve whatever the user's edition or prelude.
pub use core::option::Option::{None, Some};
pub use core::{column, compile_error, file, line};
