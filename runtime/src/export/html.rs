//! HTML output (`.html`): one self-contained page (inline CSS and
//! JavaScript, nothing fetched) with a sortable flat table and a section
//! per call site listing its callers and callees; every name links to its
//! site's section, and bars show each share of time.
//!
//! # How the page is built
//!
//! All markup is written and escaped here. So that a page of 10,000 sites
//! opens without a freeze, the table rows and the sections are not parsed
//! into the page up front: they are stored, one per line, as inert text in
//! `<script type="text/html">` elements, and the page's script inserts the
//! rows it shows (the first 1,000 in the current order, or all on request)
//! and each section when it is first needed (the first 100, more on request,
//! and any section a link points to, before the browser follows the link).
//! The numbers the table sorts by are a JSON array. The script never builds
//! markup from a name: names exist only as escaped text written here and as
//! JSON strings compared for sorting and filtering.
//!
//! # Self-test
//!
//! Opening the page as `report.html#selftest` (or `report.html?selftest`)
//! checks it in the browser: every `#` link resolves (sections inserted on
//! demand included), there is one row and one section per site and each row
//! drills down to its own section, clicking headers sorts correctly, a
//! click on a name opens the right section, and the page holds no element
//! it did not write and ran no injected script. The verdict (`PASS: …` or
//! `FAIL: …`) goes into the element `#selftest`.

use super::columns::{self, Cell};
use crate::report::{fmt_ns, ClockSource, Report, SiteStats};
use std::collections::HashMap;
use std::fmt::Write as _;

mod sections;
use sections::{section, threads, tools};

/// Rows shown before "show all".
const ROW_LIMIT: usize = 1000;
/// Sections shown up front and per "show more".
const SECTION_BATCH: usize = 100;

/// Appends `s` escaped for HTML text and quoted attribute values: `&`,
/// `<`, `>`, `"`, `'`, and line breaks (so a stored row or section stays on
/// one line).
fn push_esc(out: &mut String, s: &str) {
    let mut last = 0;
    for (i, c) in s.char_indices() {
        let rep = match c {
            '&' => "&amp;",
            '<' => "&lt;",
            '>' => "&gt;",
            '"' => "&quot;",
            '\'' => "&#39;",
            '\n' => "&#10;",
            '\r' => "&#13;",
            _ => continue,
        };
        out.push_str(&s[last..i]);
        out.push_str(rep);
        last = i + 1;
    }
    out.push_str(&s[last..]);
}

/// `part` as a percentage of `whole`.
fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// A bar cell: a bar `part / whole` wide (at most full) and the percentage.
fn push_bar(out: &mut String, part: u64, whole: u64) {
    let p = pct(part, whole);
    let _ = write!(
        out,
        "<td class=\"p\" style=\"--w:{:.1}%\">{:.1}%</td>",
        p.clamp(0.0, 100.0),
        p
    );
}

/// A number for the sort data: finite, or 0.
fn num(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

/// Names to the index of the first site with that name, for links.
fn anchors(report: &Report) -> HashMap<&str, usize> {
    let mut m = HashMap::with_capacity(report.sites.len());
    for (i, s) in report.sites.iter().enumerate() {
        m.entry(s.name.as_str()).or_insert(i);
    }
    m
}

/// A name, as a link to its site's section when it has one.
fn push_name(out: &mut String, name: &str, links: &HashMap<&str, usize>) {
    match links.get(name) {
        Some(i) => {
            let _ = write!(out, "<a href=\"#s{i}\">");
            push_esc(out, name);
            out.push_str("</a>");
        }
        None => {
            out.push_str("<span class=\"x\">");
            push_esc(out, name);
            out.push_str("</span>");
        }
    }
}

/// The page for `report`.
///
/// Never fails: every value, whatever its characters, becomes escaped text.
///
/// # Examples
///
/// ```
/// let report = tickprof_runtime::report();
/// let page = tickprof_runtime::export::html::render(&report);
/// assert!(page.starts_with("<!DOCTYPE html>"));
/// ```
pub fn render(report: &Report) -> String {
    let links = anchors(report);
    let edges: usize = report
        .sites
        .iter()
        .map(|s| s.callers.len() + s.callees.len())
        .sum();
    let mut out = String::with_capacity(16384 + 1200 * report.sites.len() + 200 * edges);
    out.push_str(HEAD);
    header(&mut out, report);
    skeleton(&mut out, report);
    threads(&mut out, report, &links);
    tools(&mut out, report);
    data(&mut out, report);
    out.push_str("<script type=\"text/html\" id=\"tp-rows\">");
    for (i, s) in report.sites.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        row(&mut out, report, i, s);
    }
    out.push_str("</script>\n<script type=\"text/html\" id=\"tp-sections\">");
    for (i, s) in report.sites.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        section(&mut out, report, i, s, &links);
    }
    out.push_str("</script>\n");
    out.push_str(TAIL);
    out
}

fn header(out: &mut String, report: &Report) {
    let r = &report.run;
    out.push_str("<header><h1>tickprof report</h1>\n<p class=\"run\">");
    let _ = write!(
        out,
        "pid {} · {} site{} on {} thread{} · wall {}",
        r.pid,
        report.sites.len(),
        if report.sites.len() == 1 { "" } else { "s" },
        r.threads,
        if r.threads == 1 { "" } else { "s" },
        fmt_ns(r.wall_ns as f64)
    );
    out.push_str(" · clock ");
    push_esc(out, r.clock.label());
    if r.frequency_hz > 0.0 {
        let _ = write!(out, " at {} (", crate::report::fmt_hz(r.frequency_hz));
        push_esc(out, &r.frequency_source);
        out.push(')');
    }
    match (r.clock, r.invariant_tsc) {
        (ClockSource::Tsc, Some(true)) => out.push_str(" · invariant TSC"),
        (ClockSource::Tsc, Some(false)) => out.push_str(" · <strong>TSC not invariant</strong>"),
        _ => {}
    }
    if r.compensated {
        let _ = write!(
            out,
            " · times compensated for the instrumentation ({} per call{})",
            fmt_ns(num(r.overhead_call_ns)),
            super::text::per_kind(r)
        );
    } else if r.clock != ClockSource::Off {
        out.push_str(" · raw times (instrumentation cost included)");
    }
    if r.overhead_call_ns > 0.0 {
        let _ = write!(
            out,
            " · instrumentation ≈ {:.1}% of the run",
            100.0 * num(r.overhead_share)
        );
        if let Some(note) = r.unseen_cost_note() {
            out.push_str(" (");
            push_esc(out, note);
            out.push(')');
        }
    }
    if r.debug_build {
        out.push_str(" · <strong>unoptimised build</strong> (debug assertions on: figures are far above a release build's)");
    }
    out.push_str(
        " · <a href=\"#sites\">table</a> · <a href=\"#functions\">functions</a> · <a href=\"#threads\">threads</a></p>\n",
    );
    if r.alloc_installed {
        let o = &r.outside;
        out.push_str("<p class=\"hint\">");
        push_esc(
            out,
            &format!(
                "{}: {} allocations, {} ({} frees, {} freed)",
                columns::OUTSIDE,
                o.allocs,
                columns::fmt_bytes(o.bytes),
                o.frees,
                columns::fmt_bytes(o.freed_bytes)
            ),
        );
        out.push_str("</p>\n");
    }
    for (warns, note) in super::notes::notes(report) {
        // Warnings in red; notes on how figures were made, muted.
        let class = if warns { "note warn" } else { "note" };
        let _ = write!(out, "<p class=\"{class}\">");
        push_esc(out, &note);
        out.push_str("</p>\n");
    }
    out.push_str("</header>\n<p id=\"selftest\" hidden></p>\n");
}

/// The table (rows inserted by the script) and the functions area.
fn skeleton(out: &mut String, report: &Report) {
    out.push_str(
        "<h2 id=\"sites\">Sites</h2>\n<p class=\"hint\">Click a column header to sort, a name to see its callers and callees. \
         <label>Filter <input id=\"filter\" type=\"search\" placeholder=\"part of a name\"></label> \
         <span id=\"shown\"></span> <button type=\"button\" id=\"more-rows\" hidden>show more rows</button></p>\n\
         <noscript><p class=\"note warn\">The table and sections need JavaScript; the same data is in the JSON and CSV outputs.</p></noscript>\n\
         <table id=\"table\"><colgroup><col class=\"c-name\">",
    );
    let cols = columns::shown(report);
    let _ = write!(
        out,
        "<col span=\"{}\"></colgroup><thead><tr>",
        cols.len() - 1
    );
    for (key, c) in cols.iter().enumerate() {
        out.push_str("<th title=\"");
        push_esc(out, c.meaning);
        let _ = write!(out, "\"><button type=\"button\" data-k=\"{key}\">");
        push_esc(out, c.label);
        out.push_str("</button></th>");
    }
    out.push_str(
        "</tr></thead><tbody></tbody></table>\n\
         <h2 id=\"functions\">Functions</h2>\n<div id=\"sections\"></div>\n\
         <p><button type=\"button\" id=\"more-sections\" hidden>show more functions</button></p>\n",
    );
}

/// One table row, on one line: the name links to the site's section;
/// shares are drawn as bars.
fn row(out: &mut String, report: &Report, i: usize, s: &SiteStats) {
    let _ = write!(out, "<tr data-i=\"{i}\"><td><a href=\"#s{i}\">");
    push_esc(out, &s.name);
    out.push_str("</a></td>");
    for c in columns::shown(report).iter().skip(1) {
        match columns::table_cell(c, s, report) {
            Some(Cell::Share(part, whole)) => push_bar(out, part, whole),
            Some(cell) => {
                out.push_str("<td>");
                push_esc(out, &cell.human());
                out.push_str("</td>");
            }
            None => out.push_str("<td>-</td>"),
        }
    }
    out.push_str("</tr>");
}

/// What the script sorts and filters by, one array per site: the name,
/// then one number per shown column (nanoseconds, counts, fractions).
///
/// JSON inside a `<script>`: `<`, `>` and `&` are written as `\u003c`,
/// `\u003e`, `\u0026` (they only occur inside strings), so no name can
/// close the element.
fn data(out: &mut String, report: &Report) {
    let cols = columns::shown(report);
    let mut json = String::with_capacity(2 + 96 * report.sites.len());
    let mut w = super::json::Writer::compact(&mut json);
    w.array(&report.sites, |w, s| {
        w.begin_array();
        w.str(&s.name);
        for c in cols.iter().skip(1) {
            match columns::table_cell(c, s, report) {
                Some(Cell::Count(n) | Cell::Ns(n) | Cell::Bytes(n)) => w.u64(n),
                Some(cell) => w.f64(cell.sort_key()),
                None => w.u64(0),
            }
        }
        w.end_array();
    });
    let _ = writeln!(
        out,
        "<script type=\"application/json\" id=\"tp-data\">{}</script>",
        json.replace('<', "\\u003c")
            .replace('>', "\\u003e")
            .replace('&', "\\u0026")
    );
    let _ = writeln!(
        out,
        "<script type=\"application/json\" id=\"tp-config\">{{\"rowLimit\":{ROW_LIMIT},\"sectionBatch\":{SECTION_BATCH}}}</script>"
    );
}

const HEAD: &str = concat!(
    r##"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="tickprof">
<title>tickprof report</title>
<style>
"##,
    include_str!("html/report.css"),
    r##"</style>
</head>
<body>
"##
);

const TAIL: &str = concat!(
    r##"<script>
"##,
    include_str!("html/report.js"),
    r##"</script>
</body>
</html>
"##
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_quotes_and_line_breaks() {
        let mut s = String::new();
        push_esc(&mut s, "<script>alert('x & \"y\"')</script>\r\né");
        assert_eq!(
            s,
            "&lt;script&gt;alert(&#39;x &amp; &quot;y&quot;&#39;)&lt;/script&gt;&#13;&#10;é"
        );
    }

    #[test]
    fn empty_report_is_a_complete_page() {
        let page = render(&Report::empty());
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.trim_end().ends_with("</html>"));
        assert!(page.contains("<script type=\"application/json\" id=\"tp-data\">[]</script>"));
        assert!(page.contains("id=\"tp-rows\"></script>"));
    }

    #[test]
    fn warnings_are_red_and_information_is_not_and_one_call_is_singular() {
        let mut r = Report::empty();
        let mut s = crate::export::test_site("one", crate::SiteKind::Function);
        s.calls = 1;
        s.reversed = 1;
        r.sites.push(s);
        r.run.counted_sites = 1;
        r.run.counted_calls = 1;
        let page = render(&r);
        assert!(
            page.contains("<p class=\"note warn\">rejected 1 call (1 reversed"),
            "{page}"
        );
        assert!(page.contains("<p class=\"note\">1 site counted (TICKPROF_TIME): 1 call counted"));
        assert!(page.contains(".note{margin:2px 0;color:var(--mute)}.note.warn{color:#b3261e}"));
        assert!(page.contains("<p class=\"stats\">1 call · total"), "{page}");
        assert!(!page.contains("1 calls"));
    }

    /// The header's share of the instrumentation says what it leaves out
    /// where it is large (as the text header's line does).
    #[test]
    fn a_large_instrumentation_share_says_what_it_leaves_out() {
        let mut r = Report::empty();
        r.run.compensated = true;
        (r.run.sample_hz, r.run.sampled_ns) = (1000, 100_000_000);
        (r.run.instrumentation_ns, r.run.overhead_share) = (62_000_000, 0.62);
        r.run.overhead_call_ns = 22.0;
        let page = render(&r);
        assert!(
            page.contains("instrumentation ≈ 62.0% of the run (the marks also slow the program&#39;s own code"),
            "{page}"
        );
        r.run.overhead_share = 0.045;
        assert!(!render(&r).contains("the marks also slow"));
    }

    #[test]
    fn bars_are_clamped_and_never_nan() {
        let mut s = String::new();
        push_bar(&mut s, 300, 100);
        assert!(s.contains("--w:100.0%") && s.contains("300.0%"), "{s}");
        s.clear();
        push_bar(&mut s, 5, 0);
        assert!(s.contains("--w:0.0%"), "{s}");
    }
}
