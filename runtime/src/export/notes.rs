//! The notes under the site table: one line each, for what the reader
//! must know to trust the figures. The text and HTML reports print the
//! same list.

use super::columns::plural;
use crate::report::{fmt_ns, Report};

/// A note under the table: whether it warns ([`WARN`]: something was
/// lost or may be wrong, as rejected times, lost calls, dropped events) or
/// informs ([`INFORM`]: how figures were made, as counted sites, `~`,
/// adjusted paths, the instrumentation's cost), and its text.
pub(crate) type Note = (bool, String);
pub(crate) const WARN: bool = true;
pub(crate) const INFORM: bool = false;

/// The notes under the table: one line each, for what the reader must
/// know to trust the figures (rejections, unwinding, out-of-order guards,
/// folded or lost calls, adjusted tree nodes, dropped trace events, a
/// possibly incomplete report). Plain text, no leading `tickprof: `.
pub(crate) fn notes(report: &Report) -> Vec<Note> {
    let mut v = Vec::new();
    let r = &report.run;
    // Saturating: a report read from a file may hold any values.
    let total = |f: fn(&crate::report::SiteStats) -> u64| {
        report
            .sites
            .iter()
            .fold(0u64, |a, x| a.saturating_add(f(x)))
    };
    let (reversed, oversized, unwound) = (
        total(|x| x.reversed),
        total(|x| x.oversized),
        total(|x| x.unwound),
    );
    let rejected = reversed.saturating_add(oversized);
    if rejected > 0 {
        v.push((WARN, format!(
            "rejected {} call{} ({reversed} reversed, {oversized} longer than {}): counted, times not added",
            rejected,
            plural(rejected),
            fmt_ns(r.max_delta_ns as f64)
        )));
    }
    if unwound > 0 {
        v.push((
            INFORM,
            format!(
                "{unwound} call{} ended by a panic (unwound); their time is included",
                plural(unwound)
            ),
        ));
    }
    let counted = [
        (
            r.out_of_order,
            "guard",
            "dropped out of order; the stack was resynchronised",
        ),
        (
            r.folded_calls,
            "call",
            "folded into overflow nodes (calling-context tree full, TICKPROF_MAX_NODES)",
        ),
        (
            r.lost,
            "call",
            "ended after their thread's profiler state was gone; not recorded",
        ),
        (
            r.reentrant,
            "call",
            "made from inside tickprof's own bookkeeping; not recorded",
        ),
        (
            r.leaked,
            "guard",
            "never dropped (leaked or forgotten) on threads that exited; their threads' later calls were recorded beneath them",
        ),
        (
            r.clamped,
            "call path",
            "held at the clock's resolution a call: less the instrumentation estimated inside, its time came out below it",
        ),
        (
            r.carried,
            "call path",
            "raised to the total of the marked calls inside: measured shorter than them",
        ),
        (
            r.trace_dropped,
            "trace event",
            "dropped past TICKPROF_TRACE_EVENTS per thread (counted, not stored)",
        ),
        (
            r.push_failed,
            "profile",
            "not pushed: TICKPROF_PUSH's receiver refused, failed or did not answer",
        ),
        (
            r.push_dropped,
            "profile",
            "not pushed: dropped from TICKPROF_PUSH's full queue",
        ),
    ];
    for (n, what, says) in counted {
        if n > 0 {
            let text = format!("{n} {what}{} {says}", plural(n));
            // Adjusted call paths inform; lost or dropped events warn.
            v.push((what != "call path", text));
        }
    }
    // Counted sites have their own note.
    let unresolved = report
        .sites
        .iter()
        .filter(|x| !x.resolved && x.timing == crate::report::Timing::Timed)
        .count() as u64;
    if unresolved > 0 {
        v.push((INFORM, format!(
            "{unresolved} site{} marked ~: calls shorter than twice the clock's resolution ({}), below what TSC instrumentation can resolve; their times are estimates",
            plural(unresolved),
            fmt_ns(r.overhead_inner_ns)
        )));
    }
    if r.counted_sites > 0 {
        let whose = if r.sampled_ns == 0 {
            "unsampled (no sampler's figures): their timed calls' mean times their calls, those outside any timed call held together within the threads times the wall time"
        } else {
            "the sampler's: the time it found them on top of the stack (self) and inside them (total)"
        };
        v.push((INFORM, format!(
            "{} site{} counted (TICKPROF_TIME): {} call{} counted without reading the clock; their times (~) are {whose}; their percentiles, their first calls' (timed while the site was decided)",
            r.counted_sites,
            plural(r.counted_sites),
            r.counted_calls,
            plural(r.counted_calls),
        )));
    }
    if let Some(line) = inlined(report) {
        v.push((INFORM, line));
    }
    let few = report
        .sites
        .iter()
        .filter(|x| x.too_few_samples() && x.kind != crate::report::SiteKind::Inlined)
        .count() as u64;
    if few > 0 {
        v.push((INFORM, format!(
            "{few} site{} marked `too few`: calls too short for the clock, and too seldom found by the sampler (TICKPROF_SAMPLE) for an estimate: their time is below what this run could measure",
            plural(few),
        )));
    }
    if let Some(line) = instrumentation(report) {
        v.push((INFORM, line));
    }
    if !r.complete {
        let lost = "a finishing thread held the profiler lock; its calls may be missing";
        v.push((WARN, lost.to_owned()));
    }
    v
}

/// The note of the rows of inlined functions (feature `inlined`): how
/// many, what they rest on, how many on too few samples.
fn inlined(report: &Report) -> Option<String> {
    let rows: Vec<_> = report
        .sites
        .iter()
        .filter(|s| s.kind == crate::report::SiteKind::Inlined)
        .collect();
    if rows.is_empty() {
        return None;
    }
    let samples = report
        .sites
        .iter()
        .fold(0u64, |a, s| a.saturating_add(s.pc_samples));
    let few = rows.iter().filter(|s| s.too_few_samples()).count() as u64;
    let n = rows.len() as u64;
    let mut line = format!(
        "{n} row{} of functions found inside marked calls by {samples} program-counter sample{} (inlined by the compiler, or unmarked): each a share of its holder's own time, no calls counted",
        plural(n),
        plural(samples),
    );
    if few > 0 {
        line.push_str(&format!(
            "; {few} rest{} on fewer than {} samples (`too few`)",
            if few == 1 { "s" } else { "" },
            crate::report::FEW_PC_SAMPLES
        ));
    }
    Some(line)
}

/// What the header and the costliest-marks note say of a counted call's
/// cost of 0 (see `text::counted_cost`).
pub(crate) const UNMEASURED: &str = "too little found to measure";

/// Marks named in the instrumentation note.
const COSTLIEST: usize = 3;

/// The instrumentation note: the costliest marks (each call at the
/// instrumentation per call the sampler measured), so that a broad marker
/// sees which marks to remove. `None` when nothing was measured or ran.
fn instrumentation(report: &Report) -> Option<String> {
    let r = &report.run;
    if r.overhead_call_ns <= 0.0 || report.sites.is_empty() {
        return None;
    }
    let mut cost: Vec<(f64, &str)> = report
        .sites
        .iter()
        .map(|s| (s.instrumentation_ns(r), s.name.as_str()))
        .collect();
    cost.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    let top: Vec<String> = cost
        .iter()
        .take(COSTLIEST)
        .map(|(ns, name)| format!("{name} {}", fmt_ns(*ns)))
        .collect();
    let at = match r.per_kind_apart_ns() {
        Some((timed, counted)) if counted > 0.0 => format!(
            "at the {} per timed call and {} per counted call measured",
            fmt_ns(timed),
            fmt_ns(counted)
        ),
        // Too little found to measure a counted call: its cost is not
        // known, not 0 (see `text::counted_cost`).
        Some((timed, _)) => format!(
            "at the {} per timed call measured (a counted call: {})",
            fmt_ns(timed),
            UNMEASURED
        ),
        None => format!("at the {} per call measured", fmt_ns(r.overhead_call_ns)),
    };
    Some(format!("costliest marks, {at}: {}", top.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::columns::shown;

    /// A site that ran but whose estimate is 0 reads `too few` in every
    /// time cell (issue 55: `~0 ns` beside a p50 of ~15 ns), 0 in CSV, and
    /// a note says why; a resolved site or one with a time does not.
    #[test]
    fn a_site_with_too_few_samples_says_so_instead_of_zero() {
        let mut r = Report::empty();
        let mut s = crate::export::test_site("f", crate::SiteKind::Function);
        (s.calls, s.resolved, s.total_ns, s.self_ns, s.mean_ns) = (40, false, 0, 0, 0.0);
        r.sites.push(s.clone());
        let cells: Vec<(String, String)> = shown(&r)
            .iter()
            .filter(|c| {
                ["total", "self", "mean", "min", "p50", "p90", "p99", "max"].contains(&c.label)
            })
            .map(|c| {
                let v = (c.value)(&r.sites[0], &r);
                (v.human(), v.machine())
            })
            .collect();
        assert_eq!(cells.len(), 8);
        assert!(
            cells.iter().all(|(h, m)| h == "too few" && m == "0"),
            "{cells:?}"
        );
        assert!(notes(&r)
            .iter()
            .any(|(_, n)| n.starts_with("1 site marked `too few`")));
        // With a time, or resolved: figures as before.
        s.total_ns = 3;
        assert!(!s.too_few_samples());
        (s.total_ns, s.resolved) = (0, true);
        assert!(!s.too_few_samples());
    }

    #[test]
    fn notes_name_each_event_once() {
        let mut r = Report::empty();
        assert!(notes(&r).is_empty());
        r.run.clamped = 2;
        r.run.carried = 1;
        r.run.trace_dropped = 5;
        r.run.complete = false;
        let n = notes(&r);
        assert_eq!(n.len(), 4, "{n:?}");
        assert!(n[0]
            .1
            .starts_with("2 call paths held at the clock's resolution a call"));
        assert!(n[1]
            .1
            .starts_with("1 call path raised to the total of the marked calls inside"));
        // Adjusted paths inform; dropped events and a missing thread warn.
        assert_eq!(
            n.iter().map(|n| n.0).collect::<Vec<_>>(),
            [false, false, true, true]
        );
    }

    /// A counted call's cost of 0 beside a timed call's (too little found
    /// to measure it) reads as not measured in the header and in the
    /// costliest-marks note, not as 0 ns; a measured one reads as before.
    #[test]
    fn a_counted_call_not_measured_does_not_read_0_ns() {
        let mut r = Report::empty();
        let mut s = crate::export::test_site("f", crate::SiteKind::Function);
        (s.calls, s.timed_calls) = (1_000, 10);
        r.sites.push(s);
        (r.run.overhead_call_ns, r.run.overhead_timed_ns) = (2.0, 19.0);
        (r.run.overhead_counted_ns, r.run.counted_calls) = (0.0, 990);
        let header = crate::export::text::per_kind(&r.run);
        assert_eq!(
            header,
            " (19 ns a timed call, a counted one: too little found to measure)"
        );
        let note = instrumentation(&r).unwrap();
        assert!(
            note.starts_with("costliest marks, at the 19 ns per timed call measured (a counted call: too little found to measure): f "),
            "{note}"
        );
        r.run.overhead_counted_ns = 0.4;
        assert_eq!(
            crate::export::text::per_kind(&r.run),
            " (19 ns a timed call, 0.4 ns a counted one)"
        );
        assert!(instrumentation(&r).unwrap().starts_with(
            "costliest marks, at the 19 ns per timed call and 0.4 ns per counted call measured: f "
        ));
    }
}
