//! File outputs, chosen by extension (`TICKPROF_OUT=path[,path…]`).

use crate::report::{Report, TextOptions};
use std::io;

/// Known output extensions, longest first where one ends another.
pub const EXTENSIONS: &[&str] = &[".csv", ".txt"];

/// The extension of `path` that decides its format, if known.
pub fn format_of(path: &str) -> Option<&'static str> {
    EXTENSIONS.iter().copied().find(|e| path.ends_with(e))
}

/// Renders `report` in the format `path`'s extension names.
///
/// # Errors
/// `InvalidInput` for an unknown extension.
pub fn render(report: &Report, path: &str, opts: &TextOptions) -> io::Result<Vec<u8>> {
    match format_of(path) {
        Some(".csv") => Ok(report.to_csv().into_bytes()),
        Some(".txt") => Ok(report.text(opts).into_bytes()),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("unknown extension (known: {})", EXTENSIONS.join(" ")),
        )),
    }
}

/// Writes `report` to `path` in the format its extension names.
///
/// # Errors
/// Unknown extension, or any error creating or writing the file.
pub fn write_to_path(report: &Report, path: &str, opts: &TextOptions) -> io::Result<()> {
    let body = render(report, path, opts)?;
    std::fs::write(path, body)
}
