//! JSON output (`.json`): the whole [`Report`] with a `"version"` field.
//!
//! The document is the report's fields (`run`, `sites`, `threads`, `tree`,
//! and any added later) at the top level, next to `"version"`. Names are
//! the Rust field names; enums are lower-case strings (`"tsc"`,
//! `"function"`); times are whole nanoseconds except `mean_ns` (a float);
//! `null` stands for `None` (and for a float that is not a number).

use crate::report::Report;
use std::io;

/// The schema version written as `"version"`. It changes only when a
/// field is removed or changes meaning; new fields may appear at any time.
pub const VERSION: u32 = 1;

#[derive(serde::Serialize)]
struct Document<'a> {
    version: u32,
    #[serde(flatten)]
    report: &'a Report,
}

/// The report as a pretty-printed JSON document, ending in a newline.
///
/// # Errors
/// Only if serialization fails, which the report's types never do.
///
/// # Examples
///
/// ```
/// let report = tickprof_runtime::report();
/// let json = tickprof_runtime::export::json::render(&report).unwrap();
/// assert!(std::str::from_utf8(&json).unwrap().contains("\"version\": 1"));
/// ```
pub fn render(report: &Report) -> io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(512 + 512 * report.sites.len());
    write(report, &mut out)?;
    Ok(out)
}

/// Writes the report as a pretty-printed JSON document, ending in a newline.
///
/// # Errors
/// Any error of `w`.
pub fn write(report: &Report, mut w: impl io::Write) -> io::Result<()> {
    let doc = Document {
        version: VERSION,
        report,
    };
    serde_json::to_writer_pretty(&mut w, &doc).map_err(io::Error::from)?;
    w.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_report_has_version_and_every_section() {
        let text = String::from_utf8(render(&Report::empty()).unwrap()).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["version"], 1);
        assert_eq!(v["run"]["clock"], "off");
        assert!(v["sites"].as_array().unwrap().is_empty());
        assert!(v["threads"].as_array().unwrap().is_empty());
        assert!(v["tree"].as_array().unwrap().is_empty());
        assert!(text.ends_with("}\n"));
    }
}
