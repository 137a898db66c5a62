//! The text report (stderr at exit, `.txt` files): the header, the site
//! table rendered from the one table of site columns, the notes, and, on
//! request, a caller/callee section per site and a per-thread breakdown.

use super::columns::{self, fmt_bytes, Cell};
use crate::naming::{abbreviate, terminal_safe};
use crate::report::{fmt_ns, ClockSource, Report, SiteStats, TextOptions};
use std::fmt::Write as _;
use std::io;

mod tools;

/// Widest name column of the text table; longer names are abbreviated
/// there (files keep them whole).
pub const NAME_WIDTH: usize = 72;

impl Report {
    /// The text report with default options (all rows, flat table).
    pub fn to_text(&self) -> String {
        self.text(&TextOptions::default())
    }

    /// The text report.
    pub fn text(&self, opts: &TextOptions) -> String {
        let mut s = String::new();
        header(self, &mut s, opts);
        table(self, &mut s, opts);
        for (_, note) in super::notes::notes(self) {
            let _ = writeln!(s, "tickprof: {note}");
        }
        tools::tools(self, &mut s, opts);
        let shown = opts
            .top
            .map_or(self.sites.len(), |t| t.min(self.sites.len()));
        if opts.tree {
            sections(self, &mut s, &self.sites[..shown]);
        }
        if opts.threads {
            threads(self, &mut s);
        }
        s
    }

    /// Writes the text report.
    ///
    /// # Errors
    /// Any error of `w`.
    pub fn write_text(&self, w: &mut dyn io::Write, opts: &TextOptions) -> io::Result<()> {
        w.write_all(self.text(opts).as_bytes())
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The header: the run, the instrumentation, and one line of what the
/// reader must know (an unoptimised build, a clock that is not invariant,
/// marks placed after inlining, faults armed, pauses); with `verbose`
/// (`TICKPROF_REPORT=verbose`), each of those on its own line and the
/// rest: the clock, time waited for a CPU, threads' set-up, the unseen
/// cost of the marks.
fn header(r: &Report, s: &mut String, opts: &TextOptions) {
    let run = &r.run;
    let _ = writeln!(
        s,
        "tickprof: pid {}: {} site{} on {} thread{}; run time {} (wall clock, from start-up or the last reset)",
        run.pid,
        r.sites.len(),
        plural(r.sites.len()),
        run.threads,
        plural(run.threads),
        fmt_ns(run.wall_ns as f64)
    );
    let on = run.clock != ClockSource::Off;
    let mut notes: Vec<String> = Vec::new();
    if on && run.debug_build {
        notes.push(
            "unoptimised build (debug assertions on): every figure is far above a release build's"
                .into(),
        );
    }
    if on && !opts.verbose && run.clock == ClockSource::Tsc && run.invariant_tsc == Some(false) {
        notes.push(format!("invariant TSC: {NOT_INVARIANT}"));
    }
    if let Some((marked, inlined)) = opts.after_inlining {
        notes.push(format!(
            "cargo tickprof marked the {marked} functions the unmarked build keeps as functions of their own, {inlined} left inlined into them (their time is their callers', sampled on inlined rows)"
        ));
    }
    if let Some(f) = tools::faults(r) {
        notes.push(f);
    }
    if run.pauses > 0 {
        notes.push(format!(
            "recording paused {} time{}, {} in all (calls made while paused are not counted)",
            run.pauses,
            plural(usize::try_from(run.pauses).unwrap_or(usize::MAX)),
            fmt_ns(run.paused_ns as f64)
        ));
    }
    if !opts.verbose {
        if on {
            let _ = writeln!(s, "tickprof: {}", instrumentation_line(run));
        }
        if !notes.is_empty() {
            let _ = writeln!(s, "tickprof: {}", notes.join("; "));
        }
        return;
    }
    for note in &notes {
        let _ = writeln!(s, "tickprof: {note}");
    }
    if !on {
        return;
    }
    // Invariance is a TSC's fact: no other clock is said to have it.
    let inv = match (run.clock, run.invariant_tsc) {
        (ClockSource::Tsc, Some(true)) => "; invariant TSC: yes".to_owned(),
        (ClockSource::Tsc, Some(false)) => format!("; invariant TSC: {NOT_INVARIANT}"),
        (ClockSource::Tsc, None) => "; invariant TSC: unknown".to_owned(),
        _ => String::new(),
    };
    let _ = writeln!(
        s,
        "tickprof: clock {} at {} ({}){inv}",
        run.clock.label(),
        crate::report::fmt_hz(run.frequency_hz),
        run.frequency_source,
    );
    let _ = writeln!(s, "tickprof: {}", instrumentation_line(run));
    if let Some(note) = run.unseen_cost_note() {
        let _ = writeln!(s, "tickprof: {note}");
    }
    if run.waited_ns > 0 {
        let _ = writeln!(
            s,
            "tickprof: the threads waited {} for a CPU other programs held (in the times below, as in a wall clock's)",
            fmt_ns(run.waited_ns as f64)
        );
    }
    if run.setup_ns > 0 {
        let _ = writeln!(
            s,
            "tickprof: setting up {} thread{} at {} first marked call took {} in all, outside every call's time",
            run.setup_threads,
            if run.setup_threads == 1 { "" } else { "s" },
            if run.setup_threads == 1 { "its" } else { "their" },
            fmt_ns(run.setup_ns as f64)
        );
    }
}

/// What the header says of a TSC that is not invariant.
const NOT_INVARIANT: &str = "NO (ticks may not be comparable across cores or power states)";

/// The header's line on the instrumentation: what the sampler measured of
/// it, and whether the figures have it taken out.
fn instrumentation_line(run: &crate::report::RunInfo) -> String {
    if run.sampled_ns == 0 {
        return format!(
            "instrumentation {}: times are raw, with the instrumentation's cost in them",
            run.calibration
        );
    }
    let taken = if run.compensated {
        "taken out of every time below (TICKPROF_COMPENSATE=0 for raw times)"
    } else {
        "left in the times below (raw: TICKPROF_COMPENSATE=off)"
    };
    if !crate::report::instrumentation_measured(run.instrumentation_ns, run.sample_hz) {
        // Found in fewer than MIN_FOUND periods: a bound, not a figure.
        let periods = crate::report::MIN_FOUND;
        let bound = periods * 1e9 / run.sample_hz.max(1) as f64;
        let kept = if run.compensated {
            "too little to take out: the times below have only each timed call's calibrated cost taken out (TICKPROF_COMPENSATE=0 for raw times)"
        } else {
            "left in the times below (raw: TICKPROF_COMPENSATE=off)"
        };
        return format!(
            "instrumentation {}: {} of the recording threads' {}, fewer samples than it takes to measure it ({periods} periods, {}: under {:.1}% of that time); what was found is {kept}",
            run.calibration,
            fmt_ns(run.instrumentation_ns as f64),
            fmt_ns(run.sampled_ns as f64),
            fmt_ns(bound),
            100.0 * bound / run.sampled_ns.max(1) as f64,
        );
    }
    format!(
        "instrumentation {}: {:.1}% of the recording threads' time ({} of {}), {} per marked call{}; {taken}",
        run.calibration,
        100.0 * run.overhead_share,
        fmt_ns(run.instrumentation_ns as f64),
        fmt_ns(run.sampled_ns as f64),
        fmt_ns(run.overhead_call_ns),
        per_kind(run),
    )
}

/// ` (X a timed call, Y a counted one)` where calls were counted and each
/// kind's cost was measured; else nothing (every call the same).
pub(crate) fn per_kind(run: &crate::report::RunInfo) -> String {
    run.per_kind_apart_ns()
        .map_or_else(String::new, |(timed, counted)| {
            format!(
                " ({} a timed call, {})",
                fmt_ns(timed),
                counted_cost(counted)
            )
        })
}

/// A counted call's measured cost, or, at 0, that too little was found
/// to measure it: the sampler found less instrumentation than the timed
/// calls' calibrated cost, which the timed calls keep first (see
/// `build::instrumentation`), or none in counted calls' own few
/// instructions. 0 there is not a measurement: semver's whole-crate run
/// read 0 in 4 of 8 identical runs and 0.27–0.40 ns in the others.
pub(crate) fn counted_cost(ns: f64) -> String {
    if ns > 0.0 {
        format!("{} a counted one", fmt_ns(ns))
    } else {
        format!("a counted one: {}", super::notes::UNMEASURED)
    }
}

fn table(r: &Report, s: &mut String, opts: &TextOptions) {
    let shown = opts.top.map_or(r.sites.len(), |t| t.min(r.sites.len()));
    let rows = &r.sites[..shown];
    let cols = columns::shown(r);
    let outside_w = if r.run.alloc_installed {
        columns::OUTSIDE.len()
    } else {
        4
    };
    let name_w = rows
        .iter()
        .map(|x| x.name.chars().count())
        .max()
        .unwrap_or(4)
        .max(outside_w)
        .clamp(4, NAME_WIDTH);
    let mut line = String::new();
    for (i, c) in cols.iter().enumerate() {
        if i == 0 {
            let _ = write!(line, "{:<name_w$}", c.label);
        } else {
            let _ = write!(line, "  {:>w$}", c.label, w = c.width);
        }
    }
    s.push_str(line.trim_end());
    s.push('\n');
    for x in rows {
        line.clear();
        for (i, c) in cols.iter().enumerate() {
            let cell = columns::table_cell(c, x, r);
            if i == 0 {
                let _ = write!(line, "{:<name_w$}", fit(&x.name, name_w));
            } else {
                let v = cell.map_or_else(|| "-".to_owned(), |v: Cell<'_>| v.human());
                let _ = write!(line, "  {:>w$}", v, w = c.width);
            }
        }
        s.push_str(line.trim_end());
        s.push('\n');
    }
    if r.run.alloc_installed {
        outside_row(r, s, &cols, name_w);
    }
    if shown < r.sites.len() {
        let _ = writeln!(
            s,
            "tickprof: {} more site{} not shown (TICKPROF_TOP={})",
            r.sites.len() - shown,
            plural(r.sites.len() - shown),
            shown
        );
    }
}

/// The `<outside marked calls>` row: allocations made outside any marked
/// call, `-` in the time columns.
fn outside_row(r: &Report, s: &mut String, cols: &[&columns::Column], name_w: usize) {
    let mut line = String::new();
    let _ = write!(line, "{:<name_w$}", columns::OUTSIDE);
    for c in cols.iter().skip(1) {
        let v = columns::outside_cell(c, &r.run.outside)
            .map_or_else(|| "-".to_owned(), |v: Cell<'_>| v.human());
        let _ = write!(line, "  {:>w$}", v, w = c.width);
    }
    s.push_str(line.trim_end());
    s.push('\n');
}

/// A name for one cell of the text table: on one line, terminal-safe, at
/// most `width` characters.
fn fit(name: &str, width: usize) -> String {
    abbreviate(&terminal_safe(name), width).into_owned()
}

fn sections(r: &Report, s: &mut String, rows: &[SiteStats]) {
    let wall = r.run.wall_ns.max(1) as f64;
    for x in rows {
        let per = |ns: u64| x.per_call(ns);
        let _ = writeln!(
            s,
            "\n== {} ({}:{})",
            fit(&x.name, 4 * NAME_WIDTH),
            x.file,
            x.line
        );
        let _ = writeln!(
            s,
            "   calls {}   total {} ({:.1}% of run, {} per call)   self {} ({:.1}% of run, {} per call)",
            x.calls,
            fmt_ns(x.total_ns as f64),
            100.0 * x.total_ns as f64 / wall,
            fmt_ns(per(x.total_ns)),
            fmt_ns(x.self_ns as f64),
            100.0 * x.self_ns as f64 / wall,
            fmt_ns(per(x.self_ns))
        );
        if r.run.alloc_installed {
            let (t, o) = (&x.alloc, &x.self_alloc);
            let _ = writeln!(
                s,
                "   allocs {} (self {})   bytes {} (self {})   frees {} (self {})   freed {} (self {})",
                t.allocs,
                o.allocs,
                fmt_bytes(t.bytes),
                fmt_bytes(o.bytes),
                t.frees,
                o.frees,
                fmt_bytes(t.freed_bytes),
                fmt_bytes(o.freed_bytes)
            );
        }
        for (label, edges) in [("called by", &x.callers), ("calls    ", &x.callees)] {
            for e in edges {
                let _ = writeln!(
                    s,
                    "   {label}  {:<48} {:>10} calls  {:>10}",
                    fit(&e.name, 48),
                    e.calls,
                    fmt_ns(e.total_ns as f64)
                );
            }
        }
    }
}

fn threads(r: &Report, s: &mut String) {
    for t in &r.threads {
        let _ = match (t.finished, t.count) {
            (false, _) => writeln!(s, "\n-- thread {} (#{})", terminal_safe(&t.name), t.id),
            (true, 1) => writeln!(
                s,
                "\n-- thread {} (#{}, finished)",
                terminal_safe(&t.name),
                t.id
            ),
            (true, n) => writeln!(
                s,
                "\n-- threads {} (x{n} finished, first #{})",
                terminal_safe(&t.name),
                t.id
            ),
        };
        for x in &t.sites {
            let _ = write!(
                s,
                "   {:<56} {:>10} calls  total {:>10}  self {:>10}",
                fit(&x.name, 56),
                x.calls,
                fmt_ns(x.total_ns as f64),
                fmt_ns(x.self_ns as f64)
            );
            if r.run.alloc_installed {
                let _ = write!(
                    s,
                    "  allocs {:>9}  bytes {:>10}",
                    x.alloc.allocs,
                    fmt_bytes(x.alloc.bytes)
                );
            }
            s.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_names_stay_on_one_line_and_show_bidi_controls() {
        assert_eq!(fit("plain", 10), "plain");
        assert_eq!(fit("two\nlines\ttab", 20), "two lines tab");
        assert!(!fit("evil\u{202e}txt", 30).contains('\u{202e}'));
    }

    #[test]
    fn long_names_are_abbreviated_to_the_column() {
        let long = "a".repeat(50) + &"b".repeat(50);
        let f = fit(&long, 20);
        assert_eq!(f.chars().count(), 20);
        assert!(f.starts_with('a') && f.ends_with('b') && f.contains('…'));
        assert_eq!(fit("short", 20), "short");
    }

    #[test]
    fn table_columns_line_up() {
        let mut r = Report::empty();
        r.sites
            .push(crate::export::test_site("short", crate::SiteKind::Function));
        r.sites.push(crate::export::test_site(
            &"x".repeat(200),
            crate::SiteKind::Function,
        ));
        let text = r.to_text();
        let lines: Vec<&str> = text.lines().skip(1).take(3).collect();
        let width = |l: &str| l.chars().count();
        assert_eq!(width(lines[1]), width(lines[2]), "{text}");
        assert!(
            lines[0].starts_with("name") && lines[0].contains("p_self"),
            "{text}"
        );
    }

    #[test]
    fn the_outside_row_lines_up_with_the_allocation_columns() {
        let mut r = Report::empty();
        r.run.alloc_installed = true;
        r.run.outside.allocs = 12;
        r.run.outside.bytes = 2048;
        let mut site = crate::export::test_site("f", crate::SiteKind::Function);
        site.alloc.allocs = 3;
        r.sites.push(site);
        let text = r.to_text();
        let lines: Vec<&str> = text.lines().skip(1).take(3).collect();
        assert!(lines[0].ends_with("allocs       bytes"), "{text}");
        assert!(lines[2].starts_with("<outside marked calls>  "), "{text}");
        assert!(lines[2].ends_with("12     2.0 KiB"), "{text}");
        let width = |l: &str| l.chars().count();
        assert_eq!(width(lines[0]), width(lines[2]), "{text}");
    }

    /// A run whose instrumentation the sampler measured at 10% or more
    /// says what that share leaves out, on a line of its own; a smaller
    /// share, a share too rarely found to measure, or raw times: no line.
    #[test]
    fn a_large_instrumentation_share_says_what_it_leaves_out() {
        let note = |share: f64, inside_ns: u64, compensated: bool| {
            let mut r = Report::empty();
            (r.run.clock, r.run.frequency_hz) = (ClockSource::Tsc, 1e9);
            r.run.sample_hz = 1000;
            r.run.sampled_ns = 100_000_000;
            r.run.instrumentation_ns = inside_ns;
            r.run.overhead_share = share;
            r.run.compensated = compensated;
            let text = r.text(&TextOptions::default().with_verbose(true));
            text.lines()
                .any(|l| l.starts_with("tickprof: the marks also slow the program's own code"))
        };
        assert!(note(0.62, 62_000_000, true));
        assert!(note(0.10, 10_000_000, true));
        assert!(!note(0.045, 4_500_000, true));
        // Found in fewer than 4 sampling periods: not measured.
        assert!(!note(0.5, 3_000_000, true));
        assert!(!note(0.62, 62_000_000, false));
    }

    /// The header is three lines at most, whatever the run: the run, the
    /// instrumentation, one line of notes; verbose, every line.
    #[test]
    fn the_header_is_three_lines_unless_verbose() {
        let mut r = Report::empty();
        (r.run.clock, r.run.frequency_hz) = (ClockSource::Tsc, 1e9);
        r.run.frequency_source = "stated".into();
        r.run.invariant_tsc = Some(false);
        r.run.debug_build = true;
        (r.run.pauses, r.run.paused_ns) = (2, 5_000);
        (r.run.waited_ns, r.run.setup_ns, r.run.setup_threads) = (7_000, 3_000, 1);
        r.faults = Some(crate::report::Faults {
            seed: 3,
            sites: Vec::new(),
        });
        let mut opts = TextOptions {
            after_inlining: Some((7, 11)),
            ..TextOptions::default()
        };
        let header = |r: &Report, opts: &TextOptions| -> Vec<String> {
            let mut s = String::new();
            header(r, &mut s, opts);
            s.lines().map(str::to_owned).collect()
        };
        let short = header(&r, &opts);
        assert_eq!(short.len(), 3, "{short:#?}");
        assert!(
            short[1].starts_with("tickprof: instrumentation "),
            "{short:#?}"
        );
        for part in [
            "tickprof: unoptimised build",
            "; invariant TSC: NO",
            "; cargo tickprof marked the 7 functions",
            "11 left inlined",
            "; faults armed (TICKPROF_FAIL_SEED=3), 0 injected",
            "; recording paused 2 times, 5.00 µs in all",
        ] {
            assert!(short[2].contains(part), "{part}: {short:#?}");
        }
        opts.verbose = true;
        let long = header(&r, &opts);
        assert_eq!(long.len(), 9, "{long:#?}");
        for start in [
            "tickprof: clock ",
            "tickprof: the threads waited 7.00 µs",
            "tickprof: setting up 1 thread",
        ] {
            assert!(
                long.iter().any(|l| l.starts_with(start)),
                "{start}: {long:#?}"
            );
        }
        // Nothing to note: two lines.
        r.faults = None;
        (r.run.debug_build, r.run.invariant_tsc, r.run.pauses) = (false, Some(true), 0);
        let plain = header(&r, &TextOptions::default());
        assert_eq!(plain.len(), 2, "{plain:#?}");
    }

    #[test]
    fn the_clock_line_names_the_counter_and_claims_invariance_for_a_tsc_only() {
        let line = |clock, hz, invariant_tsc| {
            let mut r = Report::empty();
            r.run.clock = clock;
            r.run.frequency_hz = hz;
            r.run.frequency_source = "stated".into();
            r.run.invariant_tsc = invariant_tsc;
            let text = r.text(&TextOptions::default().with_verbose(true));
            let clock = text.lines().find(|l| l.starts_with("tickprof: clock"));
            clock.unwrap_or_default().to_owned()
        };
        assert_eq!(
            line(ClockSource::Tsc, 2.596e9, Some(true)),
            "tickprof: clock rdtsc at 2.596 GHz (stated); invariant TSC: yes"
        );
        assert_eq!(
            line(ClockSource::Cntvct, 24e6, None),
            "tickprof: clock cntvct_el0 at 24.000 MHz (stated)"
        );
        // Whatever is set: only a TSC is said to be invariant.
        assert_eq!(
            line(ClockSource::Monotonic, 1e9, Some(true)),
            "tickprof: clock monotonic clock at 1.000 GHz (stated)"
        );
    }
}
