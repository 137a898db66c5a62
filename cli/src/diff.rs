//! `tickprof diff`: per-site changes between two reports, and the
//! regression gate.
//!
//! Names come from files and may hold anything: the table and the
//! "slower than allowed" lines print them terminal-safe (as `show` does),
//! and `--raw` escapes its fields ([`tsv_field`]).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;
use tickprof_runtime::__private::terminal_safe;
use tickprof_runtime::{fmt_ns, Report};

/// The figure a site's change is measured on, sorted by, and gated on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Metric {
    /// Total time.
    Total,
    /// Self time.
    #[value(name = "self")]
    SelfTime,
    /// Mean time per call.
    Mean,
}

/// What `diff` was asked.
#[derive(Clone, Debug)]
pub struct Options {
    /// Changes smaller than this fraction of the before value are noise:
    /// not shown (unless `all`), never failing.
    pub noise: f64,
    /// The compared figure.
    pub metric: Metric,
    /// Fail when a site got slower by more than this fraction.
    pub fail_if_slower: Option<f64>,
    /// Gate on this site only.
    pub site: Option<String>,
    /// Show the rows within the noise too.
    pub all: bool,
}

/// One site's figures in one report.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figures {
    /// Calls.
    pub calls: u64,
    /// Total time, ns.
    pub total_ns: u64,
    /// Self time, ns.
    pub self_ns: u64,
    /// Mean time per call, ns.
    pub mean_ns: f64,
}

impl Figures {
    fn get(&self, m: Metric) -> f64 {
        match m {
            Metric::Total => self.total_ns as f64,
            Metric::SelfTime => self.self_ns as f64,
            Metric::Mean => self.mean_ns,
        }
    }
}

/// One site in either report, matched by name.
#[derive(Clone, Debug)]
pub struct Row {
    /// The site's name.
    pub name: String,
    /// Its figures before (`None`: new).
    pub before: Option<Figures>,
    /// Its figures after (`None`: gone).
    pub after: Option<Figures>,
}

impl Row {
    /// The change of `m` in ns (after − before; a missing side counts 0).
    pub fn delta(&self, m: Metric) -> f64 {
        self.after.map_or(0.0, |f| f.get(m)) - self.before.map_or(0.0, |f| f.get(m))
    }

    /// The relative change of `m` (`None` when the site is new or gone, or
    /// its before value is 0).
    pub fn change(&self, m: Metric) -> Option<f64> {
        let (b, a) = (self.before?.get(m), self.after?.get(m));
        (b > 0.0).then(|| (a - b) / b)
    }

    /// Whether the change of `m` is within the noise.
    pub fn is_noise(&self, m: Metric, noise: f64) -> bool {
        match (self.before, self.after) {
            (Some(b), Some(a)) if b.get(m) == 0.0 => a.get(m) == 0.0,
            (Some(_), Some(_)) => self.change(m).is_some_and(|c| c.abs() < noise),
            _ => false,
        }
    }
}

/// The sites of both reports, matched by name (through a map: linear in
/// the number of sites), biggest absolute change of `m` first (ties by
/// name). A name given twice in a report counts its first site, as
/// [`Report::site`] finds it.
pub fn rows(before: &Report, after: &Report, m: Metric) -> Vec<Row> {
    fn index(r: &Report) -> HashMap<&str, Figures> {
        let mut map = HashMap::with_capacity(r.sites.len());
        for s in &r.sites {
            map.entry(s.name.as_str()).or_insert(Figures {
                calls: s.calls,
                total_ns: s.total_ns,
                self_ns: s.self_ns,
                mean_ns: s.mean_ns,
            });
        }
        map
    }
    let (b, a) = (index(before), index(after));
    let mut names: Vec<&str> = b.keys().chain(a.keys()).copied().collect();
    names.sort_unstable();
    names.dedup();
    let mut v: Vec<Row> = names
        .into_iter()
        .map(|n| Row {
            name: n.to_owned(),
            before: b.get(n).copied(),
            after: a.get(n).copied(),
        })
        .collect();
    v.sort_by(|a, b| {
        b.delta(m)
            .abs()
            .total_cmp(&a.delta(m).abs())
            .then_with(|| a.name.cmp(&b.name))
    });
    v
}

/// The sites slower than allowed, as one line each; `Err` when the gated
/// site is missing from a report.
pub fn violations(rows: &[Row], o: &Options) -> Result<Vec<String>, String> {
    let Some(limit) = o.fail_if_slower else {
        return Ok(Vec::new());
    };
    let gated: Vec<&Row> = match &o.site {
        Some(name) => {
            let r = rows
                .iter()
                .find(|r| &r.name == name)
                .ok_or_else(|| format!("site {name:?} is in neither report"))?;
            if r.before.is_none() || r.after.is_none() {
                let side = if r.before.is_none() {
                    "before"
                } else {
                    "after"
                };
                return Err(format!("site {name:?} is not in the {side} report"));
            }
            vec![r]
        }
        None => rows.iter().collect(),
    };
    Ok(gated
        .into_iter()
        .filter(|r| !r.is_noise(o.metric, o.noise))
        .filter_map(|r| {
            let c = r.change(o.metric)?;
            (c > limit).then(|| {
                format!(
                    "{}: {} {} (allowed {})",
                    terminal_safe(&r.name),
                    metric_name(o.metric),
                    pct_over(c, limit),
                    pct(limit)
                )
            })
        })
        .collect())
}

fn metric_name(m: Metric) -> &'static str {
    match m {
        Metric::Total => "total",
        Metric::SelfTime => "self",
        Metric::Mean => "mean",
    }
}

/// `+5.0%`, `-12.3%`.
pub fn pct(f: f64) -> String {
    format!("{:+.1}%", f * 100.0)
}

/// `c` as [`pct`], with two decimals when one would print it equal to
/// `limit` (`+5.04%`, not `+5.0%`, over an allowed `+5.0%`).
fn pct_over(c: f64, limit: f64) -> String {
    if pct(c) == pct(limit) {
        format!("{:+.2}%", c * 100.0)
    } else {
        pct(c)
    }
}

/// The human table.
pub fn table(rows: &[Row], o: &Options) -> String {
    let shown: Vec<&Row> = rows
        .iter()
        .filter(|r| o.all || !r.is_noise(o.metric, o.noise))
        .collect();
    let cell = |r: &Row, f: fn(&Figures) -> String, m: Option<Metric>| {
        let side = |x: Option<Figures>| x.as_ref().map_or("-".to_owned(), f);
        let change = m
            .and_then(|m| r.change(m))
            .map_or(String::new(), |c| format!(" {}", pct(c)));
        format!("{} → {}{change}", side(r.before), side(r.after))
    };
    let cols: Vec<[String; 6]> = shown
        .iter()
        .map(|r| {
            let status = match (r.before, r.after) {
                (None, _) => "new",
                (_, None) => "gone",
                _ if r.delta(o.metric) > 0.0 => "slower",
                _ if r.delta(o.metric) < 0.0 => "faster",
                _ => "same",
            };
            [
                terminal_safe(&r.name).into_owned(),
                cell(r, |f| f.calls.to_string(), None),
                cell(r, |f| fmt_ns(f.total_ns as f64), Some(Metric::Total)),
                cell(r, |f| fmt_ns(f.self_ns as f64), Some(Metric::SelfTime)),
                cell(r, |f| fmt_ns(f.mean_ns), Some(Metric::Mean)),
                status.to_owned(),
            ]
        })
        .collect();
    let head = ["site", "calls", "total", "self", "mean", ""];
    let mut width = head.map(|h| h.chars().count());
    for c in &cols {
        for (w, s) in width.iter_mut().zip(c) {
            *w = (*w).max(s.chars().count());
        }
    }
    let mut out = String::new();
    for line in std::iter::once(head.map(str::to_owned)).chain(cols) {
        let mut l = String::new();
        for (i, (s, w)) in line.iter().zip(width).enumerate() {
            let pad = w - s.chars().count();
            if i == 0 {
                let _ = write!(l, "{s}{}  ", " ".repeat(pad));
            } else {
                let _ = write!(l, "{}{s}  ", " ".repeat(pad));
            }
        }
        let _ = writeln!(out, "{}", l.trim_end());
    }
    let hidden = rows.len() - shown.len();
    if hidden > 0 {
        let _ = writeln!(
            out,
            "{hidden} site{} within the noise (±{:.1}% {}; --all shows them)",
            if hidden == 1 { "" } else { "s" },
            o.noise * 100.0,
            metric_name(o.metric)
        );
    }
    out
}

/// A name as a field of `--raw`'s tab-separated lines: backslash, tab,
/// newline and carriage return as `\\`, `\t`, `\n`, `\r`, other control
/// characters as `\u{1b}`, and the invisible and bidirectional characters
/// the text report escapes as `\u{202e}`, so a field is never split, a
/// line never forged, and a literal backslash is always doubled.
pub fn tsv_field(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| c == '\\' || c.is_control()) {
        return terminal_safe(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    Cow::Owned(terminal_safe(&out).into_owned())
}

/// Tab-separated figures in ns, one line per site (every site), for
/// scripts; names escaped by [`tsv_field`].
pub fn raw(rows: &[Row], m: Metric) -> String {
    let mut out = String::from(
        "name\tcalls_before\tcalls_after\ttotal_ns_before\ttotal_ns_after\tself_ns_before\tself_ns_after\tmean_ns_before\tmean_ns_after\tchange\n",
    );
    let side = |f: Option<Figures>, g: fn(&Figures) -> String| f.as_ref().map_or("-".to_owned(), g);
    for r in rows {
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            tsv_field(&r.name),
            side(r.before, |f| f.calls.to_string()),
            side(r.after, |f| f.calls.to_string()),
            side(r.before, |f| f.total_ns.to_string()),
            side(r.after, |f| f.total_ns.to_string()),
            side(r.before, |f| f.self_ns.to_string()),
            side(r.after, |f| f.self_ns.to_string()),
            side(r.before, |f| f.mean_ns.to_string()),
            side(r.after, |f| f.mean_ns.to_string()),
            r.change(m).map_or("-".to_owned(), |c| c.to_string()),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_over_the_limit_never_prints_as_the_limit() {
        assert_eq!(pct_over(0.0504, 0.05), "+5.04%");
        assert_eq!(pct_over(0.258, 0.05), "+25.8%");
        assert_eq!(pct(-0.123), "-12.3%");
    }

    #[test]
    fn tsv_fields_are_escaped() {
        assert_eq!(tsv_field("a::b"), "a::b");
        assert_eq!(
            tsv_field("a\tb\nc\\d\re\u{1b}[2J\u{85}"),
            "a\\tb\\nc\\\\d\\re\\u{1b}[2J\\u{85}"
        );
        assert_eq!(tsv_field("a\u{202e}b"), "a\\u{202e}b");
        assert_eq!(tsv_field("\\\u{202e}"), "\\\\\\u{202e}");
    }
}
