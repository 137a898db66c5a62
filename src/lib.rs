#![cfg_attr(not(doctest), doc = include_str!("../README.md"))]
#![warn(missing_docs)]
#![forbid(unsafe_code)]

/// Times every call of the function it marks.
///
/// The function's signature, attributes, visibility and behaviour are kept
/// exactly as written; the body runs inside a guard that reads the CPU
/// time-stamp counter at entry and at exit (also when the call unwinds).
///
/// # Options
///
/// | option | meaning | default |
/// |---|---|---|
/// | `name = "text"` | the name shown in the report | the function's full path, e.g. `myapp::parser::Parser::next_token` |
/// | `crate = path` | where the `tickprof` crate is, if renamed or re-exported | `::tickprof` |
/// | `fail` | a failpoint's `return` (`TICKPROF_FAIL`, [`fail::cfg`]) makes the function return `Err(Injected{..}.into())` without running its body; the function must return `Result<_, E>` with `E: From<`[`Injected`]`>` (a compile error otherwise, and on `async fn`) | off: `panic`, `sleep`, `delay`, `print`, `yield` still work at every mark |
/// | `skip` | on a function (or nested `impl`, `trait`, `mod`) inside a marked container: leave it unmarked; a compile error anywhere else | not given |
/// | `always` | for a build that always records, as the copy `cargo tickprof` makes: a short body is emitted three times instead of four, the inline copy serving both a counted call and profiling off (`TICKPROF=off` then runs the body as written, in the function: semver's workload marked by `cargo tickprof` took 1.03× its unmarked CPU time with it, 1.55× when it ran out of line); pauses and the other modes go through `timed_in_mode`. On a container: every function inside | off: a short body four times, the plain copy run when off or paused |
/// | `once` | the body emitted once, in the function, the guard's entry and exit inline around it (see *Expansion*): the optimiser inlines into the marked function what it inlines into the unmarked one, where a body emitted several times calls its callees from several places and may keep out of line one the unmarked build inlined at its only call (indexmap's workload marked by `cargo tickprof`: 1.77× its unmarked CPU time with three copies, 1.26× with one). A call costs a little more: 65 instructions timed, 43 counted, 27 with profiling off, against 71, 20 and 11 (callgrind, `scripts/callgrind_overhead.sh`). `cargo tickprof` gives it to a kept function holding a large inlined one (`--once-bytes`). On a container: every function inside | off |
///
/// # Containers: `impl`, `trait` and inline `mod`
///
/// On an inherent or trait `impl`, a `trait` or an inline `mod { ... }`,
/// `#[profile]` marks every function with a body inside exactly as if each
/// carried its own `#[profile]`: the same names, the same behaviour
/// (`async fn` and returned futures included), the same compile cost (each
/// function is expanded once; the container is parsed once). A trait's
/// default methods are marked, its methods without a body left alone; a
/// `mod` is marked recursively, into nested inline modules, `impl`s and
/// `trait`s.
///
/// - `#[profile(skip)]` on a function or a nested container inside leaves
///   it unmarked; one with its own `#[profile(...)]` keeps its options
///   (`name`, `fail`), is marked once, and takes the container's `crate =
///   path`, `always` and `once` unless it gives its own.
/// - Functions `#[profile]` cannot mark (`const fn`, C-variadic, a returned
///   future whose body is not one `async` block) are left alone inside a
///   container, not rejected; so are `macro_rules!` and item macros.
/// - Inside a container, `#[profile]`, `#[tickprof::profile]` and
///   `#[<crate path>::profile]` are recognised (another name the attribute
///   was imported under is not), and removed in both feature settings.
/// - `name` and `fail` on a container, `skip` on a top-level item and a
///   `mod foo;` whose items are in another file are compile errors that say
///   what to write instead.
///
/// A site marked by its container is reported at the line of the
/// container's `#[profile]`.
/// ```
/// # #[derive(Default)]
/// # struct Stack(Vec<usize>);
/// #[tickprof::profile]
/// impl Stack {
///     fn push(&mut self, x: usize) {
///         self.0.push(x);
///     }
///
///     #[tickprof::profile(skip)] // too small to time
///     fn len(&self) -> usize {
///         self.0.len()
///     }
/// }
///
/// #[tickprof::profile]
/// mod parse {
///     pub fn words(s: &str) -> usize {
///         s.split_whitespace().count()
///     }
/// }
///
/// let mut stack = Stack::default();
/// stack.push(parse::words("a b"));
/// assert_eq!(stack.len(), 1);
/// ```
///
/// # Expansion
///
/// ```text
/// fn work(x: u32) -> u32 {
///     fn __tickprof_here() {}
///     static __TICKPROF_SITE: ::tickprof::__private::CallSite = /* path, name, file, line */;
///     ::tickprof::__private::mark!(__TICKPROF_SITE); // in the list of every mark (coverage)
///     let __tickprof_mode = ::tickprof::__private::mode(); // one load
///     if __tickprof_mode == ::tickprof::__private::RECORD {
///         if let Some(__tickprof_counted) = ::tickprof::__private::Counted::enter(&__TICKPROF_SITE) {
///             // a counted call its caller's child cache holds: counted
///             // with one add, its node the thread's current one
///             // with `fail`: the same check as below
///             let __tickprof_value: u32 = /* the original body */;
///             __tickprof_counted.exit(); // the caller's node back
///             __tickprof_value
///         } else {
///             // any other call, out of line: enter the guard (the
///             // lookup, the clock read or the count), run the closure,
///             // end the call
///             ::tickprof::__private::timed(
///                 move || -> u32 {
///                     // with `fail`: if let Some(e) = ::tickprof::__private::injected(&__TICKPROF_SITE) { return Err(From::from(e)); }
///                     /* the original body */
///                 },
///                 &__TICKPROF_SITE,
///             )
///         }
///     } else if __tickprof_mode == ::tickprof::__private::OFF {
///         /* the original body: profiling off or paused */
///     } else {
///         // hooks, tracing, failpoints: the same closure, the mode read again
///         ::tickprof::__private::timed_in_mode(move || -> u32 { /* … */ }, &__TICKPROF_SITE)
///     }
/// }
/// ```
///
/// The body is emitted up to four times (three with `always`, whose inline
/// copy serves both): as written for profiling off or paused (after one
/// load and two predictable branches), inline for a counted call, and as a closure in `timed` and in `timed_in_mode`,
/// out-of-line functions (one instance per marked function, the body
/// inlined in it) that hold the guard: the marked function's off path
/// then saves no register for the recording paths' calls. The closure's
/// declared return type is the function's, so `return` and `?` in the
/// body mean what they mean in the function; they end the call normally,
/// with no unwinding check. The closure is a `move` closure: the
/// arguments the body uses move into it (references and `Copy` values
/// are copied) and are dropped when the body ends, inside the timed call,
/// as an unmarked function drops its arguments when it returns. A closure
/// borrowing them would keep every argument in memory on the off path
/// too. Inside `timed` a timed call's value passes through an opaque
/// barrier (`black_box`) before the exit's clock read: without it the
/// compiler may compute a body of pure arithmetic after it. The call to
/// `timed` is a tail call: while it runs, `work` has no stack frame of
/// its own (backtraces of a marked build show `timed` and the body's
/// closure, `work::{{closure}}`, in its place). A body emitted once
/// (below) has the barrier on its value only, and a `prof_scope!` none:
/// pure arithmetic may move across their boundaries.
///
/// Only bodies whose copies behave as one are duplicated: no item
/// keyword in them (`fn`, `static`, `struct`, `enum`, `union`, `impl`,
/// `trait`, `mod`, `extern`, `macro_rules`: a `static` or a nested mark
/// would split in two), no macro but the standard library's expression
/// macros (`println!`, `assert!`, `vec!`, `format!`, `matches!`, …; a user
/// macro may expand to items), at most 512 tokens (a long body gains
/// little, and its compile time would grow fourfold), a return type a `let` can
/// name (not `impl Trait` or `!`) and no `#[track_caller]` (a closure would
/// hide the caller's location). Any other body is emitted once, under a
/// guard held in the function:
///
/// ```text
///     let __tickprof_guard = ::tickprof::__private::BodyGuard::enter(&__TICKPROF_SITE);
///     // with `fail`: the same check
///     let __tickprof_value: u32 = if ::tickprof::__private::ALWAYS {
///         '__tickprof_body: { /* the original body */ }
///     } else {
///         ::tickprof::__private::never_taken() // never taken: only a value of the type
///     };
///     // the value through an opaque pass (computed before the exit), the
///     // call ended (it returned: no unwinding check), the value back
///     __tickprof_guard.exit_with(__tickprof_value)
/// ```
///
/// The guard's entry and exit run out of line, so the function stays
/// small; with profiling off or paused its guard is inert: the mode test
/// at entry, a test of the guard at the exit.
///
/// With `once` every body takes this form, with the inline guard
/// (`__private::Guard`): its entry and exit in the function, the opaque
/// pass on a timed call's path only (why: the `once` option above).
///
/// Type errors and lints in a duplicated body are reported once (both
/// copies' diagnostics are identical, and the compiler prints each once); a
/// borrow-check error is reported for each copy, the closure's naming a
/// moved argument `value` (`tests/ui/fail/twin_body_errors.rs`).
///
/// In the single body, the value is held in a local of the declared return
/// type, so the body infers exactly as it does as the function's tail, and
/// the call ends there, on the normal path. A `return`, a `?` or a panic
/// leaves through the guard's drop instead. The `if`, whose condition is
/// the constant `true`, keeps a body that never returns (`todo!()`,
/// `loop {}`, `std::process::exit(..)`) from leaving the exit as
/// unreachable code. When the return type cannot be named in a `let`
/// (`impl Trait`, `!`), the body stays the function's tail and the guard's
/// drop ends the call.
///
/// The nested `fn` gives the report the function's full path (with the
/// type for methods); the file and line are those of the `#[profile]`
/// attribute (of the container's, for a function marked by its container). Every path in the expansion goes through `::tickprof` (or the
/// `crate = path` given), so it resolves in editions 2015 to 2024, and the
/// expansion raises no lint under `deny(warnings)`, clippy's `pedantic`,
/// `missing_docs`, `unreachable_pub` or `forbid(unsafe_code)`.
///
/// # Async functions and returned futures
///
/// On an `async fn` the future is timed poll by poll: the site's total and
/// self time are its busy time (the sum of its polls, wherever they run),
/// its `wall` time runs from the first poll to completion, `calls` counts
/// completed futures and `cancelled` those dropped after a poll but before
/// completing; marked calls made during a poll are its children. The marked
/// future is `Send` whenever the unmarked one is. Do not hold a
/// [`prof_scope!`] or [`prof_guard!`] guard across `.await`: the guard is
/// `!Send`, and it would time whatever the thread does while the task is
/// suspended.
///
/// A plain function that returns `impl Future<..>` or
/// `Pin<Box<dyn Future<..> ..>>` is timed the same way when its body is one
/// `async` block, or `Box::pin(async ..)` (what `#[async_trait]` writes):
/// that block is what is timed, not its creation. Any other body of such a
/// function is a compile error, since only the creation of the future
/// could be timed: write it as an `async fn` or as one `async` block. A
/// future behind a type alias is not recognised, and is timed as a plain
/// value (its creation only).
///
/// With the `enabled` feature off the arguments are still checked and the
/// function is returned unchanged.
///
/// # Overhead
///
/// A timed call costs 71 instructions in a release build (two clock
/// reads alone: 16), a counted call 20, one with `TICKPROF=off` or paused
/// 11 against 5 unmarked (`once`: 65, 43, 27); with the `enabled` feature
/// off, nothing. Figures, commands and host: `docs/overhead.md`.
///
/// # Compile cost
///
/// Each mark adds compiler time and code (figures against `tracing` and
/// `fastrace`: `docs/guide.md`, *Compile cost*); with the feature off, no
/// code: the attribute only parses and checks the function.
///
/// # Examples
///
/// ```
/// #[tickprof::profile]
/// fn parse(input: &str) -> usize {
///     input.split_whitespace().count()
/// }
///
/// #[tickprof::profile(name = "tokenize")]
/// fn tokens(input: &str) -> Vec<&str> {
///     input.split(',').collect()
/// }
///
/// assert_eq!(parse("a b c"), 3);
/// assert_eq!(tokens("a,b"), ["a", "b"]);
/// ```
pub use tickprof_macros::profile;

pub use tickprof_runtime::export;
pub use tickprof_runtime::fail;
pub use tickprof_runtime::log;

/// The opt-in integrations present in this build: `criterion` (features
/// `criterion05` … `criterion08`: criterion's profiler hook) and `tracing`
/// (feature `tracing`: a `tracing_subscriber` layer).
// Empty, hence unused, when no integration feature is on.
#[allow(unused_imports)]
pub use tickprof_runtime::integrations::*;

pub use tickprof_runtime::{dump_every, dump_now, dump_on_signal, DumpMode, DumpSignal};

pub use tickprof_runtime::{
    fmt_ns, pause, report, reset, resume, set_hook, sites, snapshot, Alloc, AllocStats, CallSite,
    ClockSource, Coverage, Edge, Enter, Exit, Faults, Guard, Hook, Injected, Mark, Report, RunInfo,
    SetHookError, SiteKind, SiteStats, Snapshot, SortKey, TextOptions, ThreadSite, ThreadStats,
    Timing, TreeNode, CSV_HEADER,
};

/// The code blocks of the `docs/` pages, compiled and run as doctests by
/// `cargo test --doc -p tickprof`. (The README's and
/// `docs/integrations.md`'s, which need criterion, run in the
/// `tickprof-testsuite` package; `docs/tracing.md`'s, which need the
/// `tracing` feature, in `tickprof-testsuite-tracing`.)
#[cfg(doctest)]
pub mod doc_pages {
    #[doc = include_str!("../docs/guide.md")]
    pub struct Guide;
    #[doc = include_str!("../docs/report.md")]
    pub struct ReportPage;
    #[doc = include_str!("../docs/formats.md")]
    pub struct Formats;
    #[doc = include_str!("../docs/accuracy.md")]
    pub struct Accuracy;
    #[doc = include_str!("../docs/overhead.md")]
    pub struct Overhead;
    #[doc = include_str!("../docs/services.md")]
    pub struct Services;
    #[doc = include_str!("../docs/tools.md")]
    pub struct Tools;
    #[doc = include_str!("../docs/internals.md")]
    pub struct Internals;
    #[doc = include_str!("../cli/README.md")]
    pub struct Cli;
    #[doc = include_str!("../CONTRIBUTING.md")]
    pub struct Contributing;
}

#[doc(hidden)]
/// Used by generated code, not public API.
pub mod __private {
    pub use tickprof_macros::scope_name;
    pub use tickprof_runtime::__private::*;
}

/// Times from this point to the end of the enclosing block.
///
/// `prof_scope!()` names the scope after the enclosing function and the line
/// (`myapp::load@42`); `prof_scope!("name")` after the function and the given
/// name (`myapp::load::name`). Every use is its own call site, so several in
/// one function, in nested blocks or in a loop body are reported separately.
/// The name must be a non-empty string literal; anything else is a compile
/// error saying what to write, with the `enabled` feature on or off. With it
/// off the macro expands to nothing else.
///
/// # Examples
///
/// ```
/// fn load(lines: &[&str]) -> usize {
///     tickprof::prof_scope!();
///     let mut n = 0;
///     for line in lines {
///         tickprof::prof_scope!("line");
///         n += line.len();
///     }
///     n
/// }
/// assert_eq!(load(&["ab", "c"]), 3);
/// ```
#[cfg(feature = "enabled")]
#[macro_export]
macro_rules! prof_scope {
    () => {
        $crate::__prof_scope_impl!($crate::__private::None)
    };
    ($name:literal $(,)?) => {
        $crate::__prof_scope_impl!($crate::__private::Some(
            $crate::__private::scope_name!(prof_scope, $name)
        ))
    };
    ($($other:tt)+) => {
        $crate::__private::compile_error!(
            "prof_scope! takes nothing or one string literal: prof_scope!() or prof_scope!(\"name\")"
        );
    };
}

/// Times from this point to the end of the enclosing block.
///
/// The `enabled` feature is off: this checks its argument as when it is on,
/// and expands to nothing.
#[cfg(not(feature = "enabled"))]
#[macro_export]
macro_rules! prof_scope {
    () => {};
    ($name:literal $(,)?) => {
        const _: &str = $crate::__private::scope_name!(prof_scope, $name);
    };
    ($($other:tt)+) => {
        $crate::__private::compile_error!(
            "prof_scope! takes nothing or one string literal: prof_scope!() or prof_scope!(\"name\")"
        );
    };
}

/// A guard value: times from this point until the returned [`Guard`] is
/// dropped.
///
/// Where [`prof_scope!`] always ends at the end of its block, the guard can
/// be moved into a struct, returned, or dropped early with `drop(g)`. Guards
/// are best dropped in the reverse order of their creation; when they are
/// not (or one is leaked with `mem::forget`), the thread's stack is
/// resynchronised: deeper frames are popped with the guard that encloses
/// them, every call is still counted with its own time, and the report
/// counts the out-of-order exits. Names follow `prof_scope!`. With the
/// `enabled` feature off it is an inert zero-sized value.
///
/// # Examples
///
/// ```
/// struct Request {
///     _timer: tickprof::Guard,
/// }
///
/// fn start() -> Request {
///     Request { _timer: tickprof::prof_guard!("request") }
/// }
///
/// let r = start();
/// let g = tickprof::prof_guard!();
/// drop(g);
/// drop(r);
/// ```
#[cfg(feature = "enabled")]
#[macro_export]
macro_rules! prof_guard {
    () => {
        $crate::__prof_guard_impl!($crate::__private::None)
    };
    ($name:literal $(,)?) => {
        $crate::__prof_guard_impl!($crate::__private::Some(
            $crate::__private::scope_name!(prof_guard, $name)
        ))
    };
    ($($other:tt)+) => {
        $crate::__private::compile_error!(
            "prof_guard! takes nothing or one string literal: prof_guard!() or prof_guard!(\"name\")"
        )
    };
}

/// A guard value (the `enabled` feature is off: the argument is checked as
/// when it is on, and the value is inert).
#[cfg(not(feature = "enabled"))]
#[macro_export]
macro_rules! prof_guard {
    () => {
        $crate::Guard::inert()
    };
    ($name:literal $(,)?) => {{
        const _: &str = $crate::__private::scope_name!(prof_guard, $name);
        $crate::Guard::inert()
    }};
    ($($other:tt)+) => {
        $crate::__private::compile_error!(
            "prof_guard! takes nothing or one string literal: prof_guard!() or prof_guard!(\"name\")"
        )
    };
}

#[cfg(feature = "enabled")]
#[doc(hidden)]
#[macro_export]
macro_rules! __prof_guard_impl {
    ($name:expr) => {{
        fn __tickprof_here() {}
        static __TICKPROF_SITE: $crate::__private::CallSite = $crate::__private::CallSite::scope(
            $crate::__private::path_of(__tickprof_here),
            $name,
            $crate::__private::file!(),
            $crate::__private::line!(),
            $crate::__private::column!(),
        );
        $crate::__private::mark!(__TICKPROF_SITE);
        $crate::__private::Guard::enter(&__TICKPROF_SITE)
    }};
}

#[cfg(feature = "enabled")]
#[doc(hidden)]
#[macro_export]
macro_rules! __prof_scope_impl {
    ($name:expr) => {
        let __tickprof_scope_guard = $crate::__prof_guard_impl!($name);
    };
}
