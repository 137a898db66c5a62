//! File outputs, chosen by extension (`TICKPROF_OUT=path[,path…]`).
//!
//! Every format, its extension, writer and size is a row of [`FORMATS`]
//! (listed with sizes in `docs/formats.md`): `.txt`, `.csv`, `.json`,
//! `.html`, `.folded`, `.svg`, pprof's `.pb`, `.lcov`, Chrome's
//! `.trace.json`, …; `tickprof show --out` takes the same extensions.
//!
//! `.folded`, `.svg` and `.pb` draw the calling-context
//! tree through one rule for deep and recursive paths, [`stacks`]: direct
//! recursion collapsed into one frame, paths cut at [`stacks::MAX_DEPTH`]
//! frames, self time kept exactly. No writer builds a string per path: the
//! memory of every writer is proportional to its file or to the tree, never
//! to the sum of the path lengths (`scripts/stress_exports.sh` measures a
//! run 200,000 calls deep).
//!
//! # Examples
//!
//! ```
//! let report = tickprof_runtime::report();
//! let dir = std::env::temp_dir();
//! let path = dir.join("tickprof-doc-example.json");
//! let path = path.to_str().unwrap();
//! tickprof_runtime::export::write_to_path(&report, path, &Default::default()).unwrap();
//! # std::fs::remove_file(path).unwrap();
//! ```

use crate::report::{Report, TextOptions};
use std::io;
use std::path::Path;

pub(crate) mod columns;
pub mod csv;
pub(crate) mod file;
pub mod folded;
mod formats;
pub mod html;
pub mod json;
pub mod lcov;
pub(crate) mod notes;
pub mod pprof;
pub mod stacks;
pub mod svg;
pub mod text;
pub mod trace;

#[doc(hidden)]
pub use file::replace_with_bytes;
#[doc(hidden)]
pub use formats::markdown_table as formats_markdown_table;
pub use formats::{Format, FORMATS};

/// Known output extensions: those of [`FORMATS`], in its order (longest
/// first where one ends another).
pub const EXTENSIONS: &[&str] = formats::EXTENSIONS;

/// The extension of `path` that decides its format, if known.
pub fn format_of(path: &str) -> Option<&'static str> {
    formats::find(path).map(|f| f.extension)
}

/// The [`Format`] of `path`, by its extension.
///
/// # Errors
/// `InvalidInput` for an unknown extension, naming the known ones.
pub fn format_for(path: &str) -> io::Result<&'static Format> {
    formats::find(path).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("unknown extension (known: {})", EXTENSIONS.join(" ")),
        )
    })
}

/// Renders `report` in the format `path`'s extension names.
///
/// # Errors
/// `InvalidInput` for an unknown extension; `Unsupported` for a format not
/// available in this build; any error of the format's writer.
pub fn render(report: &Report, path: &str, opts: &TextOptions) -> io::Result<Vec<u8>> {
    format_for(path)?.render(report, opts)
}

/// Writes `report` to `path` in the format its extension names.
///
/// The file is replaced atomically and safely: the report is written to a
/// new temporary file beside `path` (`.tickprof-PID-RANDOM.tmp`, created
/// with `O_CREAT|O_EXCL`, so nothing planted there is ever opened), then
/// renamed over `path`, so a reader sees either the previous file or the
/// whole new one, never half a report (periodic dumps rewrite the same
/// files). An existing file keeps its permissions (and owner, where
/// permitted); a symlink at `path` is replaced, not followed; a FIFO,
/// device, socket or directory at `path` is refused. Folded stacks are
/// streamed line by line; the other formats are rendered in memory first
/// (each bounded, see their modules).
///
/// # Errors
/// Unknown extension, a target that is not a regular file or a symlink
/// (`InvalidInput`), or any error creating, writing or renaming the file
/// (the temporary file is then removed).
pub fn write_to_path(report: &Report, path: &str, opts: &TextOptions) -> io::Result<()> {
    write_file(report, Path::new(path), opts)
}

/// [`write_to_path`] for any path, UTF-8 or not (the exit report's
/// `TICKPROF_OUT` files, `tickprof show --out`).
///
/// # Errors
/// As [`write_to_path`].
#[doc(hidden)]
pub fn write_file(report: &Report, path: &Path, opts: &TextOptions) -> io::Result<()> {
    let format = format_for(&path.to_string_lossy())?;
    file::replace_with(path, |out| format.write(report, opts, out))
}

/// A site row for unit tests: 3 calls, 300 ns total, 100 ns self.
#[cfg(test)]
pub(crate) fn test_site(name: &str, kind: crate::report::SiteKind) -> crate::report::SiteStats {
    let mark = crate::report::Mark {
        name: name.to_owned(),
        kind,
        file: "t.rs".to_owned(),
        line: 1,
    };
    crate::report::SiteStats {
        calls: 3,
        timed_calls: 3,
        total_ns: 300,
        self_ns: 100,
        p_self: 1.0 / 3.0,
        mean_ns: 100.0,
        resolved: true,
        min_ns: 90,
        max_ns: 110,
        total_ticks: 600,
        self_ticks: 200,
        min_ticks: 180,
        max_ticks: 220,
        raw_total_ns: 330,
        raw_self_ns: 110,
        compensated_total_ns: 300,
        compensated_self_ns: 100,
        p50_ns: 100,
        p90_ns: 110,
        p99_ns: 110,
        hist: vec![(95, 1), (105, 1), (112, 1)],
        hist_sum_ns: 330,
        pc_samples: 0,
        ..crate::report::SiteStats::never_called(&mark)
    }
}

/// A tree node for unit tests (the one place to update when `TreeNode`
/// gains fields).
#[cfg(test)]
pub(crate) fn test_node(
    name: &str,
    parent: Option<usize>,
    self_ns: u64,
) -> crate::report::TreeNode {
    crate::report::TreeNode {
        name: name.to_owned(),
        parent,
        depth: 0,
        calls: 1,
        total_ns: self_ns,
        self_ns,
        raw_total_ns: self_ns,
        raw_self_ns: self_ns,
        alloc: crate::report::AllocStats::default(),
        self_alloc: crate::report::AllocStats::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_json_is_not_taken_for_json() {
        assert_eq!(format_of("out/run.trace.json"), Some(".trace.json"));
        assert_eq!(format_of("out/run.json"), Some(".json"));
        assert_eq!(format_of("a.html"), Some(".html"));
        assert_eq!(format_of("a.folded"), Some(".folded"));
        assert_eq!(format_of("a.alloc.folded"), Some(".alloc.folded"));
        assert_eq!(format_of("a.svg"), Some(".svg"));
        assert_eq!(format_of("a.pb.gz"), Some(".pb.gz"));
        assert_eq!(format_of("a.pb"), Some(".pb"));
        assert_eq!(format_of("a.xml"), None);
    }

    #[test]
    fn every_known_extension_renders_an_empty_report_or_says_why() {
        let r = Report::empty();
        for ext in EXTENSIONS {
            let out = render(&r, &format!("x{ext}"), &TextOptions::default());
            match *ext {
                ".trace.json" => {
                    let v: serde_json::Value = serde_json::from_slice(&out.unwrap()).unwrap();
                    assert_eq!(v["traceEvents"].as_array().map(Vec::len), Some(0));
                }
                _ => assert!(out.is_ok(), "{ext}: {out:?}"),
            }
        }
        let e = render(&r, "x.xml", &TextOptions::default()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn files_are_replaced_through_a_temporary_file_that_does_not_stay() {
        let dir = std::env::temp_dir().join(format!("tickprof-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let r = Report::empty();
        for name in ["a.csv", "a.folded"] {
            let path = dir.join(name);
            std::fs::write(&path, "old").unwrap();
            write_to_path(&r, path.to_str().unwrap(), &TextOptions::default()).unwrap();
            assert_ne!(std::fs::read_to_string(&path).unwrap(), "old");
        }
        let missing = dir.join("no/such/dir/a.csv");
        assert!(write_to_path(&r, missing.to_str().unwrap(), &TextOptions::default()).is_err());
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
