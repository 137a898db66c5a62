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

use crate::report::{fmt_ns, ClockSource, Report, SiteStats};
use std::collections::HashMap;
use std::fmt::Write as _;

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
    skeleton(&mut out);
    threads(&mut out, report, &links);
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
        "{} site{} on {} thread{} · wall {}",
        report.sites.len(),
        if report.sites.len() == 1 { "" } else { "s" },
        r.threads,
        if r.threads == 1 { "" } else { "s" },
        fmt_ns(r.wall_ns as f64)
    );
    out.push_str(" · clock ");
    push_esc(out, r.clock.label());
    if r.frequency_hz > 0.0 {
        let _ = write!(out, " at {:.3} GHz (", r.frequency_hz / 1e9);
        push_esc(out, &r.frequency_source);
        out.push(')');
    }
    match r.invariant_tsc {
        Some(true) => out.push_str(" · invariant TSC"),
        Some(false) => out.push_str(" · <strong>TSC not invariant</strong>"),
        None => {}
    }
    if r.compensated {
        let _ = write!(
            out,
            " · times compensated for the instrumentation ({} per call)",
            fmt_ns(num(r.overhead_call_ns))
        );
    } else if r.clock != ClockSource::Off {
        out.push_str(" · raw times (instrumentation cost included)");
    }
    out.push_str(
        " · <a href=\"#sites\">table</a> · <a href=\"#functions\">functions</a> · <a href=\"#threads\">threads</a></p>\n",
    );
    let reversed: u64 = report.sites.iter().map(|s| s.reversed).sum();
    let oversized: u64 = report.sites.iter().map(|s| s.oversized).sum();
    let unwound: u64 = report.sites.iter().map(|s| s.unwound).sum();
    let notes = [
        (
            reversed + oversized,
            "calls rejected (reversed or longer than the maximum): counted, times not added",
        ),
        (unwound, "calls ended by a panic; their time is included"),
        (r.out_of_order, "guards dropped out of order"),
        (r.folded_calls, "calls folded into overflow tree nodes"),
        (r.lost, "calls ended after their thread's state was gone"),
        (r.reentrant, "calls from inside tickprof's bookkeeping"),
    ];
    for (n, what) in notes {
        if n > 0 {
            let _ = writeln!(out, "<p class=\"note\">{n} {what}</p>");
        }
    }
    if !r.complete {
        out.push_str("<p class=\"note\">a finishing thread held the profiler lock; its calls may be missing</p>\n");
    }
    out.push_str("</header>\n<p id=\"selftest\" hidden></p>\n");
}

/// Column headers: label, sort key (`name` or an index into a data row),
/// tooltip.
const COLUMNS: &[(&str, &str, &str)] = &[
    ("name", "0", "site name; click for callers and callees"),
    ("calls", "1", "completed calls"),
    ("total", "2", "total time, recursion counted once"),
    (
        "% run",
        "2",
        "total time as a share of the run's wall time (threads add up, so it can pass 100%)",
    ),
    ("self", "3", "time not spent in marked callees"),
    (
        "% self",
        "3",
        "self time as a share of the run's wall time (threads add up)",
    ),
    ("mean", "4", "total time per accepted call"),
    ("min", "5", "shortest accepted call"),
    ("max", "6", "longest accepted call"),
    ("rejected", "7", "calls whose time was rejected"),
];

/// The table (rows inserted by the script) and the functions area.
fn skeleton(out: &mut String) {
    out.push_str(
        "<h2 id=\"sites\">Sites</h2>\n<p class=\"hint\">Click a column header to sort, a name to see its callers and callees. \
         <label>Filter <input id=\"filter\" type=\"search\" placeholder=\"part of a name\"></label> \
         <span id=\"shown\"></span> <button type=\"button\" id=\"more-rows\" hidden>show more rows</button></p>\n\
         <noscript><p class=\"note\">The table and sections need JavaScript; the same data is in the JSON and CSV outputs.</p></noscript>\n\
         <table id=\"table\"><colgroup><col class=\"c-name\"><col span=\"9\"></colgroup><thead><tr>",
    );
    for (label, key, title) in COLUMNS {
        let _ = write!(
            out,
            "<th title=\"{title}\"><button type=\"button\" data-k=\"{key}\">{label}</button></th>"
        );
    }
    out.push_str(
        "</tr></thead><tbody></tbody></table>\n\
         <h2 id=\"functions\">Functions</h2>\n<div id=\"sections\"></div>\n\
         <p><button type=\"button\" id=\"more-sections\" hidden>show more functions</button></p>\n",
    );
}

/// One table row, on one line.
fn row(out: &mut String, report: &Report, i: usize, s: &SiteStats) {
    let wall = report.run.wall_ns;
    let _ = write!(out, "<tr data-i=\"{i}\"><td><a href=\"#s{i}\">");
    push_esc(out, &s.name);
    let _ = write!(
        out,
        "</a></td><td>{}</td><td>{}</td>",
        s.calls,
        fmt_ns(s.total_ns as f64)
    );
    push_bar(out, s.total_ns, wall);
    let _ = write!(out, "<td>{}</td>", fmt_ns(s.self_ns as f64));
    push_bar(out, s.self_ns, wall);
    let _ = write!(
        out,
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        fmt_ns(num(s.mean_ns)),
        fmt_ns(s.min_ns as f64),
        fmt_ns(s.max_ns as f64),
        s.rejected()
    );
}

/// One site's section, on one line.
fn section(
    out: &mut String,
    report: &Report,
    i: usize,
    s: &SiteStats,
    links: &HashMap<&str, usize>,
) {
    let wall = report.run.wall_ns;
    let _ = write!(out, "<section id=\"s{i}\" class=\"fn\"><h3>");
    push_esc(out, &s.name);
    out.push_str("</h3><p class=\"where\">");
    if s.function != s.name && !s.function.is_empty() {
        out.push_str("in <code>");
        push_esc(out, &s.function);
        out.push_str("</code> · ");
    }
    push_esc(out, &s.file);
    let _ = write!(out, ":{} · {:?}</p>", s.line, s.kind);
    let accepted = s.calls.saturating_sub(s.rejected());
    let per = |ns: u64| {
        if accepted == 0 {
            0.0
        } else {
            ns as f64 / accepted as f64
        }
    };
    let _ = write!(
        out,
        "<p class=\"stats\">{} calls · total <b>{}</b> ({:.1}% of run, {} per call) · self <b>{}</b> ({:.1}% of run, {} per call) · min {} · max {}",
        s.calls,
        fmt_ns(s.total_ns as f64),
        pct(s.total_ns, wall),
        fmt_ns(per(s.total_ns)),
        fmt_ns(s.self_ns as f64),
        pct(s.self_ns, wall),
        fmt_ns(per(s.self_ns)),
        fmt_ns(s.min_ns as f64),
        fmt_ns(s.max_ns as f64),
    );
    if s.rejected() > 0 {
        let _ = write!(
            out,
            " · rejected {} ({} reversed, {} oversized)",
            s.rejected(),
            s.reversed,
            s.oversized
        );
    }
    if s.unwound > 0 {
        let _ = write!(out, " · unwound {}", s.unwound);
    }
    if s.wall_ns > 0 {
        let _ = write!(
            out,
            " · wall {} (first poll to completion)",
            fmt_ns(s.wall_ns as f64)
        );
    }
    if s.cancelled > 0 {
        let _ = write!(out, " · cancelled {}", s.cancelled);
    }
    out.push_str("</p><table class=\"edges\"><thead><tr><th>called by</th><th>calls</th><th>time</th><th>share of this site's total</th></tr></thead><tbody>");
    if s.callers.is_empty() {
        out.push_str("<tr><td class=\"x\">no recorded caller</td><td></td><td></td><td></td></tr>");
    }
    for e in &s.callers {
        push_edge(out, e, s.total_ns, links);
    }
    out.push_str("</tbody></table><table class=\"edges\"><thead><tr><th>calls into</th><th>calls</th><th>time</th><th>share of this site's total</th></tr></thead><tbody>");
    let _ = write!(
        out,
        "<tr><td class=\"x\">(self)</td><td></td><td>{}</td>",
        fmt_ns(s.self_ns as f64)
    );
    push_bar(out, s.self_ns, s.total_ns);
    out.push_str("</tr>");
    for e in &s.callees {
        push_edge(out, e, s.total_ns, links);
    }
    out.push_str("</tbody></table><p class=\"up\"><a href=\"#sites\">↑ table</a></p></section>");
}

/// One caller or callee row: linked name, calls, time, share of `total`.
fn push_edge(out: &mut String, e: &crate::report::Edge, total: u64, links: &HashMap<&str, usize>) {
    out.push_str("<tr><td>");
    push_name(out, &e.name, links);
    let _ = write!(
        out,
        "</td><td>{}</td><td>{}</td>",
        e.calls,
        fmt_ns(e.total_ns as f64)
    );
    push_bar(out, e.total_ns, total);
    out.push_str("</tr>");
}

fn threads(out: &mut String, report: &Report, links: &HashMap<&str, usize>) {
    out.push_str("<h2 id=\"threads\">Threads</h2>\n<table class=\"edges\"><thead><tr><th>thread</th><th>sites</th><th>calls</th><th>self time</th><th>most self time in</th></tr></thead><tbody>\n");
    for t in &report.threads {
        out.push_str("<tr><td>");
        push_esc(out, &t.name);
        let _ = write!(out, " <span class=\"x\">#{}", t.id);
        if t.finished {
            out.push_str(", finished");
        }
        let calls: u64 = t.sites.iter().map(|s| s.calls).sum();
        let self_ns: u64 = t.sites.iter().map(|s| s.self_ns).sum();
        let _ = write!(
            out,
            "</span></td><td>{}</td><td>{}</td><td>{}</td><td>",
            t.sites.len(),
            calls,
            fmt_ns(self_ns as f64)
        );
        if let Some(top) = t.sites.iter().max_by_key(|s| s.self_ns) {
            push_name(out, &top.name, links);
        }
        out.push_str("</td></tr>\n");
    }
    out.push_str("</tbody></table>\n");
}

/// What the script sorts and filters by, one array per site:
/// name, calls, total, self, mean, min, max, rejected (nanoseconds).
///
/// JSON inside a `<script>`: `<`, `>` and `&` are written as `\u003c`,
/// `\u003e`, `\u0026` (they only occur inside strings), so no name can
/// close the element.
fn data(out: &mut String, report: &Report) {
    let mut json = String::with_capacity(2 + 96 * report.sites.len());
    let mut w = super::json::Writer::compact(&mut json);
    w.array(&report.sites, |w, s| {
        w.begin_array();
        w.str(&s.name);
        w.u64(s.calls);
        w.u64(s.total_ns);
        w.u64(s.self_ns);
        w.f64(num(s.mean_ns));
        w.u64(s.min_ns);
        w.u64(s.max_ns);
        w.u64(s.rejected());
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

const HEAD: &str = r##"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="tickprof">
<title>tickprof report</title>
<style>
:root{--fg:#1d2330;--mute:#5f6b7a;--bg:#fff;--line:#e3e7ee;--head:#f4f6fa;--bar:#e8743b;--bar2:#f9d7c4;--link:#1f5fbf;--hi:#fff6d6}
@media (prefers-color-scheme:dark){:root{--fg:#dde3ec;--mute:#97a2b3;--bg:#15181e;--line:#2c323c;--head:#1e232b;--bar:#f08a4b;--bar2:#6a3b22;--link:#7fb0ff;--hi:#3a3320}}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1400px;padding:16px 24px 48px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
h3{font:600 15px/1.3 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;margin:0 0 4px;overflow-wrap:anywhere}
.run,.where,.hint,.x{color:var(--mute)}.note{margin:2px 0;color:#b3261e}.stats{margin:4px 0}
a{color:var(--link);text-decoration:none}a:hover{text-decoration:underline}
table{border-collapse:collapse;width:100%;table-layout:fixed;font-variant-numeric:tabular-nums}
th,td{padding:3px 8px;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left;white-space:normal;overflow-wrap:anywhere;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
thead th{position:sticky;top:0;background:var(--head);z-index:1}
th button{all:unset;cursor:pointer;font-weight:600;font-family:system-ui,sans-serif;font-size:13px}
th button:focus-visible{outline:2px solid var(--link)}
th[aria-sort=descending] button::after{content:" \25BC"}th[aria-sort=ascending] button::after{content:" \25B2"}
col.c-name{width:34%}
td.p{background:linear-gradient(90deg,var(--bar2) var(--w),transparent 0) no-repeat 0 3px/100% calc(100% - 6px)}
tbody tr:hover{background:var(--head)}
section.fn{content-visibility:auto;contain-intrinsic-size:auto 240px;border:1px solid var(--line);border-radius:6px;padding:10px 14px;margin:12px 0}
section.fn:target,section.fn.hl{background:var(--hi);outline:2px solid var(--bar)}
.edges{margin:6px 0}.edges col,.edges th:first-child{width:50%}.up{margin:4px 0 0;font-size:12px}
input,button{font:inherit}input{padding:1px 6px}
#selftest{font-weight:600;padding:6px 10px;border-radius:4px;background:var(--head)}
</style>
</head>
<body>
"##;

const TAIL: &str = r##"<script>
(function () {
  "use strict";
  var json = function (id) { return JSON.parse(document.getElementById(id).textContent); };
  var data = json("tp-data"), config = json("tp-config"), n = data.length;
  var lines = function (id) { return n ? document.getElementById(id).textContent.split("\n") : []; };
  var rowHtml = lines("tp-rows"), sectionHtml = lines("tp-sections");
  var table = document.getElementById("table"), tbody = table.tBodies[0];
  var buttons = Array.prototype.slice.call(table.tHead.querySelectorAll("button"));
  var sectionsBox = document.getElementById("sections");
  var moreSections = document.getElementById("more-sections");
  var moreRows = document.getElementById("more-rows"), shown = document.getElementById("shown");
  var order = data.map(function (_, i) { return i; });
  var sortState = { button: null, desc: false }, filter = "", limit = config.rowLimit;
  var made = [], madeCount = 0, maxMade = -1, nextBatch = 0;

  function byName(a, b) { return data[a][0] < data[b][0] ? -1 : data[a][0] > data[b][0] ? 1 : a - b; }

  // The table: the first `limit` rows of the current order and filter
  // (a table of 10,000 rows takes seconds to lay out; "show more" adds rows).
  function renderRows() {
    var pick = filter ? order.filter(function (i) { return data[i][0].toLowerCase().indexOf(filter) >= 0; }) : order;
    var count = Math.min(pick.length, limit);
    var html = new Array(count);
    for (var j = 0; j < count; j++) { html[j] = rowHtml[pick[j]]; }
    tbody.innerHTML = html.join("");
    shown.textContent = count < pick.length ? "showing " + count + " of " + pick.length + (filter ? " matching" : "") + " rows" : "";
    moreRows.hidden = count >= pick.length;
  }

  function sortBy(button, desc) {
    var k = +button.getAttribute("data-k");
    order.sort(k === 0
      ? function (a, b) { return desc ? byName(b, a) : byName(a, b); }
      : function (a, b) {
          var x = data[a][k], y = data[b][k];
          return x !== y ? (desc ? y - x : x - y) : byName(a, b);
        });
    buttons.forEach(function (b) { b.parentNode.removeAttribute("aria-sort"); });
    button.parentNode.setAttribute("aria-sort", desc ? "descending" : "ascending");
    sortState = { button: button, desc: desc };
    renderRows();
  }

  // Sections: inserted in site order when first needed.
  function ensure(i) {
    if (!(i >= 0 && i < n)) { return null; }
    if (!made[i]) {
      var tmp = document.createElement("div");
      tmp.innerHTML = sectionHtml[i];
      var el = tmp.firstChild, next = null;
      for (var j = i + 1; j <= maxMade && !next; j++) { if (made[j]) { next = made[j]; } }
      sectionsBox.insertBefore(el, next);
      made[i] = el;
      madeCount++;
      maxMade = Math.max(maxMade, i);
    }
    return made[i];
  }

  function moreBatch() {
    var end = Math.min(n, nextBatch + config.sectionBatch);
    for (; nextBatch < end; nextBatch++) { ensure(nextBatch); }
    moreSections.hidden = nextBatch >= n;
    moreSections.textContent = "show more functions (" + nextBatch + " of " + n + " listed)";
  }

  function indexOfHash(h) { var m = /^#s(\d+)$/.exec(h); return m ? +m[1] : -1; }

  function reveal(hash) {
    var el = ensure(indexOfHash(hash));
    if (el) {
      Array.prototype.forEach.call(document.querySelectorAll("section.hl"), function (s) { s.classList.remove("hl"); });
      el.classList.add("hl");
      el.scrollIntoView();
    }
    return el;
  }

  // Make a section exist before the browser follows a link to it.
  document.addEventListener("click", function (e) {
    var a = e.target.closest && e.target.closest("a[href^='#s']");
    if (a) { ensure(indexOfHash(a.getAttribute("href"))); }
  }, true);
  window.addEventListener("hashchange", function () { reveal(location.hash); });
  buttons.forEach(function (b) {
    b.addEventListener("click", function () {
      var first = b.getAttribute("data-k") === "0";
      sortBy(b, sortState.button === b ? !sortState.desc : !first);
    });
  });
  document.getElementById("filter").addEventListener("input", function (e) {
    filter = e.target.value.toLowerCase();
    renderRows();
  });
  moreRows.addEventListener("click", function () { limit += config.rowLimit; renderRows(); });
  moreSections.addEventListener("click", moreBatch);

  renderRows();
  moreBatch();
  if (indexOfHash(location.hash) >= 0) { reveal(location.hash); }

  function selftest() {
    var t0 = performance.now(), fails = [], out = document.getElementById("selftest");
    function fail(m) { if (fails.length < 6) { fails.push(m); } }
    function rendered() { return Array.prototype.map.call(tbody.rows, function (r) { return +r.getAttribute("data-i"); }); }
    // The rows shown are the first ones of the whole data sorted by `cmp`.
    function sortedBy(what, cmp) {
      var shownRows = rendered(), all = order.slice().sort(cmp);
      if (shownRows.length !== Math.min(n, limit)) { fail(what + ": " + shownRows.length + " rows shown"); }
      for (var i = 0; i < shownRows.length; i++) {
        if (cmp(shownRows[i], all[i]) !== 0) { fail(what + ": row " + i + " out of order"); return false; }
      }
      return true;
    }
    function click(label) {
      var b = buttons.filter(function (x) { return x.textContent === label; })[0];
      if (!b) { fail("no column " + label); return 0; }
      b.click();
      return +b.getAttribute("data-k");
    }
    try {
      if (rowHtml.length !== n || sectionHtml.length !== n) { fail(rowHtml.length + " rows and " + sectionHtml.length + " sections for " + n + " sites"); }
      // Every site's row drills down to its section, every section is its
      // site's, and every link on the page (rows, sections) resolves.
      for (var r = 0; r < n; r++) {
        if (rowHtml[r].indexOf("<tr data-i=\x22" + r + "\x22><td><a href=\x22#s" + r + "\x22>") !== 0) { fail("row " + r + " does not link to its section"); }
      }
      var targets = {}, nlinks = 0;
      var note = function (list) {
        nlinks += list.length;
        for (var j = 0; j < list.length; j++) { targets[list[j].getAttribute("href")] = true; }
      };
      note(document.querySelectorAll("a[href^='#']"));
      for (var s = 0; s < n; s++) {
        var sec = ensure(s), h = sec && sec.querySelector("h3");
        if (!sec || sec.id !== "s" + s || !h || h.textContent !== data[s][0]) { fail("section " + s + " missing or not its site's"); }
        if (sec) { note(sec.querySelectorAll("a[href^='#']")); }
      }
      Object.keys(targets).forEach(function (t) {
        if (!document.getElementById(t.slice(1))) { fail("link to missing " + t); }
      });
      Array.prototype.forEach.call(tbody.rows, function (row) {
        var i = +row.getAttribute("data-i"), a = row.querySelector("a");
        if (!a || a.textContent !== data[i][0]) { fail("row " + i + " shows another name"); }
      });
      // Sorting: each click shows the right first rows.
      var k = click("calls");
      sortedBy("calls descending", function (a, b) { return data[b][k] - data[a][k] || byName(a, b); });
      var desc = rendered().join(",");
      click("calls");
      sortedBy("calls ascending", function (a, b) { return data[a][k] - data[b][k] || byName(a, b); });
      var distinct = data.some(function (d) { return d[k] !== data[0][k]; });
      if (distinct && rendered().join(",") === desc) { fail("second click did not reverse the order"); }
      k = click("self");
      sortedBy("self descending", function (a, b) { return data[b][k] - data[a][k] || byName(a, b); });
      click("name");
      sortedBy("name", byName);
      if (buttons[0].parentNode.getAttribute("aria-sort") !== "ascending") { fail("name header not marked ascending"); }
      // A click on the last shown row's name goes to its section.
      if (n > 0) {
        var last = tbody.rows[tbody.rows.length - 1];
        last.querySelector("a").click();
        var want = "s" + last.getAttribute("data-i");
        if (location.hash !== "#" + want || !document.getElementById(want)) { fail("clicking a name did not open its section"); }
      }
      // Nothing but the page's own elements, and no injected script ran.
      var allowed = /^(A|B|BUTTON|COL|COLGROUP|CODE|DIV|H1|H2|H3|HEADER|INPUT|LABEL|NOSCRIPT|P|SCRIPT|SECTION|SPAN|STRONG|TABLE|TBODY|TD|TH|THEAD|TR)$/;
      var all = document.body.getElementsByTagName("*");
      for (var e = 0; e < all.length; e++) {
        if (!allowed.test(all[e].tagName)) { fail("unexpected <" + all[e].tagName.toLowerCase() + "> element"); break; }
      }
      if (document.scripts.length !== 5) { fail(document.scripts.length + " script elements, expected 5"); }
      if (window.tickprofInjected !== undefined) { fail("injected script ran"); }
      var ms = performance.now() - t0;
      out.textContent = fails.length
        ? "FAIL: " + fails.join("; ")
        : "PASS: " + n + " sites, " + tbody.rows.length + " rows shown, " + madeCount + " sections, " + nlinks + " links to " +
          Object.keys(targets).length + " anchors resolved, sorting by calls, self and name correct; page ready at " +
          t0.toFixed(0) + " ms, self-test " + ms.toFixed(0) + " ms";
    } catch (err) {
      out.textContent = "FAIL: exception " + err;
    }
    out.hidden = false;
  }

  if (/selftest/.test(location.hash + location.search)) { selftest(); }
})();
</script>
</body>
</html>
"##;

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
    fn bars_are_clamped_and_never_nan() {
        let mut s = String::new();
        push_bar(&mut s, 300, 100);
        assert!(s.contains("--w:100.0%") && s.contains("300.0%"), "{s}");
        s.clear();
        push_bar(&mut s, 5, 0);
        assert!(s.contains("--w:0.0%"), "{s}");
    }
}
