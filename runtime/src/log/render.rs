//! One thread's trace log: entries and exits in, lines out.
//!
//! A shown call's entry line is held back until the next event says what
//! it is: a call with no shown child becomes one line (`leaf();  1.2 µs`).
//! With a threshold, a shown call's whole subtree is held until its exit
//! (a call under the threshold is erased with its subtree), up to
//! [`HELD_MAX`] bytes: past that the held lines are written out and the
//! calls still open are shown whatever their duration.
//!
//! Indentation stops growing at [`INDENT_MAX`] levels: a deeper line has
//! that indentation and starts with its level (`[depth 70] `), so a deep
//! recursion's log grows with the number of calls, not with its square.
//! Thread names are made terminal-safe here; site names by the caller.

use super::{LogOptions, Match};
use crate::naming::terminal_safe;
use std::fmt::Write as _;
use std::sync::Arc;

/// Bytes of held-back lines per thread before they are written regardless.
pub(crate) const HELD_MAX: usize = 1 << 20;

/// Levels of indentation at most; deeper lines show their level instead.
pub(crate) const INDENT_MAX: usize = 64;

/// A piece of a line.
enum Part<'a> {
    Text(&'a str),
    Ns(f64),
}

/// Appends `ns` as [`fmt_ns`](crate::fmt_ns) writes it, with integer
/// arithmetic.
fn push_ns(out: &mut String, ns: f64) {
    let ns = if ns.is_finite() && ns > 0.0 { ns } else { 0.0 };
    let (scaled, decimals, unit) = if ns < 10.0 && ns.fract() != 0.0 {
        (ns * 10.0, 1, " ns")
    } else if ns < 1e3 {
        (ns, 0, " ns")
    } else if ns < 1e6 {
        (ns / 10.0, 2, " µs")
    } else if ns < 1e9 {
        (ns / 1e4, 2, " ms")
    } else {
        (ns / 1e6, 3, " s")
    };
    let n = scaled.round_ties_even() as u64;
    let div = 10u64.pow(decimals);
    push_u64(out, n / div);
    if decimals > 0 {
        out.push('.');
        let frac = n % div;
        let mut d = div / 10;
        while d > 0 {
            out.push(char::from(b'0' + (frac / d % 10) as u8));
            d /= 10;
        }
    }
    out.push_str(unit);
}

fn push_u64(out: &mut String, n: u64) {
    out.push_str(crate::digits::Decimal::new(n).as_str());
}

/// A call open on this thread, as the log sees it.
struct Open {
    /// What identifies the call at its exit (site address and depth live;
    /// stack position in a replay).
    key: (usize, usize),
    name: Arc<str>,
    shown: bool,
    /// Its subtree is in a `TICKPROF_LOG_FILTER` match.
    in_filter: bool,
    /// Its subtree is hidden (`NOTRACE`, or past `DEPTH`).
    hidden: bool,
    /// Shown ancestors (its indentation), itself excluded.
    level: usize,
    /// Where its entry line starts in `held`, while it is still there.
    offset: Option<usize>,
    /// Shown children still in the output.
    children: usize,
}

/// One thread's log state.
pub(crate) struct Thread {
    prefix: String,
    stack: Vec<Open>,
    /// Lines that may still change (a leaf's entry, a subtree under a
    /// threshold).
    held: String,
    /// Lines final, waiting to be written.
    pub(crate) out: String,
}

impl Thread {
    /// A thread's log, its lines prefixed with `[tid] `, starting with a
    /// `# thread tid: name` line (the name made terminal-safe).
    pub(crate) fn new(tid: u64, name: &str) -> Thread {
        let mut out = String::new();
        let _ = writeln!(out, "# thread {tid}: {}", terminal_safe(name));
        Thread {
            prefix: format!("[{tid}] "),
            stack: Vec::new(),
            held: String::new(),
            out,
        }
    }

    fn commit(&mut self) {
        self.out.push_str(&self.held);
        self.held.clear();
        for o in &mut self.stack {
            o.offset = None;
        }
    }

    /// Writes a line of `parts` at indentation `level` (at most
    /// [`INDENT_MAX`], then `[depth N] `), durations formatted as in the
    /// report, without the `fmt` machinery (the log's cost).
    fn line(&mut self, level: usize, parts: &[Part<'_>]) {
        let h = &mut self.held;
        h.push_str(&self.prefix);
        for _ in 0..level.min(INDENT_MAX) {
            h.push_str("  ");
        }
        if level >= INDENT_MAX {
            h.push_str("[depth ");
            push_u64(h, level as u64);
            h.push_str("] ");
        }
        for p in parts {
            match *p {
                Part::Text(t) => h.push_str(t),
                Part::Ns(ns) => push_ns(h, ns),
            }
        }
        h.push('\n');
    }

    /// A call starts.
    pub(crate) fn enter(
        &mut self,
        opts: &LogOptions,
        key: (usize, usize),
        name: &Arc<str>,
        m: Match,
    ) {
        let parent = self.stack.last();
        let in_filter = opts.filter.is_empty() || m.filter || parent.is_some_and(|p| p.in_filter);
        let level = parent.map_or(0, |p| p.level + usize::from(p.shown));
        let too_deep = opts.depth != 0 && level >= opts.depth;
        let hidden = parent.is_some_and(|p| p.hidden) || m.notrace || too_deep;
        let shown = in_filter && !hidden;
        let mut offset = None;
        if shown {
            if let Some(p) = self.stack.iter_mut().rev().find(|p| p.shown) {
                p.children += 1;
            }
            if opts.threshold_ns == 0 || self.held.len() > HELD_MAX {
                self.commit();
            }
            offset = Some(self.held.len());
            self.line(level, &[Part::Text(name), Part::Text("() {")]);
        }
        self.stack.push(Open {
            key,
            name: Arc::clone(name),
            shown,
            in_filter,
            hidden,
            level,
            offset,
            children: 0,
        });
    }

    /// A call ends: `key` as given at its entry. Calls opened after it and
    /// not closed (their guards were moved or leaked) are dropped from the
    /// log's stack; an exit with no matching entry gets a line of its own
    /// marked `out of order`.
    pub(crate) fn exit(
        &mut self,
        opts: &LogOptions,
        key: (usize, usize),
        name: &str,
        ns: f64,
        unwound: bool,
    ) {
        let Some(i) = self.stack.iter().rposition(|o| o.key == key) else {
            let level = self.stack.iter().filter(|o| o.shown).count();
            let shown = self
                .stack
                .last()
                .map_or(opts.filter.is_empty(), |p| p.in_filter && !p.hidden);
            if shown {
                let parts = [
                    Part::Text("} "),
                    Part::Ns(ns),
                    Part::Text(" /* "),
                    Part::Text(name),
                    Part::Text(" */ out of order"),
                ];
                self.line(level, &parts);
                self.settle(opts);
            }
            return;
        };
        self.stack.truncate(i + 1);
        let Some(o) = self.stack.pop() else {
            return;
        };
        if !o.shown {
            return;
        }
        let tail = if unwound { " unwound" } else { "" };
        let under = opts.threshold_ns != 0 && ns < opts.threshold_ns as f64;
        match o.offset {
            Some(at) if under => {
                self.held.truncate(at);
                if let Some(p) = self.stack.iter_mut().rev().find(|p| p.shown) {
                    p.children = p.children.saturating_sub(1);
                }
            }
            Some(at) if o.children == 0 => {
                self.held.truncate(at);
                let parts = [
                    Part::Text(&o.name),
                    Part::Text("();  "),
                    Part::Ns(ns),
                    Part::Text(tail),
                ];
                self.line(o.level, &parts);
            }
            _ => {
                let parts = [
                    Part::Text("} "),
                    Part::Ns(ns),
                    Part::Text(" /* "),
                    Part::Text(&o.name),
                    Part::Text(" */"),
                    Part::Text(tail),
                ];
                self.line(o.level, &parts);
            }
        }
        self.settle(opts);
    }

    /// Commits what can no longer change: without a threshold, all but
    /// the innermost open shown call's entry (it may become a leaf line);
    /// with one, everything once no shown call is open (or past the bound).
    fn settle(&mut self, opts: &LogOptions) {
        let innermost = self.stack.iter().rev().find(|o| o.shown);
        let commit = if opts.threshold_ns == 0 {
            innermost.is_none_or(|o| o.offset.is_none())
        } else {
            innermost.is_none() || self.held.len() > HELD_MAX
        };
        if commit {
            self.commit();
        }
    }

    /// Forgets every line not yet written (in a `fork` child: the parent
    /// writes them); open calls stay open, shown as not leaves.
    #[cfg(all(feature = "enabled", unix))]
    pub(crate) fn forget_output(&mut self) {
        self.held.clear();
        self.out.clear();
        for o in &mut self.stack {
            o.offset = None;
        }
    }

    /// The thread's log ends: open calls' entries and held lines are
    /// committed as they are.
    pub(crate) fn finish(&mut self) {
        self.commit();
        self.stack.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(opts: &LogOptions, events: &[(&str, Option<f64>)]) -> String {
        let mut t = Thread::new(1, "main");
        let mut keys: Vec<(usize, &str)> = Vec::new();
        for &(name, ns) in events {
            match ns {
                None => {
                    keys.push((keys.len() + 1, name));
                    t.enter(opts, (keys.len(), 0), &Arc::from(name), opts.matches(name));
                }
                Some(ns) => {
                    let (k, n) = keys.pop().unwrap();
                    assert_eq!(n, name);
                    t.exit(opts, (k, 0), name, ns, name.contains("boom"));
                }
            }
        }
        t.finish();
        t.out
    }

    const TREE: &[(&str, Option<f64>)] = &[
        ("main", None),
        ("a", None),
        ("leaf", None),
        ("leaf", Some(100.0)),
        ("a", Some(9_000.0)),
        ("b", None),
        ("b", Some(2_000.0)),
        ("boom", None),
        ("boom", Some(7_000.0)),
        ("main", Some(20_000.0)),
    ];

    #[test]
    fn durations_as_the_report_writes_them() {
        for ns in [
            0.0,
            3.25,
            7.0,
            850.0,
            999.4,
            1_000.0,
            12_300.0,
            4_560_000.0,
            2.5e9,
            123_456.0,
        ] {
            let mut s = String::new();
            push_ns(&mut s, ns);
            assert_eq!(s, crate::fmt_ns(ns), "{ns}");
        }
    }

    #[test]
    fn shape_leaves_and_unwound() {
        let out = run(&LogOptions::default(), TREE);
        assert_eq!(
            out,
            "# thread 1: main\n[1] main() {\n[1]   a() {\n[1]     leaf();  100 ns\n\
             [1]   } 9.00 µs /* a */\n[1]   b();  2.00 µs\n[1]   boom();  7.00 µs unwound\n\
             [1] } 20.00 µs /* main */\n"
        );
    }

    #[test]
    fn threshold_erases_fast_subtrees_and_a_parent_left_childless_is_a_leaf() {
        let opts = LogOptions {
            threshold_ns: 5_000,
            ..LogOptions::default()
        };
        let out = run(&opts, TREE);
        assert_eq!(
            out,
            "# thread 1: main\n[1] main() {\n[1]   a();  9.00 µs\n[1]   boom();  7.00 µs unwound\n\
             [1] } 20.00 µs /* main */\n"
        );
    }

    #[test]
    fn indentation_stops_growing_and_deep_lines_show_their_level() {
        let mut events = Vec::new();
        for _ in 0..70 {
            events.push(("r", None));
        }
        for _ in 0..70 {
            events.push(("r", Some(1.0)));
        }
        let out = run(&LogOptions::default(), &events);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 1 + 69 + 1 + 69);
        let indent = |l: &str| l[4..].len() - l[4..].trim_start().len();
        assert_eq!(lines[64], format!("[1] {}r() {{", " ".repeat(126)));
        assert_eq!(
            lines[65],
            format!("[1] {}[depth 64] r() {{", " ".repeat(128))
        );
        assert_eq!(
            lines[70],
            format!("[1] {}[depth 69] r();  1 ns", " ".repeat(128))
        );
        assert!(lines.iter().skip(1).all(|l| indent(l) <= 128));
        assert!(out.len() < 140 * 200, "{}", out.len());
    }

    #[test]
    fn a_thread_name_cannot_forge_lines() {
        let t = Thread::new(1, "a\nb\x1b[31m\u{202e}");
        assert_eq!(t.out, "# thread 1: a b [31m\\u{202e}\n");
    }

    #[test]
    fn filter_notrace_depth() {
        let only_a = LogOptions {
            filter: vec!["a".into()],
            ..LogOptions::default()
        };
        assert_eq!(
            run(&only_a, TREE),
            "# thread 1: main\n[1] a() {\n[1]   leaf();  100 ns\n[1] } 9.00 µs /* a */\n"
        );
        let no_a = LogOptions {
            notrace: vec!["a".into(), "bo*".into()],
            ..LogOptions::default()
        };
        assert_eq!(
            run(&no_a, TREE),
            "# thread 1: main\n[1] main() {\n[1]   b();  2.00 µs\n[1] } 20.00 µs /* main */\n"
        );
        let one = LogOptions {
            depth: 1,
            ..LogOptions::default()
        };
        assert_eq!(run(&one, TREE), "# thread 1: main\n[1] main();  20.00 µs\n");
    }
}
