//! The `Report`: the same data as the exit report, as values.

use std::fmt::Write as _;
use std::io;

pub use crate::config::SortKey;

/// Where ticks come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(test, derive(serde::Serialize), serde(rename_all = "snake_case"))]
pub enum ClockSource {
    /// The x86_64 time-stamp counter (`rdtsc`).
    Tsc,
    /// The OS monotonic clock (`std::time::Instant`), ticks in nanoseconds.
    Monotonic,
    /// Nothing was recorded (profiling off).
    Off,
}

impl ClockSource {
    /// A short label for reports.
    pub fn label(self) -> &'static str {
        match self {
            ClockSource::Tsc => "rdtsc",
            ClockSource::Monotonic => "monotonic clock",
            ClockSource::Off => "off",
        }
    }
}

/// What a call site marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(test, derive(serde::Serialize), serde(rename_all = "snake_case"))]
pub enum SiteKind {
    /// A function marked `#[profile]`.
    Function,
    /// A block timed with `prof_scope!` or `prof_guard!`.
    Scope,
    /// An `async fn` marked `#[profile]`: total and self are busy time (the
    /// sum of its polls), `wall_ns` runs from first poll to completion.
    AsyncFunction,
}

/// Facts about the run and the clock: the report header.
#[derive(Clone, Debug)]
#[cfg_attr(test, derive(serde::Serialize))]
pub struct RunInfo {
    /// The clock read at entry and exit.
    pub clock: ClockSource,
    /// Ticks per second used to convert ticks to time.
    pub frequency_hz: f64,
    /// How the frequency was obtained (cpuid leaf, measured, confirmed).
    pub frequency_source: String,
    /// Whether the TSC is invariant (`None`: cpuid does not say).
    pub invariant_tsc: Option<bool>,
    /// Wall time from process start (or the last `reset`) to this report.
    pub wall_ns: u64,
    /// Threads that recorded at least one call.
    pub threads: usize,
    /// Deltas above this are rejected as oversized (`TICKPROF_MAX_DELTA`).
    pub max_delta_ns: u64,
    /// Guards dropped out of LIFO order (leaked, moved or dropped early):
    /// frames popped by a resynchronisation plus guards whose frame was gone.
    pub out_of_order: u64,
    /// Calls that could not be recorded: begun before and ended after their
    /// thread's profiler state was torn down (e.g. in another thread-local's
    /// destructor). Calls made entirely after it are still recorded, as
    /// calls with no marked caller.
    pub lost: u64,
    /// Calls made from inside the profiler's own bookkeeping: not recorded.
    pub reentrant: u64,
    /// Calls recorded on overflow nodes because a thread's calling-context
    /// tree reached `TICKPROF_MAX_NODES`: counted in their site's figures,
    /// their time attributed to the nearest recorded ancestor in the tree.
    pub folded_calls: u64,
    /// False when the report could not wait for a finishing thread and may
    /// miss that thread's calls.
    pub complete: bool,
    /// Whether the shown times (`total_ns`, `self_ns`, `mean_ns`, `min_ns`,
    /// `max_ns`) have the calibrated instrumentation cost subtracted
    /// (`TICKPROF_COMPENSATE`, default on). Raw and compensated values are
    /// both always in `SiteStats`.
    pub compensated: bool,
    /// Calibrated cost of a guard inside its own measured interval, in
    /// nanoseconds per call (0 when not calibrated).
    pub overhead_inner_ns: f64,
    /// The same in ticks.
    pub overhead_inner_ticks: f64,
    /// Calibrated cost of one marked call as its caller sees it, in
    /// nanoseconds (0 when not calibrated).
    pub overhead_call_ns: f64,
    /// The same in ticks.
    pub overhead_call_ticks: f64,
    /// How the overhead was calibrated.
    pub calibration: String,
    /// Estimated instrumentation cost of the whole run (every recorded call
    /// times `overhead_call_ns`), as a fraction of the wall time; summed over
    /// threads, so it can exceed 1 with several threads.
    pub overhead_share: f64,
    /// Tree nodes whose compensated time would have been negative (set to 0).
    pub clamped: u64,
    /// Whether individual calls are recorded for the trace output.
    pub tracing: bool,
    /// Trace events past the per-thread bound (`TICKPROF_TRACE_EVENTS`),
    /// counted and not stored.
    pub trace_dropped: u64,
}

/// A caller or callee of a site.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(test, derive(serde::Serialize))]
pub struct Edge {
    /// The other site's name; `<root>` for calls made with no marked caller.
    pub name: String,
    /// Calls along this edge.
    pub calls: u64,
    /// Time spent in the callee along this edge, in nanoseconds.
    pub total_ns: u64,
}

/// The figures of one call site.
#[derive(Clone, Debug)]
#[cfg_attr(test, derive(serde::Serialize))]
pub struct SiteStats {
    /// The shown name: function path, custom name, or scope name.
    pub name: String,
    /// Path of the enclosing function, e.g. `myapp::parser::Parser::next_token`.
    pub function: String,
    /// Function or scope.
    pub kind: SiteKind,
    /// Source file of the mark.
    pub file: String,
    /// Source line of the mark.
    pub line: u32,
    /// Completed calls, rejected ones included.
    pub calls: u64,
    /// Total time, counted once per outermost activation (recursion is not
    /// counted twice), in nanoseconds.
    pub total_ns: u64,
    /// Time not spent in marked callees, in nanoseconds.
    pub self_ns: u64,
    /// `total_ns` / accepted calls.
    pub mean_ns: f64,
    /// Shortest accepted call, in nanoseconds (0 if none).
    pub min_ns: u64,
    /// Longest accepted call, in nanoseconds.
    pub max_ns: u64,
    /// `total_ns` in raw ticks.
    pub total_ticks: u64,
    /// `self_ns` in raw ticks.
    pub self_ticks: u64,
    /// `min_ns` in raw ticks.
    pub min_ticks: u64,
    /// `max_ns` in raw ticks.
    pub max_ticks: u64,
    /// Total with the instrumentation cost left in, in nanoseconds.
    pub raw_total_ns: u64,
    /// Self with the instrumentation cost left in, in nanoseconds.
    pub raw_self_ns: u64,
    /// Total with the calibrated instrumentation cost subtracted.
    pub compensated_total_ns: u64,
    /// Self with the calibrated instrumentation cost subtracted (its own
    /// inner cost, and the cost of each marked call it made).
    pub compensated_self_ns: u64,
    /// Calls whose end stamp was before their start: not added to the times.
    pub reversed: u64,
    /// Calls longer than `TICKPROF_MAX_DELTA`: not added to the times.
    pub oversized: u64,
    /// Calls that ended by unwinding (a panic); their time is recorded.
    pub unwound: u64,
    /// async sites: first poll to completion, summed over completed calls,
    /// in nanoseconds (0 for other sites).
    pub wall_ns: u64,
    /// async sites: futures dropped before completion.
    pub cancelled: u64,
    /// Who called this site, most time first.
    pub callers: Vec<Edge>,
    /// What this site called, most time first.
    pub callees: Vec<Edge>,
}

impl SiteStats {
    /// `reversed + oversized`.
    pub fn rejected(&self) -> u64 {
        self.reversed + self.oversized
    }
}

/// One site's figures on one thread.
#[derive(Clone, Debug)]
#[cfg_attr(test, derive(serde::Serialize))]
pub struct ThreadSite {
    /// The site's name.
    pub name: String,
    /// Calls on this thread.
    pub calls: u64,
    /// Total on this thread, in nanoseconds.
    pub total_ns: u64,
    /// Self time on this thread, in nanoseconds.
    pub self_ns: u64,
}

/// One thread's figures.
#[derive(Clone, Debug)]
#[cfg_attr(test, derive(serde::Serialize))]
pub struct ThreadStats {
    /// The thread's name, or its `ThreadId` when unnamed.
    pub name: String,
    /// tickprof's number for the thread, in order of first marked call.
    pub id: u64,
    /// Whether the thread had finished when the report was built.
    pub finished: bool,
    /// Its sites, most total time first.
    pub sites: Vec<ThreadSite>,
}

/// One node of the merged calling-context tree: a call path.
#[derive(Clone, Debug)]
#[cfg_attr(test, derive(serde::Serialize))]
pub struct TreeNode {
    /// The site's name; empty for the root.
    pub name: String,
    /// Index of the parent node in [`Report::tree`] (`None` for the root).
    pub parent: Option<usize>,
    /// Depth below the root (the root is 0).
    pub depth: usize,
    /// Calls along this path.
    pub calls: u64,
    /// Time spent on this path, children included, in nanoseconds.
    pub total_ns: u64,
    /// Time on this path not spent in marked children, in nanoseconds.
    pub self_ns: u64,
    /// `total_ns` with the instrumentation cost left in.
    pub raw_total_ns: u64,
    /// `self_ns` with the instrumentation cost left in.
    pub raw_self_ns: u64,
}

/// A profile: the run header and one row per call site that ran.
///
/// Obtain one with [`report()`](crate::report) at any time; the exit report
/// prints the same value.
#[derive(Clone, Debug)]
#[cfg_attr(test, derive(serde::Serialize))]
pub struct Report {
    /// The header.
    pub run: RunInfo,
    /// One entry per site that ran, sorted by total time, descending.
    pub sites: Vec<SiteStats>,
    /// Per-thread breakdown, in order of first marked call.
    pub threads: Vec<ThreadStats>,
    /// The calling-context tree of all threads merged: `tree[0]` is the
    /// root, and every parent comes before its children. Calls folded
    /// because a thread's tree was full are not in it (see
    /// [`RunInfo::folded_calls`]); their time is inside their nearest
    /// recorded ancestor's self time.
    pub tree: Vec<TreeNode>,
    /// Individual calls per thread, when tracing is on (`TICKPROF_TRACE=1`
    /// or a `.trace.json` output); `None` otherwise. Left out of the JSON
    /// export (the `.trace.json` output is its own format).
    #[cfg_attr(test, serde(skip))]
    pub trace: Option<crate::trace::Trace>,
}

impl Report {
    /// The path of tree node `i` as names from the root's child down to it.
    pub fn path(&self, mut i: usize) -> Vec<&str> {
        let mut v = Vec::new();
        while let Some(n) = self.tree.get(i) {
            match n.parent {
                Some(p) => {
                    v.push(n.name.as_str());
                    i = p;
                }
                None => break,
            }
        }
        v.reverse();
        v
    }
}

/// What the text writer shows.
#[derive(Clone, Debug, Default)]
pub struct TextOptions {
    /// At most this many rows (`None`: all).
    pub top: Option<usize>,
    /// Add a caller/callee section per site.
    pub tree: bool,
    /// Add the per-thread breakdown.
    pub threads: bool,
}

/// The CSV header. Columns are only ever appended.
pub const CSV_HEADER: &str =
    "name,calls,total_ns,mean_ns,min_ns,max_ns,reversed,oversized,self_ns,unwound,wall_ns,cancelled,raw_total_ns,raw_self_ns,compensated_total_ns,compensated_self_ns";

impl Report {
    /// A report with no sites (profiling off or nothing ran).
    pub fn empty() -> Report {
        Report {
            run: RunInfo {
                clock: ClockSource::Off,
                frequency_hz: 0.0,
                frequency_source: String::new(),
                invariant_tsc: None,
                wall_ns: 0,
                threads: 0,
                max_delta_ns: 0,
                out_of_order: 0,
                lost: 0,
                reentrant: 0,
                folded_calls: 0,
                complete: true,
                compensated: false,
                overhead_inner_ns: 0.0,
                overhead_inner_ticks: 0.0,
                overhead_call_ns: 0.0,
                overhead_call_ticks: 0.0,
                calibration: String::new(),
                overhead_share: 0.0,
                clamped: 0,
                tracing: false,
                trace_dropped: 0,
            },
            sites: Vec::new(),
            threads: Vec::new(),
            tree: Vec::new(),
            trace: None,
        }
    }

    /// The site with this exact name, if it ran.
    pub fn site(&self, name: &str) -> Option<&SiteStats> {
        self.sites.iter().find(|s| s.name == name)
    }

    /// The first site whose name ends with `suffix` (handy with full paths:
    /// `report.find("::parse")`).
    pub fn find(&self, suffix: &str) -> Option<&SiteStats> {
        self.sites.iter().find(|s| s.name.ends_with(suffix))
    }

    /// Sorts the sites: totals, self, calls and mean descending, names
    /// ascending; ties by name.
    pub fn sort(&mut self, key: SortKey) {
        self.sites.sort_by(|a, b| {
            let o = match key {
                SortKey::Total => b.total_ns.cmp(&a.total_ns),
                SortKey::SelfTime => b.self_ns.cmp(&a.self_ns),
                SortKey::Calls => b.calls.cmp(&a.calls),
                SortKey::Mean => b.mean_ns.total_cmp(&a.mean_ns),
                SortKey::Name => a.name.cmp(&b.name),
            };
            o.then_with(|| a.name.cmp(&b.name))
        });
    }

    /// The text report with default options (all rows, flat table).
    pub fn to_text(&self) -> String {
        self.text(&TextOptions::default())
    }

    /// The text report.
    pub fn text(&self, opts: &TextOptions) -> String {
        let mut s = String::new();
        self.render(&mut s, opts);
        s
    }

    /// Writes the text report.
    ///
    /// # Errors
    /// Any error of `w`.
    pub fn write_text(&self, w: &mut dyn io::Write, opts: &TextOptions) -> io::Result<()> {
        w.write_all(self.text(opts).as_bytes())
    }

    /// The CSV table: [`CSV_HEADER`], then one line per site in the current
    /// order. Fields are quoted as RFC 4180 requires.
    pub fn to_csv(&self) -> String {
        let mut s = String::with_capacity(64 * (self.sites.len() + 1));
        s.push_str(CSV_HEADER);
        s.push_str("\r\n");
        for r in &self.sites {
            let _ = write!(
                s,
                "{},{},{},{:.1},{},{},{},{},{},{},{},{},{},{},{},{}\r\n",
                csv_field(&r.name),
                r.calls,
                r.total_ns,
                r.mean_ns,
                r.min_ns,
                r.max_ns,
                r.reversed,
                r.oversized,
                r.self_ns,
                r.unwound,
                r.wall_ns,
                r.cancelled,
                r.raw_total_ns,
                r.raw_self_ns,
                r.compensated_total_ns,
                r.compensated_self_ns
            );
        }
        s
    }

    /// Writes the CSV table.
    ///
    /// # Errors
    /// Any error of `w`.
    pub fn write_csv(&self, w: &mut dyn io::Write) -> io::Result<()> {
        w.write_all(self.to_csv().as_bytes())
    }

    fn render(&self, s: &mut String, opts: &TextOptions) {
        let r = &self.run;
        let _ = writeln!(
            s,
            "tickprof: {} site{} on {} thread{}, wall {}",
            self.sites.len(),
            plural(self.sites.len()),
            r.threads,
            plural(r.threads),
            fmt_ns(r.wall_ns as f64)
        );
        if r.clock != ClockSource::Off {
            let inv = match r.invariant_tsc {
                Some(true) => "yes",
                Some(false) => "NO (ticks may not be comparable across cores or power states)",
                None => "unknown",
            };
            let _ = writeln!(
                s,
                "tickprof: clock {} at {:.3} GHz ({}); invariant TSC: {}",
                r.clock.label(),
                r.frequency_hz / 1e9,
                r.frequency_source,
                inv
            );
            if r.overhead_call_ticks > 0.0 {
                let _ = writeln!(
                    s,
                    "tickprof: overhead per marked call: {:.1} ns ({:.0} ticks) inside its own time, {:.1} ns ({:.0} ticks) seen by its caller ({}); instrumentation cost ≈ {:.1}% of the run",
                    r.overhead_inner_ns,
                    r.overhead_inner_ticks,
                    r.overhead_call_ns,
                    r.overhead_call_ticks,
                    r.calibration,
                    100.0 * r.overhead_share
                );
            }
            let _ = writeln!(
                s,
                "tickprof: times are {}",
                if r.compensated {
                    "compensated: the calibrated overhead is subtracted (TICKPROF_COMPENSATE=0 for raw)"
                } else {
                    "raw: instrumentation overhead included"
                }
            );
        }
        let shown = opts
            .top
            .map_or(self.sites.len(), |t| t.min(self.sites.len()));
        let rows = &self.sites[..shown];
        let name_w = rows
            .iter()
            .map(|x| x.name.chars().count())
            .max()
            .unwrap_or(4)
            .clamp(4, 72);
        let any_async = self.sites.iter().any(|x| x.kind == SiteKind::AsyncFunction);
        let _ = write!(
            s,
            "{:<name_w$}  {:>10}  {:>10}  {:>6}  {:>10}  {:>6}  {:>10}  {:>10}  {:>10}  {:>8}",
            "name", "calls", "total", "%run", "self", "%self", "mean", "min", "max", "rejected"
        );
        if any_async {
            let _ = write!(s, "  {:>10}  {:>9}", "wall", "cancelled");
        }
        s.push('\n');
        let wall = r.wall_ns.max(1) as f64;
        for x in rows {
            let _ = writeln!(
                s,
                "{:<name_w$}  {:>10}  {:>10}  {:>5.1}%  {:>10}  {:>5.1}%  {:>10}  {:>10}  {:>10}  {:>8}",
                printable(&x.name),
                x.calls,
                fmt_ns(x.total_ns as f64),
                100.0 * x.total_ns as f64 / wall,
                fmt_ns(x.self_ns as f64),
                100.0 * x.self_ns as f64 / wall,
                fmt_ns(x.mean_ns),
                fmt_ns(x.min_ns as f64),
                fmt_ns(x.max_ns as f64),
                x.rejected()
            );
            if any_async {
                // Replace the row's newline with the async columns.
                s.pop();
                if x.kind == SiteKind::AsyncFunction {
                    let _ = writeln!(s, "  {:>10}  {:>9}", fmt_ns(x.wall_ns as f64), x.cancelled);
                } else {
                    let _ = writeln!(s, "  {:>10}  {:>9}", "-", "-");
                }
            }
        }
        if shown < self.sites.len() {
            let _ = writeln!(
                s,
                "tickprof: {} more site{} not shown (TICKPROF_TOP={})",
                self.sites.len() - shown,
                plural(self.sites.len() - shown),
                shown
            );
        }
        self.render_notes(s);
        if opts.tree {
            self.render_tree(s, rows);
        }
        if opts.threads {
            self.render_threads(s);
        }
    }

    fn render_notes(&self, s: &mut String) {
        let r = &self.run;
        let reversed: u64 = self.sites.iter().map(|x| x.reversed).sum();
        let oversized: u64 = self.sites.iter().map(|x| x.oversized).sum();
        let unwound: u64 = self.sites.iter().map(|x| x.unwound).sum();
        if reversed + oversized > 0 {
            let _ = writeln!(
                s,
                "tickprof: rejected {} call{} ({reversed} reversed, {oversized} longer than {}): counted, times not added",
                reversed + oversized,
                plural((reversed + oversized) as usize),
                fmt_ns(r.max_delta_ns as f64)
            );
        }
        if unwound > 0 {
            let _ = writeln!(
                s,
                "tickprof: {unwound} call{} ended by a panic (unwound); their time is included",
                plural(unwound as usize)
            );
        }
        if r.out_of_order > 0 {
            let _ = writeln!(
                s,
                "tickprof: {} guard{} dropped out of order; the stack was resynchronised",
                r.out_of_order,
                plural(r.out_of_order as usize)
            );
        }
        if r.folded_calls > 0 {
            let _ = writeln!(s, "tickprof: {} call{} folded into overflow nodes (calling-context tree full, TICKPROF_MAX_NODES)", r.folded_calls, plural(r.folded_calls as usize));
        }
        if r.lost > 0 {
            let _ = writeln!(s, "tickprof: {} call{} ended after their thread's profiler state was gone; not recorded", r.lost, plural(r.lost as usize));
        }
        if r.reentrant > 0 {
            let _ = writeln!(
                s,
                "tickprof: {} call{} made from inside tickprof's own bookkeeping; not recorded",
                r.reentrant,
                plural(r.reentrant as usize)
            );
        }
        if r.trace_dropped > 0 {
            let _ = writeln!(s, "tickprof: {} trace event{} dropped past TICKPROF_TRACE_EVENTS per thread (counted, not stored)", r.trace_dropped, plural(r.trace_dropped as usize));
        }
        if !r.complete {
            let _ = writeln!(
                s,
                "tickprof: a finishing thread held the profiler lock; its calls may be missing"
            );
        }
    }

    fn render_tree(&self, s: &mut String, rows: &[SiteStats]) {
        let wall = self.run.wall_ns.max(1) as f64;
        for x in rows {
            let accepted = x.calls - x.rejected();
            let per = |ns: u64| {
                if accepted == 0 {
                    0.0
                } else {
                    ns as f64 / accepted as f64
                }
            };
            let _ = writeln!(s, "\n== {} ({}:{})", printable(&x.name), x.file, x.line);
            let _ = writeln!(
                s,
                "   calls {}   total {} ({:.1}% of run, {} per call)   self {} ({:.1}% of run, {} per call)",
                x.calls,
                fmt_ns(x.total_ns as f64),
                100.0 * x.total_ns as f64 / wall,
                fmt_ns(per(x.total_ns)),
                fmt_ns(x.self_ns as f64),
                100.0 * x.self_ns as f64 / wall,
                fmt_ns(per(x.self_ns))
            );
            for e in &x.callers {
                let _ = writeln!(
                    s,
                    "   called by  {:<48} {:>10} calls  {:>10}",
                    printable(&e.name),
                    e.calls,
                    fmt_ns(e.total_ns as f64)
                );
            }
            for e in &x.callees {
                let _ = writeln!(
                    s,
                    "   calls      {:<48} {:>10} calls  {:>10}",
                    printable(&e.name),
                    e.calls,
                    fmt_ns(e.total_ns as f64)
                );
            }
        }
    }

    fn render_threads(&self, s: &mut String) {
        for t in &self.threads {
            let _ = writeln!(
                s,
                "\n-- thread {} (#{}{})",
                printable(&t.name),
                t.id,
                if t.finished { ", finished" } else { "" }
            );
            for x in &t.sites {
                let _ = writeln!(
                    s,
                    "   {:<56} {:>10} calls  total {:>10}  self {:>10}",
                    printable(&x.name),
                    x.calls,
                    fmt_ns(x.total_ns as f64),
                    fmt_ns(x.self_ns as f64)
                );
            }
        }
    }
}

/// A name for one line of the text report: control characters (a newline
/// in a custom name, say) become spaces so the table keeps its shape.
fn printable(name: &str) -> std::borrow::Cow<'_, str> {
    if name.chars().any(char::is_control) {
        std::borrow::Cow::Owned(
            name.chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect(),
        )
    } else {
        std::borrow::Cow::Borrowed(name)
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Quotes a CSV field when it holds a comma, quote, CR or LF (RFC 4180).
pub(crate) fn csv_field(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains([',', '"', '\r', '\n']) {
        std::borrow::Cow::Owned(format!("\"{}\"", s.replace('"', "\"\"")))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// Human time: `850 ns`, `12.3 µs`, `4.56 ms`, `1.234 s`.
pub fn fmt_ns(ns: f64) -> String {
    if ns < 1e3 {
        if ns < 10.0 && ns.fract() != 0.0 {
            format!("{ns:.1} ns")
        } else {
            format!("{ns:.0} ns")
        }
    } else if ns < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.3} s", ns / 1e9)
    }
}

#[cfg(feature = "enabled")]
pub(crate) fn fmt_secs(s: f64) -> String {
    fmt_ns(s * 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_units() {
        assert_eq!(fmt_ns(850.0), "850 ns");
        assert_eq!(fmt_ns(3.25), "3.2 ns");
        assert_eq!(fmt_ns(12_300.0), "12.30 µs");
        assert_eq!(fmt_ns(4_560_000.0), "4.56 ms");
        assert_eq!(fmt_ns(1_234_000_000.0), "1.234 s");
    }

    #[test]
    fn text_names_stay_on_one_line() {
        assert_eq!(printable("plain"), "plain");
        assert_eq!(printable("two\nlines\ttab"), "two lines tab");
    }

    #[test]
    fn csv_quoting() {
        assert_eq!(csv_field("a::b"), "a::b");
        assert_eq!(csv_field("Foo<A, B>"), "\"Foo<A, B>\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
