//! The text report's lines for the call-monitor tools: coverage (a summary
//! under the table, the list on request) and the faults line of the
//! header.

use crate::naming::terminal_safe;
use crate::report::{Report, TextOptions};
use std::fmt::Write as _;

/// `faults armed (TICKPROF_FAIL_SEED=…), N injected`, for the header,
/// when a failpoint table was armed during the run.
pub(super) fn faults(r: &Report) -> Option<String> {
    r.faults.as_ref().map(|f| {
        format!(
            "faults armed (TICKPROF_FAIL_SEED={}), {} injected",
            f.seed,
            f.total()
        )
    })
}

/// The coverage summary line (and, with `opts.coverage`, the marks that
/// never ran, by file and line). (Faults per site are a column of the
/// table, shown when any fired.)
pub(super) fn tools(r: &Report, s: &mut String, opts: &TextOptions) {
    if let Some(c) = r.coverage.as_ref().filter(|c| c.marked > 0) {
        let never = c.never_called.len();
        if never == 0 {
            let _ = if c.marked == 1 {
                writeln!(s, "tickprof: coverage: the 1 marked function ran")
            } else {
                writeln!(
                    s,
                    "tickprof: coverage: all {} marked functions ran",
                    c.marked
                )
            };
        } else {
            let hint = if opts.coverage {
                ":"
            } else {
                " (TICKPROF_REPORT=coverage lists them)"
            };
            let _ = writeln!(
                s,
                "tickprof: coverage: {} of {} marked functions ran; {never} never called{hint}",
                c.ran, c.marked
            );
        }
        if opts.coverage {
            for m in &c.never_called {
                let _ = writeln!(
                    s,
                    "  {}  {}:{}",
                    terminal_safe(&m.name),
                    terminal_safe(&m.file),
                    m.line
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Coverage, Faults, Mark, SiteKind};

    fn report() -> Report {
        let mut r = Report::empty();
        r.coverage = Some(Coverage {
            marked: 3,
            ran: 1,
            never_called: ["a::x", "a::y"]
                .iter()
                .enumerate()
                .map(|(i, n)| Mark {
                    name: (*n).to_owned(),
                    kind: SiteKind::Function,
                    file: "src/a.rs".into(),
                    line: 10 + i as u32,
                })
                .collect(),
        });
        r
    }

    #[test]
    fn summary_line_and_list_on_request() {
        let r = report();
        let mut s = String::new();
        tools(&r, &mut s, &TextOptions::default());
        assert_eq!(
            s,
            "tickprof: coverage: 1 of 3 marked functions ran; 2 never called (TICKPROF_REPORT=coverage lists them)\n"
        );
        let mut s = String::new();
        let opts = TextOptions {
            coverage: true,
            ..TextOptions::default()
        };
        tools(&r, &mut s, &opts);
        assert_eq!(
            s,
            "tickprof: coverage: 1 of 3 marked functions ran; 2 never called:\n  a::x  src/a.rs:10\n  a::y  src/a.rs:11\n"
        );
    }

    #[test]
    fn when_every_mark_ran_the_line_says_so_in_the_singular_too() {
        let mut r = Report::empty();
        for (marked, line) in [
            (1, "tickprof: coverage: the 1 marked function ran\n"),
            (4, "tickprof: coverage: all 4 marked functions ran\n"),
        ] {
            r.coverage = Some(Coverage {
                marked,
                ran: marked,
                never_called: Vec::new(),
            });
            let mut s = String::new();
            tools(&r, &mut s, &TextOptions::default());
            assert_eq!(s, line);
        }
    }

    #[test]
    fn the_faults_header_names_the_seed_and_the_column_shows_when_any_fired() {
        let mut r = Report::empty();
        r.faults = Some(Faults {
            seed: 7,
            sites: Vec::new(),
        });
        assert_eq!(
            faults(&r).as_deref(),
            Some("faults armed (TICKPROF_FAIL_SEED=7), 0 injected")
        );
        let has_column = |r: &Report| {
            crate::export::columns::shown(r)
                .iter()
                .any(|c| c.label == "faults")
        };
        assert!(!has_column(&r));
        r.faults = Some(Faults {
            seed: 7,
            sites: vec![("a::x".into(), 3)],
        });
        assert!(has_column(&r));
        r.sites.push(crate::export::test_site(
            "a::x",
            crate::report::SiteKind::Function,
        ));
        let text = r.text(&TextOptions::default());
        let header = text.lines().find(|l| l.starts_with("name ")).unwrap();
        let row = text.lines().find(|l| l.starts_with("a::x ")).unwrap();
        assert!(header.trim_end().ends_with("faults"), "{text}");
        assert!(row.trim_end().ends_with(" 3"), "{text}");
    }
}
