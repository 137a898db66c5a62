//! Flamegraph output (`.svg`): the [folded stacks](super::folded) drawn by
//! the `inferno` crate.
//!
//! Frame widths are self time plus children in nanoseconds; colours are
//! inferno's classic warm palette, hashed by name so a function keeps its
//! colour from run to run. The SVG is interactive in a browser (click to zoom,
//! Ctrl-F to search). A profile with no recorded time gives inferno's
//! "no valid input" picture rather than an error.

use crate::report::{fmt_ns, Report};
use inferno::flamegraph::{self, Options};
use std::io;

/// The flamegraph of `report` as an SVG document.
///
/// # Errors
/// Any error inferno reports while drawing (none is expected for the
/// well-formed lines [`folded::stacks`](super::folded::stacks) makes).
///
/// # Examples
///
/// ```
/// let report = tickprof_runtime::report();
/// let svg = tickprof_runtime::export::svg::render(&report).unwrap();
/// assert!(String::from_utf8(svg).unwrap().contains("<svg"));
/// ```
pub fn render(report: &Report) -> io::Result<Vec<u8>> {
    let stacks = super::folded::stacks(report);
    let lines: Vec<String> = stacks.iter().map(|(s, ns)| format!("{s} {ns}")).collect();
    let total: u64 = stacks.iter().map(|(_, ns)| *ns).sum();
    let mut opt = Options::default();
    opt.title = "tickprof flamegraph".to_owned();
    opt.subtitle = Some(format!(
        "self time {} in {} path{}, wall {}",
        fmt_ns(total as f64),
        lines.len(),
        if lines.len() == 1 { "" } else { "s" },
        fmt_ns(report.run.wall_ns as f64)
    ));
    opt.count_name = "ns".to_owned();
    opt.hash = true;
    let mut out = Vec::new();
    match flamegraph::from_lines(&mut opt, lines.iter().map(String::as_str), &mut out) {
        Ok(()) => Ok(out),
        // No time: inferno has written a complete "no valid input" SVG.
        Err(_) if total == 0 && out.ends_with(b"</svg>") => Ok(out),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::test_node;

    #[test]
    fn empty_profile_gives_a_complete_svg() {
        let svg = String::from_utf8(render(&Report::empty()).unwrap()).unwrap();
        assert!(svg.contains("<svg") && svg.trim_end().ends_with("</svg>"));
        let mut r = Report::empty();
        for (name, parent) in [("", None), ("idle", Some(0))] {
            r.tree.push(test_node(name, parent, 0));
        }
        let svg = String::from_utf8(render(&r).unwrap()).unwrap();
        assert!(svg.trim_end().ends_with("</svg>"));
    }

    #[test]
    fn names_are_escaped_by_inferno() {
        let mut r = Report::empty();
        for (name, parent) in [("", None), ("<b>&\"x\"", Some(0))] {
            r.tree.push(test_node(name, parent, 9));
        }
        let svg = String::from_utf8(render(&r).unwrap()).unwrap();
        assert!(!svg.contains("<b>&"), "raw name in SVG");
        assert!(svg.contains("&lt;b&gt;&amp;"), "escaped name missing");
    }
}
