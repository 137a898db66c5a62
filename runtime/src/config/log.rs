//! The trace log's settings, `TICKPROF_LOG_*`: [`LogOptions`], declared
//! by its rows of the settings table (the log's matching lives in
//! `crate::log`, which imports this; `config` imports nothing of the log).

use super::table::settings;
use super::values::{Globs, Nanos, Numbers, Whole};

settings! {
    /// What the trace log shows (`TICKPROF_LOG_*`, or given to
    /// [`replay_trace_json`](crate::log::replay_trace_json)). The default
    /// shows everything.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut opts = tickprof_runtime::log::LogOptions::default();
    /// opts.filter = vec!["app::*".into()];
    /// opts.depth = 3;
    /// ```
    pub struct LogOptions {
        /// When not empty, only calls matching one of these glob patterns,
        /// and their subtrees, are shown.
        filter: Vec<String> {
            var: "TICKPROF_LOG_FILTER",
            parse: Globs,
            default: Vec::new(),
            note: "every call",
            help: "comma-separated glob patterns (`*`, `?`; a pattern without `::` also matches the last path segment): only matching calls and their subtrees are logged",
        },
        /// Calls matching one of these glob patterns, and their subtrees,
        /// are hidden.
        notrace: Vec<String> {
            var: "TICKPROF_LOG_NOTRACE",
            parse: Globs,
            default: Vec::new(),
            note: "none hidden",
            help: "comma-separated glob patterns: hide matching calls and their subtrees",
        },
        /// At most this many levels of shown calls (0: no limit).
        depth: usize {
            var: "TICKPROF_LOG_DEPTH",
            parse: Whole(0),
            default: 0,
            note: "no limit",
            help: "log at most this many levels of shown calls",
        },
        /// Calls shorter than this many nanoseconds are hidden with their
        /// subtrees (0: none).
        threshold_ns: u64 {
            var: "TICKPROF_LOG_THRESHOLD",
            parse: Nanos,
            default: 0,
            note: "every call",
            help: "hide calls shorter than this (`5us`, `2ms`) with their subtrees",
        },
        /// When not empty, only these threads (tickprof's thread numbers,
        /// as printed in brackets).
        tids: Vec<u64> {
            var: "TICKPROF_LOG_TID",
            parse: Numbers,
            default: Vec::new(),
            note: "every thread",
            help: "comma-separated thread numbers (the `[N]` on the log's lines): only these threads",
        },
    }
}
