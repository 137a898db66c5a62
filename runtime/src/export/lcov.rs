//! The LCOV tracefile of the marks: one function record per mark (`FN`,
//! `FNDA`) and a line record (`DA`) for the line of each, read by
//! `lcov --summary` and `genhtml`.

use crate::report::{Report, SiteStats};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The LCOV text of `report`: its rows plus a zero row per mark that never
/// ran ([`Report::coverage`]); one record per source file,
/// `FN:<line>,<name>` and `FNDA:<calls>,<name>` per mark, `FNF`/`FNH`
/// counts, `end_of_record`.
pub fn render(report: &Report) -> String {
    let unused: Vec<SiteStats> = report
        .coverage
        .iter()
        .flat_map(|c| c.never_called.iter().map(SiteStats::never_called))
        .collect();
    records(report.sites.iter().chain(&unused))
}

fn records<'a>(sites: impl Iterator<Item = &'a SiteStats>) -> String {
    let mut files: BTreeMap<&str, Vec<&SiteStats>> = BTreeMap::new();
    for s in sites {
        files.entry(s.file.as_str()).or_default().push(s);
    }
    let mut out = String::from("TN:tickprof\n");
    for (file, mut marks) in files {
        marks.sort_by(|a, b| a.line.cmp(&b.line).then_with(|| a.name.cmp(&b.name)));
        let _ = writeln!(out, "SF:{file}");
        for m in &marks {
            let _ = writeln!(out, "FN:{},{}", m.line.max(1), name(m));
        }
        for m in &marks {
            let _ = writeln!(out, "FNDA:{},{}", m.calls, name(m));
        }
        let hit = marks.iter().filter(|m| m.calls > 0).count();
        let _ = writeln!(out, "FNF:{}\nFNH:{hit}", marks.len());
        // Line records too (lcov 1.x rejects a file without them): the
        // line of each mark, with its calls (summed where marks share one).
        let mut lines: BTreeMap<u32, u64> = BTreeMap::new();
        for m in &marks {
            let c = lines.entry(m.line.max(1)).or_default();
            *c = c.saturating_add(m.calls);
        }
        for (line, calls) in &lines {
            let _ = writeln!(out, "DA:{line},{calls}");
        }
        let lh = lines.values().filter(|c| **c > 0).count();
        let _ = writeln!(out, "LF:{}\nLH:{lh}\nend_of_record", lines.len());
    }
    out
}

/// A function name LCOV can read back: no comma or line break (they
/// delimit its fields).
fn name(s: &SiteStats) -> String {
    s.name
        .chars()
        .map(|c| if c == ',' || c.is_control() { '_' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Coverage, Mark, SiteKind};

    #[test]
    fn one_record_per_file_with_function_counts() {
        let mut r = Report::empty();
        let mut f = crate::export::test_site("f", SiteKind::Function);
        f.file = "a.rs".into();
        f.line = 4;
        r.sites.push(f);
        r.coverage = Some(Coverage {
            marked: 2,
            ran: 1,
            never_called: vec![Mark {
                name: "g, h".into(),
                kind: SiteKind::Function,
                file: "a.rs".into(),
                line: 2,
            }],
        });
        assert_eq!(
            render(&r),
            "TN:tickprof\nSF:a.rs\nFN:2,g_ h\nFN:4,f\nFNDA:0,g_ h\nFNDA:3,f\nFNF:2\nFNH:1\nDA:2,0\nDA:4,3\nLF:2\nLH:1\nend_of_record\n"
        );
    }
}
