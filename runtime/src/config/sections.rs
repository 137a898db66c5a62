//! `TICKPROF_REPORT`'s value: the report's layout, sections and header.

use super::values::Value;
use super::{Layout, ReportSections};

/// `TICKPROF_REPORT`: `flat`, `tree`, `coverage`, `verbose`, or a comma
/// list such as `tree,coverage,verbose` (at most one of flat and tree).
pub(super) struct SectionList;

impl Value for SectionList {
    type Out = ReportSections;
    fn parse(&self, s: &str) -> Result<ReportSections, String> {
        let (mut layout, mut coverage, mut verbose) = (None, false, false);
        for word in s.split(',').map(|w| w.trim().to_ascii_lowercase()) {
            match word.as_str() {
                "flat" if layout.is_none() => layout = Some(Layout::Flat),
                "tree" if layout.is_none() => layout = Some(Layout::Tree),
                "coverage" if !coverage => coverage = true,
                "verbose" if !verbose => verbose = true,
                _ => {
                    return Err(
                        "is not flat, tree, coverage, verbose or a comma list of them".into(),
                    )
                }
            }
        }
        Ok(ReportSections {
            layout: layout.unwrap_or(Layout::Flat),
            coverage,
            verbose,
        })
    }
    fn show(&self, v: &ReportSections) -> Option<String> {
        let layout = if v.layout == Layout::Tree {
            "tree"
        } else {
            "flat"
        };
        let mut out = layout.to_owned();
        if v.coverage {
            out.push_str(",coverage");
        }
        if v.verbose {
            out.push_str(",verbose");
        }
        Some(out)
    }
}
