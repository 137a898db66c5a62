//! JSON output (`.json`): the whole [`Report`] with a `"version"` field.
//!
//! The document is the report's fields (`run`, `sites`, `threads`, `tree`,
//! and any added later) at the top level, next to `"version"`. Names are
//! the Rust field names; enums are lower-case strings (`"tsc"`,
//! `"function"`); times are whole nanoseconds except `mean_ns` (a float);
//! `null` stands for `None` (and for a float that is not a number).
//!
//! Written by hand, without serde: a profiler must not add `serde_json`'s
//! trait impls on std types (`impl PartialEq<Value> for i32`, …) to its
//! user's crate graph, where they change type inference. The output is the
//! text `serde_json::to_writer_pretty` gives (unit tests compare them byte
//! for byte); a float is in its shortest form that reads back exactly, where
//! in rare ties the last digit may differ from serde_json's choice.

use crate::report::{
    ClockSource, Edge, Report, RunInfo, SiteStats, ThreadSite, ThreadStats, TreeNode,
};
use std::fmt::Write as _;
use std::io;

/// The schema version written as `"version"`. It changes only when a
/// field is removed or changes meaning; new fields may appear at any time.
pub const VERSION: u32 = 1;

/// The report as a pretty-printed JSON document, ending in a newline.
///
/// # Errors
/// None in practice: the document is built in memory. The `Result` is kept
/// for the signature shared by the formats.
///
/// # Examples
///
/// ```
/// let report = tickprof_runtime::report();
/// let json = tickprof_runtime::export::json::render(&report).unwrap();
/// assert!(std::str::from_utf8(&json).unwrap().contains("\"version\": 1"));
/// ```
pub fn render(report: &Report) -> io::Result<Vec<u8>> {
    Ok(document(report).into_bytes())
}

/// Writes the report as a pretty-printed JSON document, ending in a newline.
///
/// # Errors
/// Any error of `w`.
pub fn write(report: &Report, mut w: impl io::Write) -> io::Result<()> {
    w.write_all(document(report).as_bytes())
}

/// The document as text.
fn document(report: &Report) -> String {
    let mut out = String::with_capacity(1024 + 1024 * report.sites.len() + 256 * report.tree.len());
    let mut w = Writer::pretty(&mut out);
    w.begin_object();
    w.key("version");
    w.u64(u64::from(VERSION));
    report_fields(&mut w, report);
    w.end_object();
    out.push('\n');
    out
}

/// The report's fields, in declaration order, into the open object.
fn report_fields(w: &mut Writer<'_>, r: &Report) {
    // Destructured so that a new field fails to compile until it is written
    // here (`trace` is its own format and left out).
    let Report {
        run,
        sites,
        threads,
        tree,
        trace: _,
    } = r;
    w.key("run");
    run_info(w, run);
    w.key("sites");
    w.array(sites, site_stats);
    w.key("threads");
    w.array(threads, thread_stats);
    w.key("tree");
    w.array(tree, tree_node);
}

fn clock_source(c: ClockSource) -> &'static str {
    match c {
        ClockSource::Tsc => "tsc",
        ClockSource::Monotonic => "monotonic",
        ClockSource::Off => "off",
    }
}

fn run_info(w: &mut Writer<'_>, r: &RunInfo) {
    let RunInfo {
        clock,
        frequency_hz,
        frequency_source,
        invariant_tsc,
        wall_ns,
        threads,
        max_delta_ns,
        out_of_order,
        lost,
        reentrant,
        folded_calls,
        complete,
        compensated,
        overhead_inner_ns,
        overhead_inner_ticks,
        overhead_call_ns,
        overhead_call_ticks,
        calibration,
        overhead_share,
        clamped,
        carried,
        tracing,
        trace_dropped,
        pid,
    } = r;
    w.begin_object();
    w.field_str("clock", clock_source(*clock));
    w.field_f64("frequency_hz", *frequency_hz);
    w.field_str("frequency_source", frequency_source);
    w.key("invariant_tsc");
    match invariant_tsc {
        Some(b) => w.bool(*b),
        None => w.null(),
    }
    w.field_u64("wall_ns", *wall_ns);
    w.field_u64("threads", *threads as u64);
    w.field_u64("max_delta_ns", *max_delta_ns);
    w.field_u64("out_of_order", *out_of_order);
    w.field_u64("lost", *lost);
    w.field_u64("reentrant", *reentrant);
    w.field_u64("folded_calls", *folded_calls);
    w.field_bool("complete", *complete);
    w.field_bool("compensated", *compensated);
    w.field_f64("overhead_inner_ns", *overhead_inner_ns);
    w.field_f64("overhead_inner_ticks", *overhead_inner_ticks);
    w.field_f64("overhead_call_ns", *overhead_call_ns);
    w.field_f64("overhead_call_ticks", *overhead_call_ticks);
    w.field_str("calibration", calibration);
    w.field_f64("overhead_share", *overhead_share);
    w.field_u64("clamped", *clamped);
    w.field_u64("carried", *carried);
    w.field_bool("tracing", *tracing);
    w.field_u64("trace_dropped", *trace_dropped);
    w.field_u64("pid", u64::from(*pid));
    w.end_object();
}

fn edge(w: &mut Writer<'_>, e: &Edge) {
    let Edge {
        name,
        calls,
        total_ns,
    } = e;
    w.begin_object();
    w.field_str("name", name);
    w.field_u64("calls", *calls);
    w.field_u64("total_ns", *total_ns);
    w.end_object();
}

fn site_stats(w: &mut Writer<'_>, s: &SiteStats) {
    let SiteStats {
        name,
        function,
        kind,
        file,
        line,
        column,
        calls,
        total_ns,
        self_ns,
        p_self,
        mean_ns,
        min_ns,
        max_ns,
        total_ticks,
        self_ticks,
        min_ticks,
        max_ticks,
        raw_total_ns,
        raw_self_ns,
        compensated_total_ns,
        compensated_self_ns,
        reversed,
        oversized,
        unwound,
        wall_ns,
        cancelled,
        callers,
        callees,
    } = s;
    w.begin_object();
    w.field_str("name", name);
    w.field_str("function", function);
    w.field_str("kind", kind.as_str());
    w.field_str("file", file);
    w.field_u64("line", u64::from(*line));
    w.field_u64("column", u64::from(*column));
    w.field_u64("calls", *calls);
    w.field_u64("total_ns", *total_ns);
    w.field_u64("self_ns", *self_ns);
    w.field_f64("p_self", *p_self);
    w.field_f64("mean_ns", *mean_ns);
    w.field_u64("min_ns", *min_ns);
    w.field_u64("max_ns", *max_ns);
    w.field_u64("total_ticks", *total_ticks);
    w.field_u64("self_ticks", *self_ticks);
    w.field_u64("min_ticks", *min_ticks);
    w.field_u64("max_ticks", *max_ticks);
    w.field_u64("raw_total_ns", *raw_total_ns);
    w.field_u64("raw_self_ns", *raw_self_ns);
    w.field_u64("compensated_total_ns", *compensated_total_ns);
    w.field_u64("compensated_self_ns", *compensated_self_ns);
    w.field_u64("reversed", *reversed);
    w.field_u64("oversized", *oversized);
    w.field_u64("unwound", *unwound);
    w.field_u64("wall_ns", *wall_ns);
    w.field_u64("cancelled", *cancelled);
    w.key("callers");
    w.array(callers, edge);
    w.key("callees");
    w.array(callees, edge);
    w.end_object();
}

fn thread_site(w: &mut Writer<'_>, s: &ThreadSite) {
    let ThreadSite {
        name,
        calls,
        total_ns,
        self_ns,
    } = s;
    w.begin_object();
    w.field_str("name", name);
    w.field_u64("calls", *calls);
    w.field_u64("total_ns", *total_ns);
    w.field_u64("self_ns", *self_ns);
    w.end_object();
}

fn thread_stats(w: &mut Writer<'_>, t: &ThreadStats) {
    let ThreadStats {
        name,
        id,
        finished,
        count,
        sites,
    } = t;
    w.begin_object();
    w.field_str("name", name);
    w.field_u64("id", *id);
    w.field_bool("finished", *finished);
    w.field_u64("count", *count);
    w.key("sites");
    w.array(sites, thread_site);
    w.end_object();
}

fn tree_node(w: &mut Writer<'_>, n: &TreeNode) {
    let TreeNode {
        name,
        parent,
        depth,
        calls,
        total_ns,
        self_ns,
        raw_total_ns,
        raw_self_ns,
    } = n;
    w.begin_object();
    w.field_str("name", name);
    w.key("parent");
    match parent {
        Some(p) => w.u64(*p as u64),
        None => w.null(),
    }
    w.field_u64("depth", *depth as u64);
    w.field_u64("calls", *calls);
    w.field_u64("total_ns", *total_ns);
    w.field_u64("self_ns", *self_ns);
    w.field_u64("raw_total_ns", *raw_total_ns);
    w.field_u64("raw_self_ns", *raw_self_ns);
    w.end_object();
}

/// A small JSON writer into a `String`: compact, or pretty-printed the way
/// `serde_json` does it (two-space indent, `"key": value`, `[]` and `{}`
/// for empty containers).
///
/// Values are written in order: `key` then a value inside an object,
/// values alone inside an array (the writer puts the commas). Unbalanced
/// calls give invalid JSON but never panic.
pub(crate) struct Writer<'a> {
    out: &'a mut String,
    pretty: bool,
    depth: usize,
    /// The open container has no element yet.
    empty: bool,
    /// A key was just written: the value goes on the same line.
    after_key: bool,
}

impl<'a> Writer<'a> {
    /// A pretty-printing writer appending to `out`.
    pub(crate) fn pretty(out: &'a mut String) -> Self {
        Writer {
            out,
            pretty: true,
            depth: 0,
            empty: true,
            after_key: false,
        }
    }

    /// A compact writer (no whitespace) appending to `out`.
    pub(crate) fn compact(out: &'a mut String) -> Self {
        Writer {
            pretty: false,
            ..Writer::pretty(out)
        }
    }

    /// Before a value: the separator and indentation an array element
    /// needs, nothing after a key.
    fn value_start(&mut self) {
        if self.after_key {
            self.after_key = false;
            return;
        }
        if self.depth > 0 {
            if !self.empty {
                self.out.push(',');
            }
            self.newline();
        }
        self.empty = false;
    }

    fn newline(&mut self) {
        if self.pretty {
            self.out.push('\n');
            for _ in 0..self.depth {
                self.out.push_str("  ");
            }
        }
    }

    /// An object key (escaped), then `: `.
    pub(crate) fn key(&mut self, k: &str) {
        self.value_start();
        push_str_literal(self.out, k);
        self.out.push(':');
        if self.pretty {
            self.out.push(' ');
        }
        self.after_key = true;
    }

    /// Opens an object.
    pub(crate) fn begin_object(&mut self) {
        self.value_start();
        self.out.push('{');
        self.depth += 1;
        self.empty = true;
    }

    /// Closes an object.
    pub(crate) fn end_object(&mut self) {
        self.end('}');
    }

    /// Opens an array.
    pub(crate) fn begin_array(&mut self) {
        self.value_start();
        self.out.push('[');
        self.depth += 1;
        self.empty = true;
    }

    /// Closes an array.
    pub(crate) fn end_array(&mut self) {
        self.end(']');
    }

    fn end(&mut self, c: char) {
        self.depth = self.depth.saturating_sub(1);
        if !self.empty {
            self.newline();
        }
        self.out.push(c);
        self.empty = false;
        self.after_key = false;
    }

    /// An array of `items`, each written by `each`.
    pub(crate) fn array<T>(&mut self, items: &[T], mut each: impl FnMut(&mut Self, &T)) {
        self.begin_array();
        for item in items {
            each(self, item);
        }
        self.end_array();
    }

    /// A string value.
    pub(crate) fn str(&mut self, s: &str) {
        self.value_start();
        push_str_literal(self.out, s);
    }

    /// An unsigned integer value.
    pub(crate) fn u64(&mut self, n: u64) {
        self.value_start();
        let _ = write!(self.out, "{n}");
    }

    /// A float value (`null` unless finite).
    pub(crate) fn f64(&mut self, x: f64) {
        self.value_start();
        push_f64(self.out, x);
    }

    /// `true` or `false`.
    pub(crate) fn bool(&mut self, b: bool) {
        self.value_start();
        self.out.push_str(if b { "true" } else { "false" });
    }

    /// `null`.
    pub(crate) fn null(&mut self) {
        self.value_start();
        self.out.push_str("null");
    }

    fn field_str(&mut self, k: &str, v: &str) {
        self.key(k);
        self.str(v);
    }

    fn field_u64(&mut self, k: &str, v: u64) {
        self.key(k);
        self.u64(v);
    }

    fn field_f64(&mut self, k: &str, v: f64) {
        self.key(k);
        self.f64(v);
    }

    fn field_bool(&mut self, k: &str, v: bool) {
        self.key(k);
        self.bool(v);
    }
}

/// Appends `s` as a JSON string literal: quoted, with `"` and `\` escaped,
/// control characters as `\b`, `\t`, `\n`, `\f`, `\r` or `\u00XX` (the
/// escapes `serde_json` writes). Everything else, non-ASCII included, is
/// kept as is.
///
/// Inside an HTML `<script>`, also replace `<` (see the HTML writer): JSON
/// does not escape it.
pub(crate) fn push_str_literal(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let esc = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x09 => "\\t",
            0x0A => "\\n",
            0x0C => "\\f",
            0x0D => "\\r",
            0x00..=0x1F => "",
            _ => continue,
        };
        // Escaped bytes are ASCII, so `i` and `i + 1` are char boundaries.
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xF)]));
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Appends `x` as a JSON number in the shortest form that reads back as the
/// same `f64`, laid out as `serde_json` does: plain decimals for exponents
/// -5 to 15 (`3.0`, `0.00001`, `123456789.5`), otherwise `1.5e+16`,
/// `1e-7`. A NaN or an infinity is written as `null`, as `serde_json` does.
pub(crate) fn push_f64(out: &mut String, x: f64) {
    if !x.is_finite() {
        out.push_str("null");
        return;
    }
    // `{:e}` gives the shortest round-trip digits: `-1.2345e-7`, `3e0`.
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mantissa = match mantissa.strip_prefix('-') {
        Some(m) => {
            out.push('-');
            m
        }
        None => mantissa,
    };
    let (first, rest) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = || first.chars().chain(rest.chars());
    let len = (first.len() + rest.len()) as i32;
    let zeros = |out: &mut String, n: i32| (0..n).for_each(|_| out.push('0'));
    if (-5..=15).contains(&exp) {
        if exp >= len - 1 {
            // 1234e7 -> 12340000000.0
            out.extend(digits());
            zeros(out, exp - (len - 1));
            out.push_str(".0");
        } else if exp >= 0 {
            // 1234e-2 -> 12.34
            let int = (exp + 1) as usize;
            out.extend(digits().take(int));
            out.push('.');
            out.extend(digits().skip(int));
        } else {
            // 1234e-6 -> 0.001234
            out.push_str("0.");
            zeros(out, -exp - 1);
            out.extend(digits());
        }
    } else {
        // 1234e30 -> 1.234e+33
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        let _ = write!(
            out,
            "e{}{}",
            if exp < 0 { '-' } else { '+' },
            exp.unsigned_abs()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{ClockSource, SiteKind};

    /// What `serde_json::to_writer_pretty` wrote for the report before this
    /// writer replaced it: the report types derive `Serialize` in tests only.
    fn serde_document(report: &Report) -> String {
        #[derive(serde::Serialize)]
        struct Document<'a> {
            version: u32,
            #[serde(flatten)]
            report: &'a Report,
        }
        let mut s = serde_json::to_string_pretty(&Document {
            version: VERSION,
            report,
        })
        .unwrap();
        s.push('\n');
        s
    }

    const HOSTILE: &[&str] = &[
        "",
        "plain::name",
        "quote \" and backslash \\ and slash /",
        "control \u{0} \u{1} \u{8} \t \n \u{b} \u{c} \r \u{1b} \u{1f} \u{7f}",
        "</script><script>alert(1)</script>",
        "non-ASCII: ß é ✓ 中文 🦀 \u{2028} \u{feff} \u{ffff}",
        "<[u8; 4] as Foo<'a>>::bar & {x}",
    ];

    const FLOATS: &[f64] = &[
        0.0,
        -0.0,
        3.0,
        -3.0,
        0.1,
        0.5,
        1.0 / 3.0,
        2.5e-3,
        1e-5,
        1.5e-5,
        1e-6,
        1e-7,
        1.234e-7,
        123456.789,
        1e15,
        999_999_999_999_999.9,
        1e16,
        1.5e16,
        123_456_789_012_345_680.0,
        1e21,
        1e22,
        2.5e100,
        f64::MAX,
        f64::MIN,
        f64::MIN_POSITIVE,
        5e-324,
        f64::EPSILON,
        2.596e9,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];

    /// A report with every field set, hostile names and awkward floats.
    fn full_report(name: &str, f: f64, g: f64) -> Report {
        let mut r = Report::empty();
        r.run = RunInfo {
            clock: ClockSource::Tsc,
            frequency_hz: f,
            frequency_source: name.to_owned(),
            invariant_tsc: Some(true),
            wall_ns: u64::MAX,
            threads: usize::MAX,
            max_delta_ns: 3_600_000_000_000,
            out_of_order: 1,
            lost: 2,
            reentrant: 3,
            folded_calls: 4,
            complete: false,
            compensated: true,
            overhead_inner_ns: g,
            overhead_inner_ticks: f,
            overhead_call_ns: 16.9,
            overhead_call_ticks: 44.0,
            calibration: format!("{name} calibration"),
            overhead_share: g,
            clamped: 5,
            carried: 7,
            tracing: true,
            trace_dropped: 6,
            pid: u32::MAX,
        };
        let edge = |n: &str| Edge {
            name: n.to_owned(),
            calls: 7,
            total_ns: 8,
        };
        r.sites.push(SiteStats {
            name: name.to_owned(),
            function: format!("f::{name}"),
            kind: SiteKind::AsyncFunction,
            file: "src/\"main\".rs".to_owned(),
            line: u32::MAX,
            column: 17,
            calls: 9,
            total_ns: 10,
            self_ns: 11,
            p_self: 0.125,
            mean_ns: f,
            min_ns: 12,
            max_ns: 13,
            total_ticks: 14,
            self_ticks: 15,
            min_ticks: 16,
            max_ticks: 17,
            raw_total_ns: 18,
            raw_self_ns: 19,
            compensated_total_ns: 20,
            compensated_self_ns: 21,
            reversed: 22,
            oversized: 23,
            unwound: 24,
            wall_ns: 25,
            cancelled: 26,
            callers: vec![edge("<root>"), edge(name)],
            callees: Vec::new(),
        });
        let mut second = r.sites[0].clone();
        second.kind = SiteKind::Scope;
        second.mean_ns = g;
        second.callers = Vec::new();
        second.callees = vec![edge(name)];
        r.sites.push(second);
        let mut third = r.sites[0].clone();
        third.kind = SiteKind::Function;
        r.sites.push(third);
        r.threads.push(ThreadStats {
            name: name.to_owned(),
            id: 1,
            finished: true,
            count: u64::MAX,
            sites: vec![ThreadSite {
                name: name.to_owned(),
                calls: 27,
                total_ns: 28,
                self_ns: 29,
            }],
        });
        r.threads.push(ThreadStats {
            name: "empty".to_owned(),
            id: 2,
            finished: false,
            count: 1,
            sites: Vec::new(),
        });
        r.tree.push(crate::export::test_node("", None, 0));
        let mut child = crate::export::test_node(name, Some(0), 30);
        child.depth = 1;
        r.tree.push(child);
        r.trace = Some(crate::report::Trace::default());
        r
    }

    #[test]
    fn same_text_as_serde_json_for_every_field_name_and_float() {
        for (i, name) in HOSTILE.iter().enumerate() {
            for (j, f) in FLOATS.iter().enumerate() {
                let g = FLOATS[(i + j + 1) % FLOATS.len()];
                let mut r = full_report(name, *f, g);
                assert_eq!(document(&r), serde_document(&r), "{name:?} {f:?} {g:?}");
                r.run.clock = if j % 2 == 0 {
                    ClockSource::Monotonic
                } else {
                    ClockSource::Off
                };
                r.run.invariant_tsc = if j % 2 == 0 { None } else { Some(false) };
                assert_eq!(document(&r), serde_document(&r), "{name:?} {f:?} {g:?}");
            }
        }
        let empty = Report::empty();
        assert_eq!(document(&empty), serde_document(&empty));
    }

    #[test]
    fn floats_read_back_exactly_with_serde_json() {
        // A deterministic spread over all exponents and mantissas.
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut out = String::new();
        let mut differ = 0;
        for i in 0..200_000 {
            let x = match i % 4 {
                0 => f64::from_bits(next()),
                1 => (next() % 1_000_000_000) as f64 / 1000.0,
                2 => (next() >> 11) as f64,
                _ => f64::from_bits(next() >> 12),
            };
            out.clear();
            push_f64(&mut out, x);
            let theirs = serde_json::to_string(&x).unwrap();
            if x.is_finite() {
                let back: f64 = serde_json::from_str(&out).unwrap();
                assert_eq!(back.to_bits(), x.to_bits(), "{out}");
            }
            if out != theirs {
                // Sometimes two shortest strings read back as `x` (a tie, or
                // 17 digits), and std and serde_json pick different ones:
                // same layout, only the last digit differs, both exact.
                let (ma, ea) = out.split_once('e').unwrap_or((&out, ""));
                let (mb, eb) = theirs.split_once('e').unwrap_or((&theirs, ""));
                assert_eq!(ea, eb, "{out} vs {theirs}");
                let (a, b) = (ma.as_bytes(), mb.as_bytes());
                assert_eq!(a.len(), b.len(), "{out} vs {theirs}");
                let first_diff = a.iter().zip(b).position(|(x, y)| x != y).unwrap();
                assert!(
                    a[first_diff..].iter().all(u8::is_ascii_digit),
                    "{out} vs {theirs}"
                );
                assert!(
                    b[first_diff..].iter().all(u8::is_ascii_digit),
                    "{out} vs {theirs}"
                );
                differ += 1;
            }
        }
        // Rare: well under 1% of these values.
        assert!(differ < 200_000 / 100, "{differ} differ");
        eprintln!("{differ} of 200000 differ from serde_json in the last digit");
        for x in FLOATS {
            out.clear();
            push_f64(&mut out, *x);
            let back: serde_json::Value = serde_json::from_str(&out).unwrap();
            match back.as_f64() {
                Some(b) => assert_eq!(b.to_bits(), x.to_bits(), "{out}"),
                None => assert!(!x.is_finite() && back.is_null(), "{out}"),
            }
        }
    }

    #[test]
    fn string_literals_read_back_as_the_same_string() {
        let all_controls: String = (0u8..0x20).map(char::from).collect();
        for s in HOSTILE.iter().copied().chain([all_controls.as_str()]) {
            let mut out = String::new();
            push_str_literal(&mut out, s);
            assert_eq!(out, serde_json::to_string(s).unwrap());
            let back: String = serde_json::from_str(&out).unwrap();
            assert_eq!(back, s);
            assert!(!out.chars().any(|c| c < ' '), "{out:?}");
        }
    }

    #[test]
    fn compact_writer_matches_serde_json_compact() {
        let mut out = String::new();
        let mut w = Writer::compact(&mut out);
        w.begin_object();
        w.key("a");
        w.array(&[1u64, 2], |w, n| w.u64(*n));
        w.key("b");
        w.begin_array();
        w.end_array();
        w.key("c \"q\"");
        w.begin_object();
        w.end_object();
        w.key("d");
        w.f64(0.25);
        w.key("e");
        w.null();
        w.end_object();
        let v = serde_json::json!({"a": [1, 2], "b": [], "c \"q\"": {}, "d": 0.25, "e": null});
        assert_eq!(out, serde_json::to_string(&v).unwrap());
    }

    #[test]
    fn empty_report_has_version_and_every_section() {
        let text = String::from_utf8(render(&Report::empty()).unwrap()).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["version"], 1);
        assert_eq!(v["run"]["clock"], "off");
        assert!(v["sites"].as_array().unwrap().is_empty());
        assert!(v["threads"].as_array().unwrap().is_empty());
        assert!(v["tree"].as_array().unwrap().is_empty());
        assert!(text.ends_with("}\n"));
        let mut via_write = Vec::new();
        write(&Report::empty(), &mut via_write).unwrap();
        assert_eq!(via_write, text.as_bytes());
    }
}
