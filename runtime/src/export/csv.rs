//! CSV output (`.csv`): [`CSV_HEADER`], then one line per site in the
//! report's order, rendered from the one table of site columns that the
//! text and HTML tables also use.
//! Fields are quoted as RFC 4180 requires, and a name that a spreadsheet
//! would take for a formula (a custom name starting with `=`, `+`, `-`, `@`)
//! gets a leading `'`.

pub use super::columns::CSV_HEADER;
use super::columns::{Cell, COLUMNS};
use crate::naming::spreadsheet_safe;
use crate::report::Report;
use std::borrow::Cow;
use std::io;

impl Report {
    /// The CSV table: [`CSV_HEADER`], then one line per site in the current
    /// order. Fields are quoted as RFC 4180 requires.
    pub fn to_csv(&self) -> String {
        let mut s = String::with_capacity(64 * (self.sites.len() + 1));
        s.push_str(CSV_HEADER);
        s.push_str("\r\n");
        for site in &self.sites {
            let mut first = true;
            for c in COLUMNS.iter().filter(|c| c.csv.is_some()) {
                if !first {
                    s.push(',');
                }
                first = false;
                match (c.value)(site, self) {
                    Cell::Text(t) => s.push_str(&field(&spreadsheet_safe(t))),
                    other => s.push_str(&other.machine()),
                }
            }
            s.push_str("\r\n");
        }
        s
    }

    /// Writes the CSV table.
    ///
    /// # Errors
    /// Any error of `w`.
    pub fn write_csv(&self, w: &mut dyn io::Write) -> io::Result<()> {
        w.write_all(self.to_csv().as_bytes())
    }
}

/// Quotes a CSV field when it holds a comma, quote, CR or LF (RFC 4180).
pub(crate) fn field(s: &str) -> Cow<'_, str> {
    if s.contains([',', '"', '\r', '\n']) {
        Cow::Owned(format!("\"{}\"", s.replace('"', "\"\"")))
    } else {
        Cow::Borrowed(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(field("a::b"), "a::b");
        assert_eq!(field("Foo<A, B>"), "\"Foo<A, B>\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }

    #[test]
    fn one_line_per_site_with_every_column() {
        let mut r = Report::empty();
        r.sites
            .push(crate::export::test_site("a, b", crate::SiteKind::Function));
        let csv = r.to_csv();
        let lines: Vec<&str> = csv.split("\r\n").collect();
        assert_eq!(lines[0], CSV_HEADER);
        assert!(lines[1].starts_with("\"a, b\",3,"), "{csv}");
        assert_eq!(
            lines[1].matches(',').count(),
            CSV_HEADER.matches(',').count() + 1
        );
    }
}
