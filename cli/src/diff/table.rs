//! `tickprof diff`'s output: the human table and `--raw`'s lines.

use super::{metric_name, Figures, Metric, Options, Row};
use std::borrow::Cow;
use std::fmt::Write as _;
use tickprof_runtime::__private::terminal_safe;
use tickprof_runtime::fmt_ns;

/// `+5.0%`, `-12.3%`.
pub(super) fn pct(f: f64) -> String {
    format!("{:+.1}%", f * 100.0)
}

/// `c` as [`pct`], with two decimals when one would print it equal to
/// `limit` (`+5.04%`, not `+5.0%`, over an allowed `+5.0%`).
pub(super) fn pct_over(c: f64, limit: f64) -> String {
    if pct(c) == pct(limit) {
        format!("{:+.2}%", c * 100.0)
    } else {
        pct(c)
    }
}

/// The human table. With a percentile metric it has that column; with
/// several runs on a side, a `spread` column (the compared figure's
/// (max − min) / median on each side).
pub fn table(rows: &[Row], o: &Options) -> String {
    let shown: Vec<&Row> = rows
        .iter()
        .filter(|r| o.all || !r.is_noise(o.metric, o.noise))
        .collect();
    let cell = |r: &Row, f: &dyn Fn(&Figures) -> String, m: Option<Metric>| {
        let side = |x: Option<Figures>| x.as_ref().map_or("-".to_owned(), f);
        let change = m
            .and_then(|m| r.change(m))
            .map_or(String::new(), |c| format!(" {}", pct(c)));
        format!("{} → {}{change}", side(r.before), side(r.after))
    };
    let pm = o.metric.percentile().map(|i| (i, o.metric));
    let multi = rows
        .iter()
        .any(|r| r.before_runs.len() > 1 || r.after_runs.len() > 1);
    let cols: Vec<Vec<String>> = shown
        .iter()
        .map(|r| {
            let status = match (r.before, r.after) {
                (None, _) => "new",
                (_, None) => "gone",
                _ if r.delta(o.metric) > 0.0 => "slower",
                _ if r.delta(o.metric) < 0.0 => "faster",
                _ => "same",
            };
            let mut c = vec![
                terminal_safe(&r.name).into_owned(),
                cell(r, &|f| f.calls.to_string(), None),
                cell(r, &|f| fmt_ns(f.total_ns as f64), Some(Metric::Total)),
                cell(r, &|f| fmt_ns(f.self_ns as f64), Some(Metric::SelfTime)),
                cell(r, &|f| fmt_ns(f.mean_ns), Some(Metric::Mean)),
            ];
            if let Some((i, m)) = pm {
                let v = move |f: &Figures| f.pct[i].map_or("-".to_owned(), fmt_ns);
                c.push(cell(r, &v, Some(m)));
            }
            if multi {
                let sp = |after| r.spread(after, o.metric).map_or("-".to_owned(), pct_plain);
                c.push(format!("{} → {}", sp(false), sp(true)));
            }
            c.push(status.to_owned());
            c
        })
        .collect();
    let mut head = vec!["site", "calls", "total", "self", "mean"];
    if let Some((_, m)) = pm {
        head.push(metric_name(m));
    }
    if multi {
        head.push("spread");
    }
    head.push("");
    let mut width: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for c in &cols {
        for (w, s) in width.iter_mut().zip(c) {
            *w = (*w).max(s.chars().count());
        }
    }
    let mut out = String::new();
    let head: Vec<String> = head.iter().map(|h| (*h).to_owned()).collect();
    for line in std::iter::once(head).chain(cols) {
        let mut l = String::new();
        for (i, (s, w)) in line.iter().zip(&width).enumerate() {
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
        let within = if multi { "or the runs' spread" } else { "" };
        let _ = writeln!(
            out,
            "{hidden} site{} within the noise (±{:.1}% {}{}{within}; --all shows them)",
            if hidden == 1 { "" } else { "s" },
            o.noise * 100.0,
            metric_name(o.metric),
            if multi { " " } else { "" },
        );
    }
    out
}

/// `12.3%` (no sign).
fn pct_plain(f: f64) -> String {
    format!("{:.1}%", f * 100.0)
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
