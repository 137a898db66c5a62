//! The text report's lines for the call-monitor tools: coverage (a summary
//! under the table, the list on request) and faults injected.

use crate::naming::terminal_safe;
use crate::report::{Report, TextOptions};
use std::fmt::Write as _;

/// `tickprof: faults armed (TICKPROF_FAIL_SEED=…)`, in the header, when
/// a failpoint table was armed during the run.
pub(super) fn faults_header(r: &Report, s: &mut String) {
    if let Some(f) = &r.faults {
        let _ = writeln!(
            s,
            "tickprof: faults armed (TICKPROF_FAIL_SEED={}); {} injected",
            f.seed,
            f.total()
        );
    }
}

/// The coverage summary line (and, with `opts.coverage`, the marks that
/// never ran, by file and line), then the faults injected per site.
pub(super) fn tools(r: &Report, s: &mut String, opts: &TextOptions) {
    if let Some(c) = r.coverage.as_ref().filter(|c| c.marked > 0) {
        let never = c.never_called.len();
        if never == 0 {
            let _ = writeln!(
                s,
                "tickprof: coverage: all {} marked functions ran",
                c.marked
            );
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
    if let Some(f) = r.faults.as_ref().filter(|f| f.total() > 0) {
        let _ = writeln!(s, "tickprof: faults injected:");
        for (name, n) in &f.sites {
            let _ = writeln!(s, "  {n:>8}  {}", terminal_safe(name));
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
    fn faults_show_only_when_any_fired() {
        let mut r = Report::empty();
        r.faults = Some(Faults {
            seed: 7,
            sites: Vec::new(),
        });
        let mut s = String::new();
        tools(&r, &mut s, &TextOptions::default());
        assert_eq!(s, "");
        faults_header(&r, &mut s);
        assert_eq!(
            s,
            "tickprof: faults armed (TICKPROF_FAIL_SEED=7); 0 injected\n"
        );
        r.faults = Some(Faults {
            seed: 7,
            sites: vec![("a::x".into(), 3)],
        });
        let mut s = String::new();
        tools(&r, &mut s, &TextOptions::default());
        assert_eq!(s, "tickprof: faults injected:\n         3  a::x\n");
    }
}
