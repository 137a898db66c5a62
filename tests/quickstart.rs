//! The README's sample report has the shape of the quickstart's report:
//! the quickstart (`examples/quickstart.rs`, included here whole, so its
//! sites have the same names) runs in a child process, and its stderr and
//! the README's sample must have the same header lines (up to their first
//! figure), the same column header, the same rows (names and number of
//! cells; not their order, which follows the figures) and the same lines
//! under the table (those that do not start with a count). Figures are not
//! compared.
//!
//! The sample is the block between `<!-- quickstart-report:begin -->` and
//! `<!-- quickstart-report:end -->` in README.md, and nowhere else. To
//! regenerate it from a release run of the quickstart:
//! `bash scripts/readme_sample.sh` (it sets `TPTEST_BLESS` to the report's
//! file; this test then checks that report's shape and writes it in).
#![cfg(feature = "enabled")]

include!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../examples/quickstart.rs"
));

use crate::support::child;

const CHILD: &str = "TPTEST_QUICKSTART_CHILD";
const README: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md");
const BEGIN: &str = "<!-- quickstart-report:begin -->\n```text\n";
const END: &str = "```\n<!-- quickstart-report:end -->";

/// The child: the quickstart's `main`, its exit report on stderr.
#[test]
fn child_workload() {
    if std::env::var(CHILD).is_ok() {
        main();
    }
}

/// What the README's sample and the program's report must share.
#[derive(Debug, PartialEq)]
struct Shape {
    /// The lines above the table, each up to its first digit.
    header: Vec<String>,
    /// The column names.
    columns: String,
    /// Each row's name and number of cells.
    rows: std::collections::BTreeMap<String, usize>,
    /// The lines under the table that do not start with a count, each up
    /// to its first digit (a count-first note, such as a call path raised
    /// to its children's total, comes and goes with the figures).
    trailer: Vec<String>,
}

/// `line` up to its first digit.
fn key(line: &str) -> String {
    line[..line
        .find(|c: char| c.is_ascii_digit())
        .unwrap_or(line.len())]
        .to_owned()
}

fn shape(report: &str) -> Shape {
    // This test's build has debug assertions on (the test profile), which
    // a header line says; the README's release build has not.
    let lines: Vec<&str> = report
        .lines()
        .skip_while(|l| !l.starts_with("tickprof: pid "))
        .filter(|l| !l.starts_with("tickprof: unoptimised build"))
        // Lines a run prints or not by chance: waits for a CPU (a busy
        // machine), the instrumentation's costliest marks (found in four
        // sampling periods or not, in a run of a fifth of a second).
        .filter(|l| {
            !l.starts_with("tickprof: the threads waited")
                && !l.starts_with("tickprof: costliest marks")
        })
        // The coverage line counts every mark of the binary: this test's
        // (tests/all.rs) holds the other test modules' too.
        .filter(|l| !l.starts_with("tickprof: coverage: "))
        .collect();
    let table = lines
        .iter()
        .position(|l| l.starts_with("name "))
        .unwrap_or_else(|| panic!("no column header in\n{report}"));
    let end = lines[table..]
        .iter()
        .position(|l| l.starts_with("tickprof: "))
        .map_or(lines.len(), |n| table + n);
    let rows = lines[table + 1..end]
        .iter()
        .map(|l| {
            let mut cells = l.split_whitespace();
            // The quickstart's names, as in its own binary: here it is a
            // module of tests/all.rs.
            let name = cells.next().expect("a name");
            let name = name.strip_prefix("all::").unwrap_or(name).to_owned();
            (name, cells.count())
        })
        .collect();
    let trailer = lines[end..]
        .iter()
        .filter(|l| {
            !l.strip_prefix("tickprof: ")
                .is_some_and(|t| t.starts_with(|c: char| c.is_ascii_digit()))
        })
        .map(|l| key(l))
        .collect();
    Shape {
        header: lines[..table].iter().map(|l| key(l)).collect(),
        columns: lines[table]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
        rows,
        trailer,
    }
}

/// The README and its sample report.
fn readme() -> (String, String) {
    let text = std::fs::read_to_string(README).expect("README.md is readable");
    let start = text
        .find(BEGIN)
        .expect("README.md has the quickstart-report block")
        + BEGIN.len();
    let len = text[start..].find(END).expect("the block's end");
    let sample = text[start..start + len].to_owned();
    (text, sample)
}

#[test]
fn the_readmes_sample_has_the_shape_of_the_quickstarts_report() {
    let (out, report) = child::run(CHILD, "1", &[]);
    assert!(out.status.success(), "{report}");
    let ours = shape(&report);
    assert!(ours.rows.len() >= 8, "{report}");
    let (text, sample) = readme();
    if let Some(file) = std::env::var_os("TPTEST_BLESS") {
        // A release run's report, checked, then written into the block.
        let new = std::fs::read_to_string(&file).expect("the report file");
        let new: Vec<&str> = new
            .lines()
            .skip_while(|l| !l.starts_with("tickprof: pid "))
            .collect();
        let new = new.join("\n") + "\n";
        assert_eq!(shape(&new), ours, "the report in {file:?}");
        let (start, end) = (
            text.find(BEGIN).unwrap() + BEGIN.len(),
            text.find(END).unwrap(),
        );
        std::fs::write(README, format!("{}{new}{}", &text[..start], &text[end..]))
            .expect("README.md is writable");
        return;
    }
    assert_eq!(
        shape(&sample),
        ours,
        "README.md's sample report no longer has the shape of the quickstart's \
         (bash scripts/readme_sample.sh regenerates it); the quickstart printed:\n{report}"
    );
}

/// The sample shows what a newcomer's first program shows: a counted site
/// (`~` figures, self 0) and the line that explains it.
#[test]
fn the_readmes_sample_shows_a_counted_site() {
    let (_, sample) = readme();
    let counted = sample
        .lines()
        .find(|l| l.starts_with("quickstart::is_error "))
        .expect("the counted site's row");
    assert!(counted.contains("  ~"), "{counted}");
    assert!(
        sample.contains(" counted (TICKPROF_TIME): "),
        "the note on counted sites:\n{sample}"
    );
}
