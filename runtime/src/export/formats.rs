//! The table of output formats: extension, description, writer. The
//! dispatch ([`format_of`](super::format_of), [`render`](super::render),
//! [`write_to_path`](super::write_to_path)), the list of known extensions
//! ([`EXTENSIONS`](super::EXTENSIONS)), the `tickprof show --out` help and
//! the table in `docs/formats.md` all read it.

use super::{folded, html, json, lcov, pprof, svg, trace};
use crate::report::{Report, TextOptions};
use std::io;

/// How a format's file is written.
#[derive(Clone, Copy)]
enum Writer {
    /// Rendered in memory, then written.
    Render(fn(&Report, &TextOptions) -> io::Result<Vec<u8>>),
    /// Streamed to the file line by line (also collected into memory by
    /// [`render`](super::render)).
    Stream(fn(&Report, &mut dyn io::Write) -> io::Result<()>),
}

/// One output format: the file extension that selects it, what it holds,
/// and its writer.
///
/// # Examples
///
/// ```
/// use tickprof_runtime::export::FORMATS;
/// let json = FORMATS.iter().find(|f| f.extension == ".json").unwrap();
/// assert_eq!(json.item, "export::json::render");
/// ```
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct Format {
    /// The extension, with its dot (`.json`, `.pb.gz`).
    pub extension: &'static str,
    /// What the file holds, in one line (markdown).
    pub description: &'static str,
    /// The public function that renders it, as a path below
    /// `tickprof_runtime` (`export::json::render`).
    pub item: &'static str,
    /// The file's size, whatever the recursion depth (markdown).
    pub size: &'static str,
    writer: Writer,
}

impl std::fmt::Debug for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Format")
            .field("extension", &self.extension)
            .field("item", &self.item)
            .finish_non_exhaustive()
    }
}

impl Format {
    /// The file's contents for `report`.
    ///
    /// # Errors
    /// Any error of the format's writer (`Unsupported` for a format not
    /// available in this build).
    pub fn render(&self, report: &Report, opts: &TextOptions) -> io::Result<Vec<u8>> {
        match self.writer {
            Writer::Render(f) => f(report, opts),
            Writer::Stream(f) => {
                let mut out = Vec::new();
                f(report, &mut out)?;
                Ok(out)
            }
        }
    }

    /// Writes the file's contents for `report` to `out`, streamed where the
    /// format allows it.
    ///
    /// # Errors
    /// Any error of the writer or of `out`.
    pub fn write(
        &self,
        report: &Report,
        opts: &TextOptions,
        out: &mut dyn io::Write,
    ) -> io::Result<()> {
        match self.writer {
            Writer::Render(f) => out.write_all(&f(report, opts)?),
            Writer::Stream(f) => f(report, out),
        }
    }
}

/// Every output format, in the order the docs list them. Where one
/// extension ends another (`.trace.json` and `.json`, `.alloc.folded` and
/// `.folded`, `.pb.gz` and `.pb`), the longer comes first: the first whose
/// extension ends a path is its format.
pub const FORMATS: &[Format] = &[
    Format {
        extension: ".txt",
        description: "the text report",
        item: "Report::text",
        size: "one row per site (a caller/callee section each with `TICKPROF_REPORT=tree`)",
        writer: Writer::Render(|r, o| Ok(r.text(o).into_bytes())),
    },
    Format {
        extension: ".csv",
        description: "the flat table, RFC 4180",
        item: "Report::to_csv",
        size: "one line per site",
        writer: Writer::Render(|r, _| Ok(r.to_csv().into_bytes())),
    },
    Format {
        extension: ".trace.json",
        description: "Chrome trace events of individual calls",
        item: "export::trace::render_report",
        size: "about 90 bytes per call, at most `TICKPROF_TRACE_EVENTS` calls per thread",
        writer: Writer::Render(|r, _| Ok(trace::render_report(r).into_bytes())),
    },
    Format {
        extension: ".json",
        description: "the whole report, `\"version\": 1` (read back by `export::json::parse` and the `tickprof` command)",
        item: "export::json::render",
        size: "per site and edge, plus about 220 bytes per tree node (at most `TICKPROF_MAX_NODES` per thread)",
        writer: Writer::Render(|r, _| json::render(r)),
    },
    Format {
        extension: ".html",
        description: "self-contained drill-down page",
        item: "export::html::render",
        size: "per site and edge",
        writer: Writer::Render(|r, _| Ok(html::render(r).into_bytes())),
    },
    Format {
        extension: ".alloc.folded",
        description: "folded stacks of self bytes allocated (`tickprof::Alloc`), plus an `<outside marked calls>` line",
        item: "export::folded::render_bytes",
        size: "as `.folded`, plus one line",
        writer: Writer::Stream(|r, mut out| folded::write_bytes(r, &mut out)),
    },
    Format {
        extension: ".folded",
        description: "folded stacks of self time",
        item: "export::folded::render",
        size: "at most one line per tree node, each at most `export::stacks::MAX_DEPTH` + 1 frames",
        writer: Writer::Stream(|r, mut out| folded::write(r, &mut out)),
    },
    Format {
        extension: ".svg",
        description: "interactive flamegraph of the folded stacks",
        item: "export::svg::render",
        size: "at most `export::svg::MAX_FRAMES` boxes",
        writer: Writer::Render(|r, _| svg::render(r)),
    },
    Format {
        extension: ".pb.gz",
        description: "pprof `profile.proto`, gzipped (stored blocks)",
        item: "export::pprof::render_gz",
        size: "as `.pb`",
        writer: Writer::Render(|r, _| Ok(pprof::render_gz(r))),
    },
    Format {
        extension: ".pb",
        description: "pprof `profile.proto`",
        item: "export::pprof::render",
        size: "one sample per path of the stack tree, as `.folded`",
        writer: Writer::Render(|r, _| Ok(pprof::render(r))),
    },
    Format {
        extension: ".lcov",
        description: "LCOV function records of every mark, never-called ones with 0 (coverage; `lcov --summary`, `genhtml`)",
        item: "export::lcov::render",
        size: "two lines per mark",
        writer: Writer::Render(|r, _| Ok(lcov::render(r).into_bytes())),
    },
];

/// The extensions of [`FORMATS`], in its order.
pub(super) const EXTENSIONS: &[&str] = &{
    let mut all = [""; FORMATS.len()];
    let mut i = 0;
    while i < FORMATS.len() {
        all[i] = FORMATS[i].extension;
        i += 1;
    }
    all
};

/// The format whose extension ends `path`, if any.
pub(super) fn find(path: &str) -> Option<&'static Format> {
    FORMATS.iter().find(|f| path.ends_with(f.extension))
}

/// The markdown table of [`FORMATS`] that `docs/formats.md` holds between
/// its `<!-- formats:begin -->` and `<!-- formats:end -->` lines (a test
/// keeps the two equal).
#[doc(hidden)]
pub fn markdown_table() -> String {
    let mut s = String::from(
        "| extension | format | writer | size, whatever the recursion depth |\n|---|---|---|---|\n",
    );
    for f in FORMATS {
        s.push_str(&format!(
            "| `{}` | {} | `{}` | {} |\n",
            f.extension, f.description, f.item, f.size
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_longer_extension_comes_before_the_one_it_ends_with() {
        for (i, a) in FORMATS.iter().enumerate() {
            for b in &FORMATS[i + 1..] {
                assert!(
                    !b.extension.ends_with(a.extension),
                    "{} must come after {}",
                    a.extension,
                    b.extension
                );
            }
            assert!(a.extension.starts_with('.'));
        }
        assert_eq!(EXTENSIONS.len(), FORMATS.len());
    }

    /// `docs/formats.md`'s table is [`markdown_table`]; with
    /// `TPTEST_BLESS=1` the test rewrites it.
    #[test]
    fn docs_formats_table_is_the_formats_table() {
        const BEGIN: &str = "<!-- formats:begin -->\n";
        const END: &str = "<!-- formats:end -->";
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/formats.md");
        let Ok(doc) = std::fs::read_to_string(path) else {
            // Not in the workspace (a packaged crate): nothing to compare.
            return;
        };
        let want = markdown_table();
        let (Some(b), Some(e)) = (doc.find(BEGIN), doc.find(END)) else {
            panic!("{path}: no {BEGIN:?} … {END:?} block; it should hold:\n{want}");
        };
        let got = &doc[b + BEGIN.len()..e];
        if got == want {
            return;
        }
        if std::env::var_os("TPTEST_BLESS").is_some_and(|v| v == "1") {
            let new = format!("{}{want}{}", &doc[..b + BEGIN.len()], &doc[e..]);
            std::fs::write(path, new).unwrap();
            return;
        }
        panic!(
            "{path}: the formats table differs from export::FORMATS \
             (TPTEST_BLESS=1 rewrites it); it should be:\n{want}"
        );
    }
}
