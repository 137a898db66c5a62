//! The command's inputs: every file is read with a size cap
//! ([`MAX_INPUT`]), and a saved JSON report (`TICKPROF_OUT=run.json`) is
//! read back into the [`Report`] the program had, so that every writer
//! gives what the program would have written. The reading is the
//! runtime's [`json::parse`], driven by the same field list as the writer
//! (it also checks the tree: parents in range and before their children,
//! depths consistent); only `Report::trace` (individual calls, its own
//! `.trace.json` format) is not in the file, and comes back `None`.

use std::io::Read;
use tickprof_runtime::export::json;
use tickprof_runtime::Report;

/// Why a file is not a report this command reads: one line.
pub type Error = String;

/// The largest input file read, in bytes (256 MiB), far above a real
/// report or trace (a 100,000-site report is about 80 MB): above it,
/// or from an endless device such as `/dev/zero`, the command stops with
/// an error instead of filling the memory.
pub const MAX_INPUT: u64 = 256 << 20;

/// The text of the file at `path`, at most `cap` bytes; an error naming
/// the file above that, or if it is not UTF-8.
pub fn text(file_path: &std::path::Path, cap: u64) -> Result<String, Error> {
    let path = file_path.display();
    let too_big = || {
        format!(
            "{path}: larger than {} MiB, the most this command reads",
            cap >> 20
        )
    };
    let file = std::fs::File::open(file_path).map_err(|e| format!("{path}: {e}"))?;
    // A regular file's size is known: refuse before reading.
    if let Ok(m) = file.metadata() {
        if m.is_file() && m.len() > cap {
            return Err(too_big());
        }
    }
    let mut bytes = Vec::new();
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{path}: {e}"))?;
    if bytes.len() as u64 > cap {
        return Err(too_big());
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "{path}: not UTF-8 text (byte {}), so not a tickprof JSON file",
            e.utf8_error().valid_up_to()
        )
    })
}

/// Reads and parses the report saved at `path`.
pub fn read(path: &std::path::Path) -> Result<Report, Error> {
    let text = text(path, MAX_INPUT)?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
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
    fn inputs_are_capped() {
        let dir = std::env::temp_dir().join(format!("tickprof-cap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("big.json");
        std::fs::write(&f, vec![b' '; 3 << 20]).unwrap();
        let p = f.to_str().unwrap();
        assert_eq!(
            text(&f, 2 << 20).unwrap_err(),
            format!("{p}: larger than 2 MiB, the most this command reads")
        );
        assert_eq!(text(&f, 3 << 20).unwrap().len(), 3 << 20);
        std::fs::write(&f, b"{\xff}").unwrap();
        assert_eq!(
            text(&f, 10).unwrap_err(),
            format!("{p}: not UTF-8 text (byte 1), so not a tickprof JSON file")
        );
        let _ = std::fs::remove_dir_all(&dir);
        // A device without end: stopped at the cap.
        if std::path::Path::new("/dev/zero").exists() {
            assert_eq!(
                text(std::path::Path::new("/dev/zero"), 1 << 20).unwrap_err(),
                "/dev/zero: larger than 1 MiB, the most this command reads"
            );
        }
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
