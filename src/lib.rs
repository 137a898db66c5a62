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
///
/// # Expansion
///
/// ```text
/// fn work(x: u32) -> u32 {
///     fn __tickprof_here() {}
///     static __TICKPROF_SITE: ::tickprof::__private::CallSite = /* name, file, line */;
///     let __tickprof_guard = ::tickprof::__private::Guard::enter(&__TICKPROF_SITE);
///     { /* the original body */ }
/// }
/// ```
///
/// With the `enabled` feature off the arguments are still checked and the
/// function is returned unchanged. The overhead with it on is given in the
/// crate documentation (section *Overhead*).
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

pub use tickprof_runtime::{
    fmt_ns, report, reset, snapshot, ClockSource, Edge, Guard, Report, RunInfo, SiteKind,
    SiteStats, Snapshot, SortKey, TextOptions, ThreadSite, ThreadStats, TreeNode, CSV_HEADER,
};

#[doc(hidden)]
/// Used by generated code, not public API.
pub mod __private {
    pub use tickprof_runtime::__private::*;
}

/// Times from this point to the end of the enclosing block.
///
/// `prof_scope!()` names the scope after the enclosing function and the line
/// (`myapp::load@42`); `prof_scope!("name")` after the function and the given
/// name (`myapp::load::name`). Every use is its own call site, so several in
/// one function, in nested blocks or in a loop body are reported separately.
/// With the `enabled` feature off it expands to nothing.
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
        $crate::__prof_scope_impl!(::core::option::Option::None)
    };
    ($name:literal $(,)?) => {
        $crate::__prof_scope_impl!(::core::option::Option::Some($name))
    };
    ($($other:tt)+) => {
        ::core::compile_error!(
            "prof_scope! takes nothing or one string literal: prof_scope!() or prof_scope!(\"name\")"
        );
    };
}

/// Times from this point to the end of the enclosing block.
///
/// The `enabled` feature is off: this expands to nothing.
#[cfg(not(feature = "enabled"))]
#[macro_export]
macro_rules! prof_scope {
    () => {};
    ($name:literal $(,)?) => {};
    ($($other:tt)+) => {
        ::core::compile_error!(
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
        $crate::__prof_guard_impl!(::core::option::Option::None)
    };
    ($name:literal $(,)?) => {
        $crate::__prof_guard_impl!(::core::option::Option::Some($name))
    };
    ($($other:tt)+) => {
        ::core::compile_error!(
            "prof_guard! takes nothing or one string literal: prof_guard!() or prof_guard!(\"name\")"
        )
    };
}

/// A guard value (the `enabled` feature is off: an inert value).
#[cfg(not(feature = "enabled"))]
#[macro_export]
macro_rules! prof_guard {
    () => {
        $crate::Guard::inert()
    };
    ($name:literal $(,)?) => {
        $crate::Guard::inert()
    };
    ($($other:tt)+) => {
        ::core::compile_error!(
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
            ::core::file!(),
            ::core::line!(),
            ::core::column!(),
        );
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
