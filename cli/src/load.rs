//! A saved JSON report (`TICKPROF_OUT=run.json`) read back into the
//! [`Report`] the program had, so that every writer gives what the program
//! would have written. The reading is the runtime's
//! [`json::parse`], driven by the
//! same field list as the writer; only `Report::trace` (individual calls,
//! its own `.trace.json` format) is not in the file, and comes back `None`.

use tickprof_runtime::export::json;
use tickprof_runtime::Report;

/// Why a file is not a report this command reads: one line.
pub type Error = String;

/// Reads and parses the report saved at `path`.
pub fn read(path: &std::path::Path) -> Result<Report, Error> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: {e}"))?;
    parse(&text).map_err(|e| format!("{shown}: {e}"))
}

/// Parses a saved report.
pub fn parse(text: &str) -> Result<Report, Error> {
    json::parse(text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report with every kind of field set.
    fn sample() -> Report {
        let text = include_str!("../tests/data/before.json");
        parse(text).expect("the sample parses")
    }

    #[test]
    fn a_report_read_back_writes_the_same_json() {
        let text = include_str!("../tests/data/before.json");
        let again = json::render(&sample()).unwrap();
        assert_eq!(std::str::from_utf8(&again).unwrap(), text);
    }

    #[test]
    fn bad_input_is_one_line_saying_what_is_wrong() {
        let cases = [
            ("[1]", "not a tickprof JSON report (not a JSON object)"),
            ("{}", "not a tickprof JSON report (no \"version\" field)"),
            (
                "{\"version\": 9}",
                "JSON report version 9; this tickprof reads version 1",
            ),
            (
                "{\"version\": 1, \"run\": {}}",
                "not a tickprof JSON report (run: no \"clock\")",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(parse(text).err().as_deref(), Some(want), "{text}");
        }
        let e = parse("nope").unwrap_err();
        assert_eq!(
            e,
            "not a tickprof JSON report (not JSON: expected a value at byte 0)"
        );
        assert!(!e.contains('\n'));
    }
}
