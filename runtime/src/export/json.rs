//! JSON output (`.json`): the whole [`Report`] with a `"version"` field,
//! and [`parse`], which reads it back.
//!
//! The document is the report's fields (`run`, `sites`, `threads`, `tree`,
//! `coverage`, `faults`, and any added later) at the top level, next to
//! `"version"`. Names are the Rust field names; enums are lower-case
//! strings (`"tsc"`, `"function"`); times are whole nanoseconds except
//! `mean_ns` (a float); `null` stands for `None` (and for a float that is
//! not a number). The schema is one list of fields per type (in
//! `json/schema.rs`), from which both the writer and [`parse`] are made; a
//! field added since version 1 is read with its default when an older file
//! lacks it.
//!
//! Written by hand, without serde: a profiler must not add `serde_json`'s
//! trait impls on std types (`impl PartialEq<Value> for i32`, …) to its
//! user's crate graph, where they change type inference. The output is the
//! text `serde_json::to_writer_pretty` gives; a float is in its shortest
//! form that reads back exactly, where in rare ties the last digit may
//! differ from serde_json's choice.

use crate::report::Report;
use schema::{At, Fields, Object};
use std::fmt;
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
    report.write_fields(&mut w);
    w.end_object();
    out.push('\n');
    out
}

/// Why a text is not a report [`parse`] reads.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseError {
    /// Not JSON: what was wrong, at which byte.
    Syntax {
        /// What was wrong (`unterminated string`).
        what: &'static str,
        /// Where, in bytes from the start.
        offset: usize,
    },
    /// JSON, but not a report: where (`sites[3].alloc`) and what is wrong
    /// there (`no "bytes"`, `not a whole number`).
    Schema {
        /// The path of the value or object in the document.
        at: String,
        /// What is wrong with it.
        what: String,
    },
    /// A report of another schema [`VERSION`].
    Version(u64),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Syntax { what, offset } => write!(
                f,
                "not a tickprof JSON report (not JSON: {what} at byte {offset})"
            ),
            ParseError::Schema { at, what } if at == "report" => {
                write!(f, "not a tickprof JSON report ({what})")
            }
            ParseError::Schema { at, what } => {
                write!(f, "not a tickprof JSON report ({at}: {what})")
            }
            ParseError::Version(v) => write!(
                f,
                "JSON report version {v}; this tickprof reads version {VERSION}"
            ),
        }
    }
}

impl std::error::Error for ParseError {}

/// Reads a JSON report back ([`render`]'s output, from this or an earlier
/// tickprof of the same [`VERSION`]) into the [`Report`] it was written
/// from. Only [`Report::trace`] is not in the JSON; it comes back `None`.
/// Fields a file lacks because it predates them get their defaults;
/// fields this tickprof does not know are ignored.
///
/// Any input gives a report or an error, never a panic: nesting is
/// bounded, numbers are checked against their field's type, and the tree
/// is checked as the writer makes it: `tree[0]` is the root (no parent,
/// depth 0), every other node's parent comes before it (in range, not
/// itself, no cycle) and its depth is its parent's plus one.
///
/// # Errors
/// [`ParseError`]: not JSON, not a report (missing or mistyped field, or a
/// broken tree, with the path of the value: `tree[17].parent: 17 is the
/// node itself`), or another schema version.
///
/// # Examples
///
/// ```
/// use tickprof_runtime::export::json;
/// let report = tickprof_runtime::report();
/// let text = String::from_utf8(json::render(&report).unwrap()).unwrap();
/// let back = json::parse(&text).unwrap();
/// assert_eq!(back.sites, report.sites);
/// assert!(json::parse("{\"version\": 1}").is_err());
/// ```
pub fn parse(text: &str) -> Result<Report, ParseError> {
    let doc = value::parse(text).map_err(|e| ParseError::Syntax {
        what: e.what,
        offset: e.offset,
    })?;
    let root = Object::of(&doc, &At::Root).map_err(|_| ParseError::Schema {
        at: "report".to_owned(),
        what: "not a JSON object".to_owned(),
    })?;
    let version = match root.get("version") {
        None => {
            return Err(ParseError::Schema {
                at: "report".to_owned(),
                what: "no \"version\" field".to_owned(),
            })
        }
        Some(value::Value::Number(value::Number { whole: Some(v), .. })) => *v,
        Some(_) => return Err(At::Key(&At::Root, "version").not("a whole number")),
    };
    if version != u64::from(VERSION) {
        return Err(ParseError::Version(version));
    }
    let mut report = Report::read_fields(&root)?;
    tree::check(&report.tree)?;
    // A file from before counted sites lacks `timed_calls` (read as
    // `u64::MAX`): every call of it was timed.
    for s in &mut report.sites {
        s.timed_calls = s.timed_calls.min(s.calls);
    }
    Ok(report)
}

mod clock;
mod schema;
mod tree;
pub(crate) mod value;
mod writer;
#[cfg(test)]
use writer::push_f64;
pub(crate) use writer::{push_str_literal, Writer};

#[cfg(test)]
mod tests;
