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
    AllocStats, ClockSource, Coverage, Edge, Faults, Mark, Report, RunInfo, SiteStats, ThreadSite,
    ThreadStats, TreeNode,
};

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
        coverage,
        faults,
    } = r;
    w.key("run");
    run_info(w, run);
    w.key("sites");
    w.array(sites, site_stats);
    w.key("threads");
    w.array(threads, thread_stats);
    w.key("tree");
    w.array(tree, tree_node);
    w.key("coverage");
    match coverage {
        Some(c) => coverage_section(w, c),
        None => w.null(),
    }
    w.key("faults");
    match faults {
        Some(f) => faults_section(w, f),
        None => w.null(),
    }
}

fn coverage_section(w: &mut Writer<'_>, c: &Coverage) {
    let Coverage {
        marked,
        ran,
        never_called,
    } = c;
    w.begin_object();
    w.field_u64("marked", *marked as u64);
    w.field_u64("ran", *ran as u64);
    w.key("never_called");
    w.array(never_called, |w, m| {
        let Mark {
            name,
            kind,
            file,
            line,
        } = m;
        w.begin_object();
        w.field_str("name", name);
        w.field_str("kind", kind.as_str());
        w.field_str("file", file);
        w.field_u64("line", u64::from(*line));
        w.end_object();
    });
    w.end_object();
}

fn faults_section(w: &mut Writer<'_>, f: &Faults) {
    let Faults { seed, sites } = f;
    w.begin_object();
    w.field_u64("seed", *seed);
    w.key("sites");
    w.array(sites, |w, (name, count)| {
        w.begin_array();
        w.str(name);
        w.u64(*count);
        w.end_array();
    });
    w.end_object();
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
        leaked,
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
        alloc_installed,
        outside,
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
    w.field_u64("leaked", *leaked);
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
    w.field_bool("alloc_installed", *alloc_installed);
    w.key("outside");
    alloc_stats(w, outside);
    w.end_object();
}

fn alloc_stats(w: &mut Writer<'_>, a: &AllocStats) {
    let AllocStats {
        allocs,
        bytes,
        frees,
        freed_bytes,
    } = a;
    w.begin_object();
    w.field_u64("allocs", *allocs);
    w.field_u64("bytes", *bytes);
    w.field_u64("frees", *frees);
    w.field_u64("freed_bytes", *freed_bytes);
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
        resolved,
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
        alloc,
        self_alloc,
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
    w.field_bool("resolved", *resolved);
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
    w.key("alloc");
    alloc_stats(w, alloc);
    w.key("self_alloc");
    alloc_stats(w, self_alloc);
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
        alloc,
    } = s;
    w.begin_object();
    w.field_str("name", name);
    w.field_u64("calls", *calls);
    w.field_u64("total_ns", *total_ns);
    w.field_u64("self_ns", *self_ns);
    w.key("alloc");
    alloc_stats(w, alloc);
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
        alloc,
        self_alloc,
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
    w.key("alloc");
    alloc_stats(w, alloc);
    w.key("self_alloc");
    alloc_stats(w, self_alloc);
    w.end_object();
}

mod writer;
#[cfg(test)]
use writer::push_f64;
pub(crate) use writer::{push_str_literal, Writer};

#[cfg(test)]
mod tests;
