//! Runtime of [tickprof](https://docs.rs/tickprof): the clock, call sites,
//! guards, per-thread calling-context trees and reports.
//!
//! Use the `tickprof` crate; this one is its implementation.

#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

#[cfg(feature = "enabled")]
mod calibrate;
#[cfg(feature = "enabled")]
mod clock;
mod config;
pub mod export;
#[cfg(feature = "enabled")]
mod future;
mod report;
#[cfg(feature = "enabled")]
mod runtime;
mod site;
mod snapshot;
#[cfg(feature = "enabled")]
mod thread;
mod trace;
#[cfg(feature = "enabled")]
mod tree;

pub use config::{Config, Layout, SortKey};
pub use snapshot::{snapshot, Snapshot};
#[cfg(feature = "enabled")]
pub use thread::Guard;
pub use trace::{Trace, TraceEvent, TraceThread, DEFAULT_TRACE_EVENTS};

/// Times one activation of a call site until dropped (profiling is off:
/// an inert zero-sized value).
#[cfg(not(feature = "enabled"))]
#[must_use = "the guard times until it is dropped"]
pub struct Guard {
    _not_send: core::marker::PhantomData<*const ()>,
}

#[cfg(not(feature = "enabled"))]
impl Guard {
    /// The inert guard that `prof_guard!` gives when profiling is off.
    pub fn inert() -> Guard {
        Guard {
            _not_send: core::marker::PhantomData,
        }
    }
}
pub use report::{
    fmt_ns, ClockSource, Edge, Report, RunInfo, SiteKind, SiteStats, TextOptions, ThreadSite,
    ThreadStats, TreeNode, CSV_HEADER,
};

/// The profile so far: every call site that ran, on every thread.
///
/// Threads still running are included as they are now; threads that
/// finished are included in full. With profiling off (the `enabled` feature
/// off, or `TICKPROF=off`) the report is empty.
///
/// # Examples
///
/// ```
/// let report = tickprof_runtime::report();
/// for site in &report.sites {
///     println!("{} {} calls", site.name, site.calls);
/// }
/// ```
pub fn report() -> Report {
    #[cfg(feature = "enabled")]
    {
        runtime::collect()
    }
    #[cfg(not(feature = "enabled"))]
    {
        Report::empty()
    }
}

/// Zeroes every call site's figures and restarts the run's wall clock.
///
/// Exact when no marked function is running on another thread; a call that
/// is running during the reset may keep part of its figures.
pub fn reset() {
    #[cfg(feature = "enabled")]
    runtime::reset();
}

/// Used by generated code, not public API.
#[doc(hidden)]
pub mod __private {
    #[cfg(feature = "enabled")]
    pub use crate::future::Instrumented;
    #[cfg(feature = "enabled")]
    pub use crate::runtime::record_raw;

    pub use crate::site::{path_of, CallSite};
    #[cfg(feature = "enabled")]
    pub use crate::thread::Guard;

    /// Wraps the future of a marked `async fn` (or the `async` block a
    /// marked function returns) in the poll-by-poll timer.
    ///
    /// The `Output = T` bound lets the compiler infer the block's output
    /// type from the function's declared one before it checks the block, so
    /// `?` and `return` inside it infer as they do unwrapped.
    #[cfg(feature = "enabled")]
    pub fn instrument<T, F: core::future::Future<Output = T>>(
        site: &'static CallSite,
        future: F,
    ) -> Instrumented<F> {
        Instrumented::new(site, future)
    }

    // Paths the expansions name through `$crate` / the `tickprof` crate, so
    // they resolve whatever the user's edition or prelude.
    pub use core::option::Option::{None, Some};
    pub use core::{column, compile_error, file, line};
}
