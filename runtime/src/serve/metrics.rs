//! `/metrics`: per-site counters and latency histograms, and a few
//! process-wide counters, in the Prometheus text exposition format 0.0.4.
//!
//! Everything is cumulative since the start (or the last
//! `tickprof::reset()`, which Prometheus sees as a counter reset). Series
//! are per site, never per call path: at most [`MAX_SITES`] sites get
//! their own `function` label value, admitted in order of total time at
//! the scrapes that first see them and kept for the process's life; the
//! others are summed into `function="<other>"`.

use super::request::Request;
use super::response::Response;
use crate::report::{Report, SiteStats};
use std::collections::{BTreeSet, HashSet};
use std::fmt::Write;
use std::sync::{Mutex, PoisonError};

/// The most sites with series of their own.
pub(crate) const MAX_SITES: usize = 500;

/// The `function` label of the sites past [`MAX_SITES`].
pub(crate) const OTHER: &str = "<other>";

/// The histogram's upper bounds (`le`), in nanoseconds: 1-2-5 from 100 ns
/// to 100 s, the same in every process, so that replicas' buckets add up.
pub(crate) const LE_NS: [u64; 28] = [
    100,
    200,
    500,
    1_000,
    2_000,
    5_000,
    10_000,
    20_000,
    50_000,
    100_000,
    200_000,
    500_000,
    1_000_000,
    2_000_000,
    5_000_000,
    10_000_000,
    20_000_000,
    50_000_000,
    100_000_000,
    200_000_000,
    500_000_000,
    1_000_000_000,
    2_000_000_000,
    5_000_000_000,
    10_000_000_000,
    20_000_000_000,
    50_000_000_000,
    100_000_000_000,
];

/// The media type of the exposition format.
const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The sites admitted to series of their own so far.
static ADMITTED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// `GET /metrics`: the cumulative report (`report` makes it), rendered.
/// No query is taken.
pub(super) fn metrics(req: &Request, report: impl FnOnce() -> Report) -> Response {
    if !req.query.is_empty() {
        return Response::text(400, "tickprof: /metrics takes no parameters");
    }
    let body = if req.head_only() {
        Vec::new()
    } else {
        let report = report();
        let mut admitted = ADMITTED.lock().unwrap_or_else(PoisonError::into_inner);
        render(&report, &mut admitted).into_bytes()
    };
    Response {
        status: 200,
        fields: Vec::new(),
        content_type: CONTENT_TYPE,
        sized: !req.head_only(),
        body,
    }
}

/// One `function` label's figures.
#[derive(Default)]
struct Row {
    calls: u64,
    timed_calls: u64,
    total_ns: u64,
    self_ns: u64,
    /// Calls counted at or below each of [`LE_NS`] (cumulative).
    le: [u64; LE_NS.len()],
    count: u64,
    sum_ns: u64,
}

impl Row {
    fn add(&mut self, s: &SiteStats) {
        self.calls = self.calls.saturating_add(s.calls);
        self.timed_calls = self.timed_calls.saturating_add(s.timed_calls);
        self.total_ns = self.total_ns.saturating_add(s.raw_total_ns);
        self.self_ns = self.self_ns.saturating_add(s.raw_self_ns);
        for &(upper, n) in &s.hist {
            // A bucket counts under every bound it lies wholly below.
            let first = LE_NS.partition_point(|&le| le < upper);
            for c in &mut self.le[first..] {
                *c = c.saturating_add(n);
            }
            self.count = self.count.saturating_add(n);
        }
        self.sum_ns = self.sum_ns.saturating_add(s.hist_sum_ns);
    }
}

/// A site's `function` label: its name, unless that is [`OTHER`] or
/// taken already in `taken` (a set of the labels given so far): then, as
/// the report tells apart two marks of one name, `name (file:line)`, and
/// `#2`, `#3`… after that if still taken. Each label is added to `taken`.
fn label(s: &SiteStats, taken: &mut HashSet<String>) -> String {
    let mut label = s.name.clone();
    if label == OTHER || taken.contains(&label) {
        label = format!("{} ({}:{})", s.name, s.file, s.line);
    }
    let base = label.clone();
    let mut n = 1;
    while label == OTHER || taken.contains(&label) {
        n += 1;
        label = format!("{base} #{n}");
    }
    taken.insert(label.clone());
    label
}

/// A label value escaped as the format wants: `\`, `"` and line feeds.
pub(crate) fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A metric family's `# HELP` and `# TYPE` lines.
fn family(o: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(o, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// Nanoseconds as seconds.
fn seconds(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// The exposition of `report`; `admitted` holds the sites given series of
/// their own so far, and takes new ones while there is room.
pub(crate) fn render(report: &Report, admitted: &mut BTreeSet<String>) -> String {
    let mut rows: Vec<(String, Row)> = Vec::new();
    let mut other = Row::default();
    let mut others = 0u64;
    let mut labels = HashSet::new();
    for s in &report.sites {
        if admitted.contains(&s.name) || admitted.len() < MAX_SITES {
            admitted.insert(s.name.clone());
            let mut row = Row::default();
            row.add(s);
            rows.push((escape(&label(s, &mut labels)), row));
        } else {
            other.add(s);
            others += 1;
        }
    }
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    if others > 0 {
        rows.push((OTHER.to_owned(), other));
    }
    let mut o = String::with_capacity(256 + rows.len() * 2048);
    let r = &report.run;
    family(
        &mut o,
        "tickprof_info",
        "gauge",
        "tickprof's version and clock source (always 1).",
    );
    let _ = writeln!(
        o,
        "tickprof_info{{version=\"{}\",clock=\"{:?}\"}} 1",
        env!("CARGO_PKG_VERSION"),
        r.clock
    );
    type Value = fn(&Row) -> String;
    let per_site: [(&str, &str, Value); 4] = [
        (
            "tickprof_calls_total",
            "Completed calls of a marked function or scope.",
            |x| x.calls.to_string(),
        ),
        (
            "tickprof_timed_calls_total",
            "Calls that read the clock: every call of a timed site, the one-in-64 sample of a counted site (TICKPROF_TIME); the duration histogram counts these.",
            |x| x.timed_calls.to_string(),
        ),
        (
            "tickprof_time_seconds_total",
            "Time in a site's calls, recursion counted once, raw (instrumentation cost included).",
            |x| seconds(x.total_ns).to_string(),
        ),
        (
            "tickprof_self_seconds_total",
            "Time in a site's calls outside marked callees, raw.",
            |x| seconds(x.self_ns).to_string(),
        ),
    ];
    for (name, help, value) in per_site {
        family(&mut o, name, "counter", help);
        for (f, row) in &rows {
            let _ = writeln!(o, "{name}{{function=\"{f}\"}} {}", value(row));
        }
    }
    let h = "tickprof_call_duration_seconds";
    family(
        &mut o,
        h,
        "histogram",
        "Duration of each accepted call (every activation of a recursive site), raw; a call counts under a bound when its histogram bucket (1/8 of a power of two of clock ticks wide) lies wholly below it.",
    );
    for (f, row) in &rows {
        for (le, c) in LE_NS.iter().zip(row.le) {
            let _ = writeln!(
                o,
                "{h}_bucket{{function=\"{f}\",le=\"{}\"}} {c}",
                seconds(*le)
            );
        }
        let _ = writeln!(
            o,
            "{h}_bucket{{function=\"{f}\",le=\"+Inf\"}} {}",
            row.count
        );
        let _ = writeln!(o, "{h}_sum{{function=\"{f}\"}} {}", seconds(row.sum_ns));
        let _ = writeln!(o, "{h}_count{{function=\"{f}\"}} {}", row.count);
    }
    let rejected = report
        .sites
        .iter()
        .fold(0u64, |a, s| a.saturating_add(s.rejected()));
    let process: [(&str, &str, &str, u64); 6] = [
        ("tickprof_rejected_calls_total", "counter", "Calls counted whose time was rejected (reversed or longer than TICKPROF_MAX_DELTA).", rejected),
        ("tickprof_lost_calls_total", "counter", "Calls that ended after their thread's profiler state was gone: not recorded.", r.lost),
        ("tickprof_trace_events_dropped_total", "counter", "Trace events dropped past TICKPROF_TRACE_EVENTS per thread.", r.trace_dropped),
        ("tickprof_tree_nodes", "gauge", "Nodes (call paths) of the merged calling-context tree.", report.tree.len() as u64),
        ("tickprof_threads", "gauge", "Threads that made marked calls, live and finished.", r.threads as u64),
        ("tickprof_metrics_other_sites", "gauge", "Sites summed into function=\"<other>\" (past the cap on sites with series of their own).", others),
    ];
    for (name, kind, help, v) in process {
        family(&mut o, name, kind, help);
        let _ = writeln!(o, "{name} {v}");
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative_and_labels_escaped() {
        let mut r = Report::empty();
        let mut s = crate::export::test_site("a\"b\\c\nd", crate::SiteKind::Function);
        s.hist = vec![(95, 1), (150, 2), (2_000, 4), (u64::MAX, 1)];
        s.hist_sum_ns = 10_000;
        r.sites.push(s);
        let mut admitted = BTreeSet::new();
        let text = render(&r, &mut admitted);
        let f = r#"function="a\"b\\c\nd""#;
        assert!(
            text.contains(&format!("tickprof_calls_total{{{f}}} 3\n")),
            "{text}"
        );
        let bucket =
            |le: &str| format!("tickprof_call_duration_seconds_bucket{{{f},le=\"{le}\"}} ");
        assert!(text.contains(&(bucket("0.0000001") + "1\n")), "{text}");
        assert!(text.contains(&(bucket("0.0000002") + "3\n")));
        assert!(text.contains(&(bucket("0.000001") + "3\n")));
        assert!(text.contains(&(bucket("0.000002") + "7\n")));
        assert!(text.contains(&(bucket("100") + "7\n")));
        assert!(text.contains(&(bucket("+Inf") + "8\n")));
        assert!(text.contains(&format!("tickprof_call_duration_seconds_count{{{f}}} 8\n")));
        assert!(text.contains(&format!(
            "tickprof_call_duration_seconds_sum{{{f}}} 0.00001\n"
        )));
    }

    #[test]
    fn a_site_named_like_a_series_of_tickprofs_is_told_apart() {
        let mut r = Report::empty();
        let sites = [
            (OTHER, 7),
            ("<other> (src/lib.rs:7)", 9),
            ("a", 1),
            ("a", 2),
            ("a", 2),
        ];
        for (name, line) in sites {
            let mut s = crate::export::test_site(name, crate::SiteKind::Function);
            (s.file, s.line) = ("src/lib.rs".into(), line);
            r.sites.push(s);
        }
        let text = render(&r, &mut BTreeSet::new());
        for label in [
            "<other> (src/lib.rs:7)",
            "<other> (src/lib.rs:7) (src/lib.rs:9)",
            "a",
            "a (src/lib.rs:2)",
            "a (src/lib.rs:2) #2",
        ] {
            assert!(
                text.contains(&format!("tickprof_calls_total{{function=\"{label}\"}} 3\n")),
                "{label} in {text}"
            );
        }
        assert!(!text.contains("{function=\"<other>\"}"), "{text}");
        assert!(text.contains("tickprof_metrics_other_sites 0\n"));
    }

    #[test]
    fn sites_past_the_cap_share_one_label() {
        let mut r = Report::empty();
        for i in 0..MAX_SITES + 3 {
            r.sites.push(crate::export::test_site(
                &format!("s{i:04}"),
                crate::SiteKind::Function,
            ));
        }
        let mut admitted = BTreeSet::new();
        let text = render(&r, &mut admitted);
        assert_eq!(admitted.len(), MAX_SITES);
        assert!(
            text.contains("tickprof_calls_total{function=\"<other>\"} 9\n"),
            "{text}"
        );
        assert!(text.contains("tickprof_metrics_other_sites 3\n"));
        // Admitted sites keep their series when others come first.
        r.sites.reverse();
        let again = render(&r, &mut admitted);
        assert!(again.contains("tickprof_calls_total{function=\"s0000\"} 3\n"));
        assert!(again.contains("tickprof_calls_total{function=\"<other>\"} 9\n"));
    }
}
