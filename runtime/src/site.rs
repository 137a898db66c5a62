//! Call sites: one `static` per mark, holding its metadata and its
//! timing decision (timed or counted, see [`Timing`]).

use core::sync::atomic::AtomicU8;

/// What a call site marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(test, derive(serde::Serialize), serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum SiteKind {
    /// A function marked `#[profile]`.
    Function,
    /// A block timed with `prof_scope!` or `prof_guard!`.
    Scope,
    /// An `async fn` marked `#[profile]`: total and self are busy time (the
    /// sum of its polls), `wall_ns` runs from first poll to completion.
    AsyncFunction,
    /// A `tracing` span fed in by the `tracing` feature's layer
    /// (`#[tracing::instrument]`, `info_span!`): named `target::name`;
    /// timed as an async call (total and self are the time the span was
    /// entered, one call per span, counted when it closes).
    TracingSpan,
    /// A function the report found inside a marked call's time by
    /// program-counter samples (feature `inlined`): inlined into it by
    /// the compiler, or called out of line but not marked. No calls are
    /// counted; its times are the marked call's own time in the share its
    /// samples found there.
    Inlined,
}

impl SiteKind {
    /// The lower-case name used in JSON and HTML: `function`, `scope`,
    /// `async_function`, `tracing_span`, `inlined`.
    pub fn as_str(self) -> &'static str {
        match self {
            SiteKind::Function => "function",
            SiteKind::Scope => "scope",
            SiteKind::AsyncFunction => "async_function",
            SiteKind::TracingSpan => "tracing_span",
            SiteKind::Inlined => "inlined",
        }
    }

    /// The kind named `s` by [`SiteKind::as_str`], if any.
    pub fn parse(s: &str) -> Option<SiteKind> {
        [
            SiteKind::Function,
            SiteKind::Scope,
            SiteKind::AsyncFunction,
            SiteKind::TracingSpan,
            SiteKind::Inlined,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }

    /// Whether calls are timed poll by poll (entry by entry), with a wall
    /// time and cancellations: async functions and tracing spans.
    pub fn is_async(self) -> bool {
        matches!(self, SiteKind::AsyncFunction | SiteKind::TracingSpan)
    }
}

/// One marked function or scope: where it is and what it is called.
///
/// Generated code creates exactly one `static CallSite` per mark; generic
/// functions share theirs across instantiations. The time accumulators live
/// in per-thread calling-context trees that point back at the site, so this
/// value is read-only.
pub struct CallSite {
    path: fn() -> &'static str,
    label: Option<&'static str>,
    kind: SiteKind,
    file: &'static str,
    line: u32,
    column: u32,
    /// tickprof's own site (in its tests): recorded like any other, left
    /// out of every report.
    #[cfg_attr(not(feature = "enabled"), allow(dead_code))]
    internal: bool,
    /// The site's timing decision, kept by `record::timing` (which alone
    /// reads and writes it): written once, on a cold path.
    #[cfg_attr(not(feature = "enabled"), allow(dead_code))]
    pub(crate) decision: AtomicU8,
}

/// How a site's calls are measured: decided once per site while the
/// program runs (the rule is in `docs/accuracy.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(test, derive(serde::Serialize), serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum Timing {
    /// Every call reads the clock twice.
    Timed,
    /// Every call is counted; none reads the clock once its site is
    /// decided (its first calls, which decide it, are timed), so its times
    /// are the sampler's estimates.
    Counted,
}

impl Timing {
    /// The lower-case name used in JSON, CSV and pprof: `timed`, `counted`.
    pub fn as_str(self) -> &'static str {
        match self {
            Timing::Timed => "timed",
            Timing::Counted => "counted",
        }
    }

    /// The timing named `s` by [`Timing::as_str`], if any.
    pub fn parse(s: &str) -> Option<Timing> {
        [Timing::Timed, Timing::Counted]
            .into_iter()
            .find(|t| t.as_str() == s)
    }
}

/// [`CallSite`]'s decision field: no node of the site has finished
/// learning yet (the transitions are `record::timing`'s).
pub(crate) const UNDECIDED: u8 = 0;
/// [`CallSite`]'s decision field: its calls are timed.
#[cfg(feature = "enabled")]
pub(crate) const TIMED: u8 = 1;
/// [`CallSite`]'s decision field: its calls are counted, a sample timed.
#[cfg(feature = "enabled")]
pub(crate) const COUNTED: u8 = 2;

/// Returns a function that gives the type name of `f`'s type.
///
/// Generated code passes a nested `fn __tickprof_here() {}` so that the name
/// (`crate::module::Type::method::__tickprof_here`) carries the full path of
/// the enclosing function, computed only when the report is built.
pub const fn path_of<T>(f: T) -> fn() -> &'static str {
    core::mem::forget(f);
    core::any::type_name::<T>
}

impl core::fmt::Debug for CallSite {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CallSite")
            .field("kind", &self.kind)
            .field("file", &self.file)
            .field("line", &self.line)
            .finish_non_exhaustive()
    }
}

impl CallSite {
    /// A call site for a function marked `#[profile]`.
    ///
    /// `name` overrides the shown name (`#[profile(name = "...")]`).
    pub const fn function(
        path: fn() -> &'static str,
        name: Option<&'static str>,
        file: &'static str,
        line: u32,
    ) -> Self {
        Self::new(path, name, SiteKind::Function, file, line, 0)
    }

    /// A call site for an `async fn` marked `#[profile]`.
    pub const fn async_function(
        path: fn() -> &'static str,
        name: Option<&'static str>,
        file: &'static str,
        line: u32,
    ) -> Self {
        Self::new(path, name, SiteKind::AsyncFunction, file, line, 0)
    }

    /// A call site for `prof_scope!()` (unnamed) or `prof_scope!("name")`.
    pub const fn scope(
        path: fn() -> &'static str,
        name: Option<&'static str>,
        file: &'static str,
        line: u32,
        column: u32,
    ) -> Self {
        Self::new(path, name, SiteKind::Scope, file, line, column)
    }

    const fn new(
        path: fn() -> &'static str,
        label: Option<&'static str>,
        kind: SiteKind,
        file: &'static str,
        line: u32,
        column: u32,
    ) -> Self {
        CallSite {
            path,
            label,
            kind,
            file,
            line,
            column,
            internal: false,
            decision: AtomicU8::new(UNDECIDED),
        }
    }

    /// A call site for a `tracing` span callsite, named `name` (the
    /// span's `target::name`). Made once per tracing callsite by the
    /// `tracing` feature's layer.
    #[cfg(all(feature = "enabled", feature = "tracing"))]
    pub(crate) const fn tracing_span(name: &'static str, file: &'static str, line: u32) -> Self {
        fn no_path() -> &'static str {
            ""
        }
        Self::new(no_path, Some(name), SiteKind::TracingSpan, file, line, 0)
    }

    /// A site for a function found by program-counter samples inside marked
    /// calls (`crate::inlined`), named `name` (its path). Made once per
    /// function.
    #[cfg(all(feature = "inlined", target_os = "linux"))]
    pub(crate) const fn inlined(name: &'static str, file: &'static str, line: u32) -> Self {
        fn no_path() -> &'static str {
            ""
        }
        Self::new(no_path, Some(name), SiteKind::Inlined, file, line, 0)
    }

    /// A call site left out of every report, whose calls are all timed
    /// (the calibration's, and the recorder's unit tests', so that a test
    /// binary prints no exit report).
    #[cfg(feature = "enabled")]
    pub(crate) const fn internal(
        path: fn() -> &'static str,
        file: &'static str,
        line: u32,
    ) -> Self {
        let mut s = Self::new(path, None, SiteKind::Function, file, line, 0);
        s.internal = true;
        s.decision = AtomicU8::new(TIMED);
        s
    }

    /// Whether this is tickprof's own site (in its tests), left out of every
    /// report.
    #[cfg(feature = "enabled")]
    pub(crate) fn is_internal(&self) -> bool {
        self.internal
    }

    /// Whether this is a function or a scope.
    pub fn kind(&self) -> SiteKind {
        self.kind
    }

    /// The source file of the mark.
    pub fn file(&self) -> &'static str {
        self.file
    }

    /// The source line of the mark.
    pub fn line(&self) -> u32 {
        self.line
    }

    /// The source column of the mark (0 for functions).
    pub fn column(&self) -> u32 {
        self.column
    }

    /// The path of the enclosing function, as the user would write it,
    /// e.g. `myapp::parser::Parser::next_token`.
    pub fn function_path(&self) -> String {
        if let (SiteKind::TracingSpan | SiteKind::Inlined, Some(name)) = (self.kind, self.label) {
            return name.to_owned();
        }
        let path = crate::naming::clean_path((self.path)());
        match self.kind {
            // The marker of an async fn sits in the body's generated closure.
            SiteKind::AsyncFunction => path
                .strip_suffix("::{{closure}}")
                .map_or(path.clone(), str::to_owned),
            _ => path,
        }
    }

    /// The name shown in the report.
    ///
    /// Functions: the custom name if given, else the function path. Scopes:
    /// `function path::name` or `function path@line`.
    pub fn name(&self) -> String {
        match (self.kind, self.label) {
            (
                SiteKind::Function
                | SiteKind::AsyncFunction
                | SiteKind::TracingSpan
                | SiteKind::Inlined,
                Some(name),
            ) => name.to_owned(),
            (
                SiteKind::Function
                | SiteKind::AsyncFunction
                | SiteKind::TracingSpan
                | SiteKind::Inlined,
                None,
            ) => self.function_path(),
            (SiteKind::Scope, Some(name)) => format!("{}::{}", self.function_path(), name),
            (SiteKind::Scope, None) => format!("{}@{}", self.function_path(), self.line),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn here() {}

    #[test]
    fn names_follow_kind_and_label() {
        let f = CallSite::function(path_of(here), None, "a.rs", 3);
        assert!(f.name().ends_with("site::tests::here"), "{}", f.name());
        let g = CallSite::function(path_of(here), Some("custom"), "a.rs", 3);
        assert_eq!(g.name(), "custom");
        let s = CallSite::scope(path_of(here), None, "a.rs", 7, 5);
        assert!(s.name().ends_with("tests::here@7"), "{}", s.name());
        let n = CallSite::scope(path_of(here), Some("inner"), "a.rs", 7, 5);
        assert!(n.name().ends_with("tests::here::inner"), "{}", n.name());
    }
}
