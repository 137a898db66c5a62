//! The site columns, in one table that the text, CSV and HTML writers all
//! render from, and the one list of report notes that the text and HTML
//! reports print under the table.
//!
//! Adding a column is one entry in `site_columns!` below (plus the value
//! in [`SiteStats`] and the code that builds it). CSV columns are only
//! ever appended: the CSV header is the table's order; `order` places a
//! column in the text and HTML tables.

use crate::report::{fmt_ns, AllocStats, Report, SiteStats};

/// The name of the row of allocations made outside any marked call.
pub(crate) const OUTSIDE: &str = "<outside marked calls>";

/// One cell of a site row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Cell<'a> {
    /// Text (the name).
    Text(&'a str),
    /// A count.
    Count(u64),
    /// A time in whole nanoseconds.
    Ns(u64),
    /// A time in fractional nanoseconds (means).
    Mean(f64),
    /// `part` as a share of `whole` (shown as a percentage; 0 when `whole`
    /// is 0).
    Share(u64, u64),
    /// A time in whole nanoseconds below the clock's resolution: shown
    /// `~15 ns` to people, as a plain number to machines.
    ApproxNs(u64),
    /// A mean below the clock's resolution (as `ApproxNs`).
    ApproxMean(f64),
    /// A time of a site that ran but whose estimate is 0 (too few samples,
    /// see [`SiteStats::too_few_samples`]): shown `too few` to people, 0 to
    /// machines.
    TooFew,
    /// Yes or no (`true`/`false` in CSV).
    Flag(bool),
    /// A number of bytes.
    Bytes(u64),
}

impl Cell<'_> {
    /// The share as a fraction (0 for a zero whole).
    pub fn fraction(part: u64, whole: u64) -> f64 {
        if whole == 0 {
            0.0
        } else {
            part as f64 / whole as f64
        }
    }

    /// The number the HTML table sorts by.
    pub fn sort_key(&self) -> f64 {
        match *self {
            Cell::Text(_) => 0.0,
            Cell::Count(n) | Cell::Ns(n) | Cell::Bytes(n) => n as f64,
            Cell::Mean(x) if x.is_finite() => x,
            Cell::Mean(_) => 0.0,
            Cell::Share(p, w) => Cell::fraction(p, w),
            Cell::ApproxNs(n) => n as f64,
            Cell::ApproxMean(x) => Cell::Mean(x).sort_key(),
            Cell::TooFew => 0.0,
            Cell::Flag(b) => f64::from(u8::from(b)),
        }
    }

    /// For people (text and HTML cells).
    pub fn human(&self) -> String {
        match *self {
            Cell::Text(s) => s.to_owned(),
            Cell::Count(n) => n.to_string(),
            Cell::Ns(n) => fmt_ns(n as f64),
            Cell::Mean(x) => fmt_ns(if x.is_finite() { x } else { 0.0 }),
            Cell::Share(p, w) => format!("{:.1}%", 100.0 * Cell::fraction(p, w)),
            Cell::ApproxNs(n) => format!("~{}", Cell::Ns(n).human()),
            Cell::ApproxMean(x) => format!("~{}", Cell::Mean(x).human()),
            Cell::TooFew => "too few".to_owned(),
            Cell::Flag(b) => (if b { "yes" } else { "no" }).to_owned(),
            Cell::Bytes(n) => fmt_bytes(n),
        }
    }

    /// For machines (CSV fields, unquoted).
    pub fn machine(&self) -> String {
        match *self {
            Cell::Text(s) => s.to_owned(),
            Cell::Count(n) | Cell::Ns(n) | Cell::Bytes(n) => n.to_string(),
            Cell::Mean(x) => format!("{:.1}", if x.is_finite() { x } else { 0.0 }),
            Cell::Share(p, w) => format!("{:.4}", Cell::fraction(p, w)),
            Cell::ApproxNs(n) => Cell::Ns(n).machine(),
            Cell::ApproxMean(x) => Cell::Mean(x).machine(),
            Cell::TooFew => "0".to_owned(),
            Cell::Flag(b) => b.to_string(),
        }
    }
}

/// When a column is shown in the text and HTML tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Show {
    /// Not in the tables (CSV only).
    Never,
    /// Always.
    Always,
    /// When the report has an async site; `-` in the other rows.
    Async,
    /// When `tickprof::Alloc` is installed (allocation counts).
    Alloc,
    /// When a failpoint injected a fault during the run.
    Faults,
}

/// One column of the site table.
pub(crate) struct Column {
    /// The CSV header name; `None` for table-only columns.
    pub csv: Option<&'static str>,
    /// The text and HTML header.
    pub label: &'static str,
    /// Position in the text and HTML tables (ascending).
    pub order: u16,
    /// Width in the text table (the name column is sized to its rows).
    pub width: usize,
    /// When the tables show it.
    pub show: Show,
    /// What it means (HTML header tooltip).
    pub meaning: &'static str,
    /// The site's value.
    pub value: for<'a> fn(&'a SiteStats, &Report) -> Cell<'a>,
}

/// A table-only column (the macro below sets `csv` for CSV columns).
const fn col(
    label: &'static str,
    order: u16,
    width: usize,
    show: Show,
    meaning: &'static str,
    value: for<'a> fn(&'a SiteStats, &Report) -> Cell<'a>,
) -> Column {
    Column {
        csv: None,
        label,
        order,
        width,
        show,
        meaning,
        value,
    }
}

macro_rules! site_columns {
    (csv { $first:literal => $fcol:expr, $( $name:literal => $col:expr, )* }
     table { $( $tcol:expr, )* }) => {
        /// The CSV header. Columns are only ever appended.
        pub const CSV_HEADER: &str = concat!($first $(, ",", $name)*);

        /// Every column: the CSV ones in CSV order, then the table-only ones.
        pub(crate) const COLUMNS: &[Column] = &[
            Column { csv: Some($first), ..$fcol },
            $( Column { csv: Some($name), ..$col }, )*
            $( $tcol, )*
        ];
    };
}

use Show::{Alloc, Always, Async, Faults, Never};

/// A time of `site`: marked `~` when the site's calls are below the
/// clock's resolution; `too few` when their estimate is 0 (too few
/// samples).
fn approx(site: &SiteStats, ns: u64) -> Cell<'_> {
    if site.too_few_samples() {
        Cell::TooFew
    } else if site.resolved {
        Cell::Ns(ns)
    } else {
        Cell::ApproxNs(ns)
    }
}

site_columns! {
    csv {
        "name" => col("name", 0, 0, Always, "site name; click for callers and callees", |s, _| Cell::Text(&s.name)),
        "calls" => col("calls", 10, 10, Always, "completed calls", |s, _| Cell::Count(s.calls)),
        "total_ns" => col("total", 20, 10, Always, "total time, recursion counted once", |s, _| approx(s, s.total_ns)),
        "mean_ns" => col("mean", 60, 10, Always, "mean time of one accepted call", |s, _| if s.too_few_samples() { Cell::TooFew } else if s.resolved { Cell::Mean(s.mean_ns) } else { Cell::ApproxMean(s.mean_ns) }),
        "min_ns" => col("min", 70, 10, Always, "shortest accepted call", |s, _| approx(s, s.min_ns)),
        "max_ns" => col("max", 80, 10, Always, "longest accepted call", |s, _| approx(s, s.max_ns)),
        "reversed" => col("reversed", 0, 0, Never, "calls whose end stamp was before their start", |s, _| Cell::Count(s.reversed)),
        "oversized" => col("oversized", 0, 0, Never, "calls longer than TICKPROF_MAX_DELTA", |s, _| Cell::Count(s.oversized)),
        "self_ns" => col("self", 40, 10, Always, "time not spent in marked callees", |s, _| approx(s, s.self_ns)),
        "unwound" => col("unwound", 0, 0, Never, "calls ended by a panic", |s, _| Cell::Count(s.unwound)),
        "wall_ns" => col("wall", 100, 10, Async, "async: first poll to completion, summed over calls", |s, _| Cell::Ns(s.wall_ns)),
        "cancelled" => col("cancelled", 110, 9, Async, "async: futures dropped before completion", |s, _| Cell::Count(s.cancelled)),
        "raw_total_ns" => col("raw total", 0, 0, Never, "total with the instrumentation cost left in", |s, _| Cell::Ns(s.raw_total_ns)),
        "raw_self_ns" => col("raw self", 0, 0, Never, "self with the instrumentation cost left in", |s, _| Cell::Ns(s.raw_self_ns)),
        "compensated_total_ns" => col("compensated total", 0, 0, Never, "total with the instrumentation the sampler measured taken out", |s, _| Cell::Ns(s.compensated_total_ns)),
        "compensated_self_ns" => col("compensated self", 0, 0, Never, "self with the instrumentation the sampler measured taken out", |s, _| Cell::Ns(s.compensated_self_ns)),
        "p_self" => col("p_self", 55, 7, Always, "self time as a share of the site's own total", |s, _| Cell::Share(s.self_ns, s.total_ns)),
        "resolved" => col("resolved", 0, 0, Never, "calls long enough to be timed (see the note under the table)", |s, _| Cell::Flag(s.resolved)),
        "allocs" => col("allocs", 120, 9, Alloc, "allocations (tickprof::Alloc), marked callees included", |s, _| Cell::Count(s.alloc.allocs)),
        "alloc_bytes" => col("bytes", 130, 10, Alloc, "bytes allocated, marked callees included", |s, _| Cell::Bytes(s.alloc.bytes)),
        "frees" => col("frees", 0, 0, Never, "frees, marked callees included", |s, _| Cell::Count(s.alloc.frees)),
        "freed_bytes" => col("freed bytes", 0, 0, Never, "bytes freed, marked callees included", |s, _| Cell::Bytes(s.alloc.freed_bytes)),
        "self_allocs" => col("self allocs", 0, 0, Never, "allocations not made in marked callees", |s, _| Cell::Count(s.self_alloc.allocs)),
        "self_alloc_bytes" => col("self bytes", 0, 0, Never, "bytes allocated not in marked callees", |s, _| Cell::Bytes(s.self_alloc.bytes)),
        "faults" => col("faults", 120, 8, Faults, "faults injected at this site's failpoint (TICKPROF_FAIL)", |s, r| Cell::Count(r.faults.as_ref().map_or(0, |f| f.at(&s.name)))),
        "p50_ns" => col("p50", 72, 10, Always, "median call, from the site's latency histogram (within 6.25%)", |s, _| approx(s, s.p50_ns)),
        "p90_ns" => col("p90", 74, 10, Always, "90th percentile call, from the latency histogram", |s, _| approx(s, s.p90_ns)),
        "p99_ns" => col("p99", 76, 10, Always, "99th percentile call, from the latency histogram", |s, _| approx(s, s.p99_ns)),
        "timing" => col("timing", 0, 0, Never, "timed, or counted: calls exact, times estimated from a timed sample (TICKPROF_TIME)", |s, _| Cell::Text(s.timing.as_str())),
        "timed_calls" => col("timed calls", 0, 0, Never, "calls that read the clock", |s, _| Cell::Count(s.timed_calls)),
        "pc_samples" => col("pc samples", 0, 0, Never, "program-counter samples a row's share of its callers' time rests on (feature inlined)", |s, _| Cell::Count(s.pc_samples)),
    }
    table {
        col("%run", 30, 6, Always, "total time as a share of the run's wall time (threads add up, so it can pass 100%)", |s, r| Cell::Share(s.total_ns, r.run.wall_ns)),
        col("%self", 50, 6, Always, "self time as a share of the run's wall time (threads add up)", |s, r| Cell::Share(s.self_ns, r.run.wall_ns)),
        col("rejected", 90, 8, Always, "calls whose time was rejected (reversed or oversized)", |s, _| Cell::Count(s.rejected())),
    }
}

/// The columns the text and HTML tables show for `report`, in order.
pub(crate) fn shown(report: &Report) -> Vec<&'static Column> {
    let any_async = report.sites.iter().any(|x| x.kind.is_async());
    let any_fault = report.faults.as_ref().is_some_and(|f| f.total() > 0);
    let mut v: Vec<&Column> = COLUMNS
        .iter()
        .filter(|c| {
            c.show == Always
                || (c.show == Async && any_async)
                || (c.show == Alloc && report.run.alloc_installed)
                || (c.show == Faults && any_fault)
        })
        .collect();
    v.sort_by_key(|c| c.order);
    v
}

/// The cell of `column` for `site`, or `None` where the table shows `-`
/// (an async-only column on a site that is not async; the calls and the
/// per-call figures of a row of an inlined function, which claims none).
pub(crate) fn table_cell<'a>(column: &Column, site: &'a SiteStats, r: &Report) -> Option<Cell<'a>> {
    let no_calls = site.kind == crate::report::SiteKind::Inlined
        && matches!(
            column.csv,
            Some("calls" | "min_ns" | "max_ns" | "p50_ns" | "p90_ns" | "p99_ns" | "mean_ns")
        );
    if no_calls || column.show == Async && !site.kind.is_async() {
        None
    } else {
        Some((column.value)(site, r))
    }
}

/// Human bytes: `512 B`, `12.3 KiB`, `4.56 MiB`, `1.23 GiB`.
pub(crate) fn fmt_bytes(n: u64) -> String {
    const K: f64 = 1024.0;
    let x = n as f64;
    if x < K {
        format!("{n} B")
    } else if x < K * K {
        format!("{:.1} KiB", x / K)
    } else if x < K * K * K {
        format!("{:.2} MiB", x / (K * K))
    } else {
        format!("{:.2} GiB", x / (K * K * K))
    }
}

/// The cell of `column` in the `<outside marked calls>` row: the
/// allocation columns only (`None`: shown as `-`).
pub(crate) fn outside_cell(column: &Column, a: &AllocStats) -> Option<Cell<'static>> {
    match column.csv? {
        "allocs" => Some(Cell::Count(a.allocs)),
        "alloc_bytes" => Some(Cell::Bytes(a.bytes)),
        "frees" => Some(Cell::Count(a.frees)),
        "freed_bytes" => Some(Cell::Bytes(a.freed_bytes)),
        "self_allocs" => Some(Cell::Count(a.allocs)),
        "self_alloc_bytes" => Some(Cell::Bytes(a.bytes)),
        _ => None,
    }
}

pub(crate) fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_header_is_the_csv_columns_in_order() {
        let names: Vec<&str> = COLUMNS.iter().filter_map(|c| c.csv).collect();
        assert_eq!(names.join(","), CSV_HEADER);
        assert!(CSV_HEADER.starts_with(
            "name,calls,total_ns,mean_ns,min_ns,max_ns,reversed,oversized,self_ns,unwound,wall_ns,cancelled"
        ));
        assert!(CSV_HEADER.ends_with(
            ",p_self,resolved,allocs,alloc_bytes,frees,freed_bytes,self_allocs,self_alloc_bytes,faults,p50_ns,p90_ns,p99_ns,timing,timed_calls,pc_samples"
        ));
    }

    #[test]
    fn shown_columns_are_ordered_and_async_ones_only_when_needed() {
        let mut r = Report::empty();
        let labels = |r: &Report| shown(r).iter().map(|c| c.label).collect::<Vec<_>>();
        assert_eq!(
            labels(&r),
            [
                "name", "calls", "total", "%run", "self", "%self", "p_self", "mean", "min", "p50",
                "p90", "p99", "max", "rejected"
            ]
        );
        r.sites.push(crate::export::test_site(
            "f",
            crate::SiteKind::AsyncFunction,
        ));
        assert_eq!(labels(&r).last(), Some(&"cancelled"));
        r.run.alloc_installed = true;
        assert_eq!(labels(&r)[labels(&r).len() - 2..], ["allocs", "bytes"]);
    }

    #[test]
    fn cells_format_for_people_and_machines() {
        assert_eq!(Cell::Share(1, 4).human(), "25.0%");
        assert_eq!(Cell::Share(1, 0).machine(), "0.0000");
        assert_eq!(Cell::Share(3, 4).machine(), "0.7500");
        assert_eq!(Cell::Mean(f64::NAN).machine(), "0.0");
        assert_eq!(Cell::Ns(1500).human(), "1.50 µs");
        assert_eq!(Cell::Share(3, 4).sort_key(), 0.75);
        assert_eq!(Cell::ApproxNs(15).human(), "~15 ns");
        assert_eq!(Cell::ApproxMean(15.2).machine(), "15.2");
        assert_eq!(Cell::Flag(false).machine(), "false");
        assert_eq!(Cell::Bytes(512).human(), "512 B");
        assert_eq!(Cell::Bytes(1536).human(), "1.5 KiB");
        assert_eq!(Cell::Bytes(3 << 20).human(), "3.00 MiB");
        assert_eq!(Cell::Bytes(1536).machine(), "1536");
    }
}
