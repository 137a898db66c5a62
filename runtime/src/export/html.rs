//! HTML output (`.html`): one self-contained page (inline CSS and
//! JavaScript, nothing fetched) with a sortable flat table and a section
//! per call site listing its callers and callees; every name links to its
//! site's section.
//!
//! The page is plain HTML written here; the script only sorts and filters
//! the table and runs a self-test. Every name is HTML-escaped, and the
//! numbers the script sorts by are written as a JSON array of numbers, so no
//! name reaches a script or an attribute unescaped. Sections use
//! `content-visibility: auto`, so a page with 10,000 sites only lays out
//! what is on screen.
//!
//! Opening the page as `report.html#selftest` (or `report.html?selftest`)
//! checks it in the browser: every `#` link resolves, there is one section
//! per row and each row drills down to its own section, clicking headers
//! sorts correctly, and the page holds no element it did not write. The
//! verdict (`PASS: …` or `FAIL: …`) goes into the element `#selftest`.

use crate::report::{fmt_ns, Report, SiteStats};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Appends `s` with `&`, `<`, `>`, `"` and `'` escaped, safe in text and in
/// quoted attribute values.
fn push_esc(out: &mut String, s: &str) {
    let mut last = 0;
    for (i, c) in s.char_indices() {
        let rep = match c {
            '&' => "&amp;",
            '<' => "&lt;",
            '>' => "&gt;",
            '"' => "&quot;",
            '\'' => "&#39;",
            _ => continue,
        };
        out.push_str(&s[last..i]);
        out.push_str(rep);
        last = i + 1;
    }
    out.push_str(&s[last..]);
}

/// `part` as a percentage of `whole`, for text.
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
        "<td class=p><b style=\"width:{:.1}%\"></b>{:.1}%</td>",
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
            out.push_str("<span class=x>");
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
    let mut out = String::with_capacity(8192 + 900 * report.sites.len() + 200 * edges);
    out.push_str(HEAD);
    header(&mut out, report);
    table(&mut out, report);
    out.push_str("<h2 id=functions>Functions</h2>\n");
    for (i, s) in report.sites.iter().enumerate() {
        section(&mut out, report, i, s, &links);
    }
    threads(&mut out, report, &links);
    data(&mut out, report);
    out.push_str(TAIL);
    out
}

fn header(out: &mut String, report: &Report) {
    let r = &report.run;
    out.push_str("<header><h1>tickprof report</h1>\n<p class=run>");
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
    out.push_str("</p>\n");
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
            let _ = writeln!(out, "<p class=note>{n} {what}</p>");
        }
    }
    if !r.complete {
        out.push_str("<p class=note>a finishing thread held the profiler lock; its calls may be missing</p>\n");
    }
    out.push_str("</header>\n<p id=selftest hidden></p>\n");
}

/// Column headers: label, sort key (`name` or an index into a data row).
const COLUMNS: &[(&str, &str, &str)] = &[
    ("name", "name", "site name; click for callers and callees"),
    ("calls", "0", "completed calls"),
    ("total", "1", "total time, recursion counted once"),
    ("% run", "1", "total time as a share of the run's wall time"),
    ("self", "2", "time not spent in marked callees"),
    ("% self", "2", "self time as a share of the run's wall time"),
    ("mean", "3", "total time per accepted call"),
    ("min", "4", "shortest accepted call"),
    ("max", "5", "longest accepted call"),
    ("rejected", "6", "calls whose time was rejected"),
];

fn table(out: &mut String, report: &Report) {
    let wall = report.run.wall_ns;
    out.push_str(
        "<h2>Sites</h2>\n<p class=hint>Click a column header to sort, a name to see its callers and callees. \
         <label>Filter <input id=filter type=search placeholder=\"part of a name\"></label></p>\n\
         <table id=sites><thead><tr>",
    );
    for (label, key, title) in COLUMNS {
        let _ = write!(
            out,
            "<th title=\"{title}\"><button type=button data-k=\"{key}\">{label}</button></th>"
        );
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for (i, s) in report.sites.iter().enumerate() {
        let _ = write!(out, "<tr><td><a href=\"#s{i}\">");
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
        let _ = writeln!(
            out,
            "<td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            fmt_ns(num(s.mean_ns)),
            fmt_ns(s.min_ns as f64),
            fmt_ns(s.max_ns as f64),
            s.rejected()
        );
    }
    out.push_str("</tbody></table>\n");
}

fn section(
    out: &mut String,
    report: &Report,
    i: usize,
    s: &SiteStats,
    links: &HashMap<&str, usize>,
) {
    let wall = report.run.wall_ns;
    let _ = write!(out, "<section id=s{i} class=fn><h3>");
    push_esc(out, &s.name);
    out.push_str("</h3>\n<p class=where>");
    if s.function != s.name && !s.function.is_empty() {
        out.push_str("in <code>");
        push_esc(out, &s.function);
        out.push_str("</code> · ");
    }
    push_esc(out, &s.file);
    let _ = write!(out, ":{} · {:?}</p>\n", s.line, s.kind);
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
        "<p class=stats>{} calls · total <b>{}</b> ({:.1}% of run, {} per call) · self <b>{}</b> ({:.1}% of run, {} per call) · min {} · max {}",
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
    out.push_str("</p>\n");
    out.push_str("<table class=edges><thead><tr><th>called by</th><th>calls</th><th>time</th><th>share of this site's total</th></tr></thead><tbody>\n");
    if s.callers.is_empty() {
        out.push_str("<tr><td colspan=4 class=x>no recorded caller</td></tr>\n");
    }
    for e in &s.callers {
        out.push_str("<tr><td>");
        push_name(out, &e.name, links);
        let _ = write!(
            out,
            "</td><td>{}</td><td>{}</td>",
            e.calls,
            fmt_ns(e.total_ns as f64)
        );
        push_bar(out, e.total_ns, s.total_ns);
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n<table class=edges><thead><tr><th>calls</th><th>calls</th><th>time</th><th>share of this site's total</th></tr></thead><tbody>\n");
    let _ = write!(
        out,
        "<tr><td class=x>(self)</td><td></td><td>{}</td>",
        fmt_ns(s.self_ns as f64)
    );
    push_bar(out, s.self_ns, s.total_ns);
    out.push_str("</tr>\n");
    for e in &s.callees {
        out.push_str("<tr><td>");
        push_name(out, &e.name, links);
        let _ = write!(
            out,
            "</td><td>{}</td><td>{}</td>",
            e.calls,
            fmt_ns(e.total_ns as f64)
        );
        push_bar(out, e.total_ns, s.total_ns);
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n<p class=up><a href=\"#sites\">↑ table</a></p></section>\n");
}

fn threads(out: &mut String, report: &Report, links: &HashMap<&str, usize>) {
    if report.threads.is_empty() {
        return;
    }
    out.push_str("<h2 id=threads>Threads</h2>\n<table class=edges><thead><tr><th>thread</th><th>sites</th><th>calls</th><th>self time</th><th>most self time in</th></tr></thead><tbody>\n");
    for t in &report.threads {
        out.push_str("<tr><td>");
        push_esc(out, &t.name);
        let _ = write!(out, " <span class=x>#{}", t.id);
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

/// The numbers the script sorts by, one array per table row:
/// calls, total, self, mean, min, max, rejected (nanoseconds).
fn data(out: &mut String, report: &Report) {
    out.push_str("<script type=\"application/json\" id=tp-data>[");
    for (i, s) in report.sites.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(
            out,
            "[{},{},{},{:.1},{},{},{}]",
            s.calls,
            s.total_ns,
            s.self_ns,
            num(s.mean_ns),
            s.min_ns,
            s.max_ns,
            s.rejected()
        );
    }
    out.push_str("]</script>\n");
}

const HEAD: &str = r##"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="tickprof">
<title>tickprof report</title>
<style>
:root{--fg:#1d2330;--mute:#5f6b7a;--bg:#fff;--line:#e3e7ee;--head:#f4f6fa;--bar:#e8743b;--bar2:#f6c9b1;--link:#1f5fbf;--hi:#fff6d6}
@media (prefers-color-scheme:dark){:root{--fg:#dde3ec;--mute:#97a2b3;--bg:#15181e;--line:#2c323c;--head:#1e232b;--bar:#f08a4b;--bar2:#6a3b22;--link:#7fb0ff;--hi:#3a3320}}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1400px;padding:16px 24px 48px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}h3{font:600 15px/1.3 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;margin:0 0 4px;overflow-wrap:anywhere}
.run,.where,.hint,.x{color:var(--mute)}.note{margin:2px 0;color:#b3261e}
a{color:var(--link);text-decoration:none}a:hover{text-decoration:underline}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{padding:3px 8px;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left;white-space:normal;overflow-wrap:anywhere;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
thead th{position:sticky;top:0;background:var(--head);z-index:1}
th button{all:unset;cursor:pointer;font-weight:600;font-family:system-ui,sans-serif;font-size:13px}
th[aria-sort=descending] button::after{content:" \25BC"}th[aria-sort=ascending] button::after{content:" \25B2"}
#sites td:first-child{width:38%}
td.p{position:relative;min-width:90px;z-index:0}
td.p b{position:absolute;left:0;top:3px;bottom:3px;background:var(--bar2);z-index:-1;border-right:2px solid var(--bar)}
tbody tr:hover{background:var(--head)}
section.fn{content-visibility:auto;contain-intrinsic-size:auto 260px;border:1px solid var(--line);border-radius:6px;padding:10px 14px;margin:12px 0}
section.fn:target{background:var(--hi);outline:2px solid var(--bar)}
.edges{margin:6px 0}.edges td:first-child{width:50%}.up{margin:4px 0 0;font-size:12px}
input{font:inherit;padding:1px 6px}
#selftest{font-weight:600;padding:6px 10px;border-radius:4px;background:var(--head)}
</style>
</head>
<body>
"##;

const TAIL: &str = r##"<script>
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("tp-data").textContent);
  var table = document.getElementById("sites");
  var tbody = table.tBodies[0];
  var rows = Array.prototype.slice.call(tbody.rows);
  var names = rows.map(function (r, i) { r.tpIndex = i; return r.cells[0].textContent; });
  var buttons = Array.prototype.slice.call(table.tHead.querySelectorAll("button"));
  var current = { key: null, desc: false, button: null };

  function byName(a, b) { return names[a] < names[b] ? -1 : names[a] > names[b] ? 1 : a - b; }

  function sortRows(button, key, desc) {
    var order = rows.map(function (_, i) { return i; });
    order.sort(key === "name"
      ? function (a, b) { return desc ? byName(b, a) : byName(a, b); }
      : function (a, b) {
          var x = data[a][key], y = data[b][key];
          if (x !== y) { return desc ? y - x : x - y; }
          return byName(a, b);
        });
    var frag = document.createDocumentFragment();
    for (var i = 0; i < order.length; i++) { frag.appendChild(rows[order[i]]); }
    tbody.appendChild(frag);
    buttons.forEach(function (b) { b.parentNode.removeAttribute("aria-sort"); });
    button.parentNode.setAttribute("aria-sort", desc ? "descending" : "ascending");
    current = { key: key, desc: desc, button: button };
  }

  buttons.forEach(function (b) {
    b.addEventListener("click", function () {
      var key = b.getAttribute("data-k");
      var desc = current.button === b ? !current.desc : key !== "name";
      sortRows(b, key, desc);
    });
  });

  document.getElementById("filter").addEventListener("input", function (e) {
    var q = e.target.value.toLowerCase();
    for (var i = 0; i < rows.length; i++) {
      rows[i].hidden = q !== "" && names[i].toLowerCase().indexOf(q) < 0;
    }
  });

  function selftest() {
    var t0 = performance.now(), fails = [], out = document.getElementById("selftest");
    function fail(m) { if (fails.length < 6) { fails.push(m); } }
    function order() { return Array.prototype.map.call(tbody.rows, function (r) { return r.tpIndex; }); }
    function sorted(o, cmp) {
      for (var i = 1; i < o.length; i++) { if (cmp(o[i - 1], o[i]) > 0) { return false; } }
      return o.length === rows.length;
    }
    function click(label) {
      var b = buttons.filter(function (x) { return x.textContent === label; })[0];
      if (!b) { fail("no column " + label); return null; }
      b.click();
      return b.getAttribute("data-k");
    }
    try {
      var links = document.querySelectorAll('a[href^="#"]');
      for (var i = 0; i < links.length; i++) {
        var id = links[i].getAttribute("href").slice(1);
        if (!document.getElementById(id)) { fail("link to missing #" + id); }
      }
      var sections = document.querySelectorAll("section.fn");
      if (sections.length !== rows.length) { fail(sections.length + " sections for " + rows.length + " rows"); }
      if (data.length !== rows.length) { fail(data.length + " data rows for " + rows.length + " rows"); }
      rows.forEach(function (r, i) {
        var a = r.cells[0].querySelector("a");
        var s = a && document.getElementById(a.getAttribute("href").slice(1));
        if (!s || s.querySelector("h3").textContent !== names[i]) { fail("row " + i + " does not drill down to its own section"); }
      });
      var k = click("calls");
      if (!sorted(order(), function (a, b) { return data[b][k] - data[a][k]; })) { fail("calls not sorted descending"); }
      var desc = order().join(",");
      click("calls");
      if (!sorted(order(), function (a, b) { return data[a][k] - data[b][k]; })) { fail("calls not sorted ascending"); }
      var distinct = rows.some(function (_, i) { return data[i][k] !== data[0][k]; });
      if (distinct && order().join(",") === desc) { fail("second click did not reverse"); }
      k = click("self");
      if (!sorted(order(), function (a, b) { return data[b][k] - data[a][k]; })) { fail("self not sorted descending"); }
      click("name");
      if (!sorted(order(), byName)) { fail("names not sorted"); }
      if (buttons[0].parentNode.getAttribute("aria-sort") !== "ascending") { fail("name header not marked ascending"); }
      var allowed = /^(A|B|BUTTON|CODE|H1|H2|H3|HEADER|INPUT|LABEL|P|SCRIPT|SECTION|SPAN|STRONG|TABLE|TBODY|TD|TH|THEAD|TR)$/;
      var all = document.body.getElementsByTagName("*");
      for (var j = 0; j < all.length; j++) {
        if (!allowed.test(all[j].tagName)) { fail("unexpected <" + all[j].tagName.toLowerCase() + "> element"); break; }
      }
      if (document.scripts.length !== 2) { fail(document.scripts.length + " script elements, expected 2"); }
      if (window.tickprofInjected !== undefined) { fail("injected script ran"); }
      var ms = performance.now() - t0;
      out.textContent = fails.length
        ? "FAIL: " + fails.join("; ")
        : "PASS: " + rows.length + " rows, " + sections.length + " sections, " + links.length +
          " links resolved, sorting by calls, self and name correct; self-test " + ms.toFixed(0) +
          " ms, page ready at " + t0.toFixed(0) + " ms";
    } catch (e) {
      out.textContent = "FAIL: exception " + e;
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
    fn escapes_markup_and_quotes() {
        let mut s = String::new();
        push_esc(&mut s, "<script>alert('x & \"y\"')</script> é");
        assert_eq!(
            s,
            "&lt;script&gt;alert(&#39;x &amp; &quot;y&quot;&#39;)&lt;/script&gt; é"
        );
    }

    #[test]
    fn empty_report_is_a_complete_page() {
        let page = render(&Report::empty());
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.trim_end().ends_with("</html>"));
        assert!(page.contains("<script type=\"application/json\" id=tp-data>[]</script>"));
    }

    #[test]
    fn bars_are_clamped_and_never_nan() {
        let mut s = String::new();
        push_bar(&mut s, 300, 100);
        assert!(s.contains("width:100.0%") && s.contains("300.0%"), "{s}");
        s.clear();
        push_bar(&mut s, 5, 0);
        assert!(s.contains("width:0.0%"), "{s}");
    }
}
