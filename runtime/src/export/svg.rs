//! Flamegraph output (`.svg`): the [folded stacks](super::folded) drawn as
//! an interactive SVG.
//!
//! One box per frame of the [stack tree](super::stacks) (the same paths as
//! the folded file: direct recursion collapsed into one `name [×N]` box,
//! paths cut at [`MAX_DEPTH`] frames with a `[… N frames]` box), the root
//! (`all`) at the bottom and callees stacked above their callers; a box's width is its time (self plus
//! children, in nanoseconds) as a share of the whole. Colours come from the
//! classic warm flamegraph palette, hashed by name, so a function keeps its
//! colour from run to run. Hovering a box shows its name, time and share;
//! clicking it zooms in on it, and "Reset zoom" (top left) zooms out.
//!
//! Boxes narrower than [`MIN_WIDTH_PX`] are not drawn (as in inferno and
//! `flamegraph.pl`), and at most [`MAX_FRAMES`] boxes are drawn, the ones
//! nearest the root first, so the file stays bounded for deep or very wide
//! profiles; the subtitle says when the limit left some out. **Size**: at
//! most [`MAX_FRAMES`] boxes of about 250 bytes plus their names, at most
//! [`MAX_DEPTH`]` + 2` levels tall; memory is the stack tree (proportional to
//! the calling-context tree) and the document. A profile with no recorded
//! time gives a picture saying so.
//!
//! Drawn by tickprof itself: the `inferno` crate's dependency graph adds
//! trait impls on std types (`From<RGB<T>> for [T; 3]`,
//! `PartialEq<ArrayString> for str`, …) that change type inference in the
//! profiled crate.

use super::stacks::{self, MAX_DEPTH};
use crate::report::{fmt_ns, Report};
use std::borrow::Cow;
use std::collections::VecDeque;
use std::fmt::Write as _;
use std::io;

/// Image width in pixels.
const WIDTH: f64 = 1200.0;
/// Left and right margin.
const XPAD: f64 = 10.0;
/// Height of one box (one stack level).
const FRAME_HEIGHT: f64 = 16.0;
/// Font size of labels.
const FONT_SIZE: f64 = 12.0;
/// Average glyph width as a share of the font size, to fit labels.
const FONT_WIDTH: f64 = 0.59;
/// Space above the boxes (title, subtitle).
const TOP: f64 = FONT_SIZE * 4.0;
/// Space below the boxes.
const BOTTOM: f64 = FONT_SIZE * 2.0;

/// Boxes narrower than this many pixels are not drawn, nor their callees.
pub const MIN_WIDTH_PX: f64 = 0.1;
/// At most this many boxes are drawn (about 250 bytes each).
pub const MAX_FRAMES: usize = 30_000;

/// One box: a frame of the [stack tree](super::stacks) with its total.
struct Frame<'a> {
    name: Cow<'a, str>,
    depth: usize,
    total: u64,
    children: &'a [usize],
}

/// The stack tree with each frame's total (self plus children);
/// `frames[0]` is `all`.
fn boxes<'a>(tree: &'a [stacks::Frame<'a>]) -> Vec<Frame<'a>> {
    let mut totals: Vec<u64> = tree.iter().map(|f| f.self_ns).collect();
    // Parents come before their children: add each total to its parent,
    // last first.
    for (i, f) in tree.iter().enumerate().rev() {
        if let Some(p) = f.parent {
            totals[p] = totals[p].saturating_add(totals[i]);
        }
    }
    tree.iter()
        .zip(totals)
        .enumerate()
        .map(|(i, (f, total))| Frame {
            name: if i == 0 {
                Cow::Borrowed("all")
            } else {
                f.label()
            },
            depth: f.depth,
            total,
            children: &f.children,
        })
        .collect()
}

/// A warm colour for `name`, the same for the same name in every run.
fn colour(name: &str) -> (u8, u8, u8) {
    // FNV-1a: stable across runs and platforms, unlike `DefaultHasher`.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let part = |shift: u32| ((h >> shift) & 0xFFFF) as f64 / 65536.0;
    (
        (205.0 + 50.0 * part(32)) as u8,
        (230.0 * part(0)) as u8,
        (55.0 * part(16)) as u8,
    )
}

/// Appends `s` as XML text or attribute content: markup characters as
/// entities, characters XML 1.0 does not allow (control characters other
/// than tab and line breaks, U+FFFE, U+FFFF) as U+FFFD.
fn push_xml(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c < ' ' || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
}

/// The label that fits in `width_px`: the name, or its start and `..`.
fn label(name: &str, width_px: f64) -> Option<String> {
    let fit = ((width_px - 6.0) / (FONT_SIZE * FONT_WIDTH)).floor();
    if fit < 3.0 {
        return None;
    }
    let fit = fit as usize;
    if name.chars().count() <= fit {
        Some(name.to_owned())
    } else {
        Some(name.chars().take(fit - 2).chain("..".chars()).collect())
    }
}

/// The flamegraph of `report` as an SVG document.
///
/// # Errors
/// None in practice: the document is built in memory. The `Result` is kept
/// for the signature shared by the formats.
///
/// # Examples
///
/// ```
/// let report = tickprof_runtime::report();
/// let svg = tickprof_runtime::export::svg::render(&report).unwrap();
/// assert!(String::from_utf8(svg).unwrap().contains("<svg"));
/// ```
pub fn render(report: &Report) -> io::Result<Vec<u8>> {
    Ok(document(report).into_bytes())
}

/// The document as text.
fn document(report: &Report) -> String {
    let tree = stacks::build(report);
    let frames = boxes(&tree);
    let paths = frames.len() - 1;
    let cut_paths = tree.iter().any(|f| f.cut > 0);
    let total = frames[0].total;
    let plot = WIDTH - 2.0 * XPAD;
    let px_per_ns = if total > 0 { plot / total as f64 } else { 0.0 };

    // Choose the boxes: breadth first, so a limit keeps the levels nearest
    // the root; `x` in nanoseconds from the left.
    let mut drawn: Vec<(usize, u64)> = Vec::new();
    let mut cut = 0usize;
    if total > 0 {
        let mut queue = VecDeque::from([(0usize, 0u64)]);
        while let Some((i, x)) = queue.pop_front() {
            if drawn.len() < MAX_FRAMES {
                drawn.push((i, x));
            } else {
                cut += 1;
            }
            let mut cx = x;
            for &c in frames[i].children {
                if frames[c].total as f64 * px_per_ns >= MIN_WIDTH_PX {
                    queue.push_back((c, cx));
                }
                cx = cx.saturating_add(frames[c].total);
            }
        }
    }
    let levels = drawn
        .iter()
        .map(|&(i, _)| frames[i].depth)
        .max()
        .unwrap_or(0)
        + 1;
    let height = TOP + levels as f64 * FRAME_HEIGHT + BOTTOM;

    let mut out = String::with_capacity(4096 + 256 * drawn.len());
    let _ = write!(
        out,
        concat!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n",
            "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" ",
            "viewBox=\"0 0 {w} {h}\" font-family=\"Verdana, sans-serif\" font-size=\"{fs}\">\n",
            "<defs><linearGradient id=\"bg\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">",
            "<stop stop-color=\"#eeeeee\" offset=\"5%\"/><stop stop-color=\"#eeeeb0\" offset=\"95%\"/>",
            "</linearGradient></defs>\n",
            "<style>g.f:hover rect{{stroke:#000;stroke-width:0.5}} g.f{{cursor:pointer}} ",
            "text{{pointer-events:none}} #reset{{cursor:pointer;pointer-events:auto}}</style>\n",
            "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"url(#bg)\"/>\n",
            "<text x=\"{cx}\" y=\"{ty}\" text-anchor=\"middle\" font-size=\"17\">tickprof flamegraph</text>\n"
        ),
        w = WIDTH,
        h = height,
        fs = FONT_SIZE,
        cx = WIDTH / 2.0,
        ty = FONT_SIZE * 2.0,
    );
    let mut subtitle = format!(
        "self time {} in {} path{}, wall {}",
        fmt_ns(total as f64),
        paths,
        if paths == 1 { "" } else { "s" },
        fmt_ns(report.run.wall_ns as f64)
    );
    if cut_paths {
        let _ = write!(subtitle, "; paths cut at {MAX_DEPTH} frames");
    }
    if cut > 0 {
        let _ = write!(
            subtitle,
            "; {cut} more boxes not drawn (limit {MAX_FRAMES})"
        );
    }
    if total == 0 {
        subtitle = "no recorded time: nothing to draw".to_owned();
    }
    let _ = write!(
        out,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#555\">",
        WIDTH / 2.0,
        FONT_SIZE * 3.3
    );
    push_xml(&mut out, &subtitle);
    out.push_str("</text>\n");
    let _ = writeln!(
        out,
        "<text id=\"reset\" x=\"{XPAD}\" y=\"{}\" visibility=\"hidden\">Reset zoom</text>",
        FONT_SIZE * 2.0
    );

    for &(i, x) in &drawn {
        let f = &frames[i];
        let fx = XPAD + x as f64 * px_per_ns;
        let fw = f.total as f64 * px_per_ns;
        let fy = height - BOTTOM - (f.depth + 1) as f64 * FRAME_HEIGHT;
        let (r, g, b) = if i == 0 {
            (220, 220, 220)
        } else {
            colour(&f.name)
        };
        let _ = write!(out, "<g class=\"f\" data-d=\"{}\"><title>", f.depth);
        push_xml(&mut out, &f.name);
        let _ = write!(
            out,
            " ({}, {:.2}%)</title><rect x=\"{fx:.2}\" y=\"{fy}\" width=\"{fw:.2}\" height=\"{}\" fill=\"rgb({r},{g},{b})\" rx=\"2\"/><text x=\"{:.2}\" y=\"{}\">",
            fmt_ns(f.total as f64),
            100.0 * f.total as f64 / total as f64,
            FRAME_HEIGHT - 1.0,
            fx + 3.0,
            fy + FRAME_HEIGHT - 4.5,
        );
        if let Some(l) = label(&f.name, fw) {
            push_xml(&mut out, &l);
        }
        out.push_str("</text></g>\n");
    }
    let _ = write!(
        out,
        "<script><![CDATA[{}]]></script>\n</svg>\n",
        SCRIPT
            .replace("XPAD", &XPAD.to_string())
            .replace("PLOT", &plot.to_string())
            .replace("GLYPH", &(FONT_SIZE * FONT_WIDTH).to_string())
    );
    out
}

/// Click to zoom: the clicked box fills the width, its callees scale with
/// it, its callers span the width, everything else hides.
const SCRIPT: &str = r#"
(function () {
  var fs = Array.prototype.slice.call(document.querySelectorAll("g.f"));
  var reset = document.getElementById("reset");
  var info = fs.map(function (g) {
    var r = g.querySelector("rect"), t = g.querySelector("title").textContent;
    return { g: g, r: r, t: g.querySelector("text"), name: t.slice(0, t.lastIndexOf(" (")),
             x: +r.getAttribute("x"), w: +r.getAttribute("width"), d: +g.getAttribute("data-d") };
  });
  function place(f, x, w) {
    f.g.style.display = "";
    f.r.setAttribute("x", x.toFixed(2));
    f.r.setAttribute("width", w.toFixed(2));
    f.t.setAttribute("x", (x + 3).toFixed(2));
    var fit = Math.floor((w - 6) / GLYPH), n = f.name;
    f.t.textContent = fit < 3 ? "" : n.length <= fit ? n : n.slice(0, fit - 2) + "..";
  }
  function zoom(z) {
    var k = PLOT / z.w, eps = 1e-6;
    info.forEach(function (f) {
      if (f.d < z.d) {
        if (f.x <= z.x + eps && f.x + f.w >= z.x + z.w - eps) place(f, XPAD, PLOT);
        else f.g.style.display = "none";
      } else if (f.x >= z.x - eps && f.x + f.w <= z.x + z.w + eps) {
        place(f, XPAD + (f.x - z.x) * k, f.w * k);
      } else f.g.style.display = "none";
    });
    reset.setAttribute("visibility", z.d > 0 ? "visible" : "hidden");
  }
  info.forEach(function (f) { f.g.addEventListener("click", function () { zoom(f); }); });
  reset.addEventListener("click", function () { if (info.length) zoom(info[0]); });
})();
"#;

#[cfg(test)]
mod tests;
