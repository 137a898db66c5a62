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
pub use crate::record::counted::Counted;
#[cfg(feature = "enabled")]
pub use crate::record::guard::Guard;
pub use crate::site::{path_of, CallSite};

/// Whether a marked call does nothing: profiling off (`TICKPROF=off`)
/// or paused, and no hook, log or failpoint armed. `#[profile]` tests
/// it at entry and then runs the body as written, with no guard: one
/// compare with memory and one predictable branch (the guard's entry
/// reads the mode again).
#[cfg(feature = "enabled")]
#[inline(always)]
pub fn off() -> bool {
    crate::switches::mode() == crate::switches::OFF
}

/// Runs a marked function's body (a `move` closure, built on this path
/// only; first, so that its captures stay in the argument registers)
/// under its guard, out of line, recording plainly (the marked function
/// read the mode, and its child cache did not hold the site as counted):
/// the recording path of a body `#[profile]` duplicated (see *Expansion*
/// in the `profile` docs). Out of line so that the marked function's path
/// with profiling off stays the body and a mode test, with nothing saved
/// or restored for this path's calls. The body's value passes through an
/// opaque barrier on a timed call's path: without it the compiler may
/// compute a pure body after the exit's clock read.
#[cfg(feature = "enabled")]
#[inline(never)]
pub fn timed<R>(body: impl FnOnce() -> R, site: &'static CallSite) -> R {
    let guard = Guard::enter_in(site, crate::switches::RECORD);
    let value = body();
    guard.exit_with(value)
}

/// [`timed`] in any other mode but off (hooks, tracing, failpoints,
/// pause): the mode read again. Cold, and each marked function has its
/// own instance (its body inlined in it), so the guard's entry and exit
/// are out of line here ([`BodyGuard`]'s): 1,111 stripped bytes a mark of
/// a short function instead of 1,587 (docs/measured.md, "Less code a
/// mark").
#[cfg(feature = "enabled")]
#[cold]
#[inline(never)]
pub fn timed_in_mode<R>(body: impl FnOnce() -> R, site: &'static CallSite) -> R {
    let guard = BodyGuard::enter(site);
    let value = body();
    guard.exit_with(value)
}

/// The mode, read once by a marked function: [`OFF`], [`RECORD`] (see
/// [`Counted`] and [`timed`]), or anything else ([`timed_in_mode`]).
#[cfg(feature = "enabled")]
#[inline(always)]
pub fn mode() -> u32 {
    crate::switches::mode_word()
}

/// The mode with profiling off or paused and nothing armed (see [`off`]).
#[cfg(feature = "enabled")]
pub const OFF: u32 = crate::switches::OFF as u32;

/// The mode recording plainly (no hook, trace or failpoint).
#[cfg(feature = "enabled")]
pub const RECORD: u32 = crate::switches::RECORD as u32;

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
