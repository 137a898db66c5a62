//! The HTML page's per-site sections (callers and callees) and its
//! thread table.

use super::{pct, push_bar, push_esc, push_name};
use crate::export::columns;
use crate::report::{fmt_ns, Edge, Report, SiteStats};
use std::collections::HashMap;
use std::fmt::Write as _;

/// One site's section, on one line.
pub(super) fn section(
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
    let _ = write!(out, ":{}", s.line);
    if s.column > 0 {
        let _ = write!(out, ":{}", s.column);
    }
    let _ = write!(out, " · {:?}</p>", s.kind);
    let per = |ns: u64| s.per_call(ns);
    let _ = write!(
        out,
        "<p class=\"stats\">{} call{} · total <b>{}</b> ({:.1}% of run, {} per call) · self <b>{}</b> ({:.1}% of run, {} per call) · min {} · max {}",
        s.calls,
        columns::plural(s.calls),
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
fn push_edge(out: &mut String, e: &Edge, total: u64, links: &HashMap<&str, usize>) {
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

pub(super) fn threads(out: &mut String, report: &Report, links: &HashMap<&str, usize>) {
    out.push_str("<h2 id=\"threads\">Threads</h2>\n<table class=\"edges\"><thead><tr><th>thread</th><th>sites</th><th>calls</th><th>self time</th><th>most self time in</th></tr></thead><tbody>\n");
    for t in &report.threads {
        out.push_str("<tr><td>");
        push_esc(out, &t.name);
        let _ = write!(out, " <span class=\"x\">#{}", t.id);
        if t.finished && t.count > 1 {
            let _ = write!(out, ", {} finished threads", t.count);
        } else if t.finished {
            out.push_str(", finished");
        }
        // Saturating: a report read from a file may hold any values.
        let calls = t.sites.iter().fold(0u64, |a, s| a.saturating_add(s.calls));
        let self_ns = t
            .sites
            .iter()
            .fold(0u64, |a, s| a.saturating_add(s.self_ns));
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

/// The coverage part (marks that never ran, by file and line) and the
/// faults injected per site, when the report has them.
pub(super) fn tools(out: &mut String, report: &Report) {
    if let Some(c) = report.coverage.as_ref().filter(|c| c.marked > 0) {
        let _ = write!(
            out,
            "<h2 id=\"coverage\">Coverage</h2>\n<p>{} of {} marked functions ran; {} never called.</p>\n",
            c.ran,
            c.marked,
            c.never_called.len()
        );
        if !c.never_called.is_empty() {
            out.push_str("<table class=\"coverage\"><thead><tr><th>never called</th><th>where</th></tr></thead><tbody>");
            for m in &c.never_called {
                out.push_str("<tr><td>");
                push_esc(out, &m.name);
                out.push_str("</td><td>");
                push_esc(out, &m.file);
                let _ = write!(out, ":{}</td></tr>", m.line);
            }
            out.push_str("</tbody></table>\n");
        }
    }
    if let Some(f) = &report.faults {
        let _ = write!(
            out,
            "<h2 id=\"faults\">Faults injected</h2>\n<p>Failpoints armed (seed {}); {} injected.</p>\n",
            f.seed,
            f.total()
        );
        if f.total() > 0 {
            out.push_str("<table class=\"faults\"><thead><tr><th>site</th><th>faults</th></tr></thead><tbody>");
            for (name, n) in &f.sites {
                out.push_str("<tr><td>");
                push_esc(out, name);
                let _ = write!(out, "</td><td>{n}</td></tr>");
            }
            out.push_str("</tbody></table>\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::report::{Coverage, Faults, Mark, Report, SiteKind};

    #[test]
    fn coverage_and_faults_are_listed_escaped() {
        let mut r = Report::empty();
        r.coverage = Some(Coverage {
            marked: 2,
            ran: 1,
            never_called: vec![Mark {
                name: "a::<b>".into(),
                kind: SiteKind::Function,
                file: "x.rs".into(),
                line: 4,
            }],
        });
        r.faults = Some(Faults {
            seed: 3,
            sites: vec![("f".into(), 2)],
        });
        let mut out = String::new();
        super::tools(&mut out, &r);
        assert!(
            out.contains("<p>1 of 2 marked functions ran; 1 never called.</p>"),
            "{out}"
        );
        assert!(
            out.contains("<tr><td>a::&lt;b&gt;</td><td>x.rs:4</td></tr>"),
            "{out}"
        );
        assert!(out.contains("<tr><td>f</td><td>2</td></tr>"), "{out}");
    }
}
