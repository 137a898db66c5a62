//! The typed value parsers of the settings table, each written once.
//!
//! A parser turns a variable's (non-empty) text into the field's value, or
//! says why it cannot, as the middle of the warning line:
//! `TICKPROF_X="bad" <why>; using the default (…)`. It also prints a value
//! back (`show`) in the form it reads, so that the default in a warning and
//! in the docs table comes from the default value itself.

use std::ffi::OsStr;
use std::net::SocketAddr;
use std::str::FromStr;
use std::time::Duration;

/// The most bytes of a value (or a name) a warning line quotes.
pub(crate) const QUOTED_MAX: usize = 100;

/// `s` cut to at most [`QUOTED_MAX`] bytes (at a character), and its
/// length in bytes when it was cut.
fn clip(s: &str) -> (&str, Option<usize>) {
    if s.len() <= QUOTED_MAX {
        return (s, None);
    }
    let mut end = QUOTED_MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    (&s[..end], Some(s.len()))
}

/// The suffix of a cut text: `… (N bytes)`.
fn cut(len: Option<usize>) -> String {
    len.map_or_else(String::new, |n| format!("… ({n} bytes)"))
}

/// A value as a warning line quotes it: `"text"` (escaped as Rust
/// writes strings); past [`QUOTED_MAX`] bytes, the first ones, then
/// `… (N bytes)`.
pub(crate) fn quoted(s: &str) -> String {
    let (head, len) = clip(s);
    format!("{head:?}{}", cut(len))
}

/// A name (or a fragment of a value) as a warning line shows it, cut as
/// [`quoted`] cuts, without quotes.
pub(crate) fn named(s: &str) -> String {
    let (head, len) = clip(s);
    format!("{head}{}", cut(len))
}

/// Where a bad part of a value is, for a reason: ` in "part"` (cut as
/// [`quoted`]), or nothing when the part is the whole value, which the
/// warning line quotes already.
pub(crate) fn within(part: &str, whole: &str) -> String {
    if part == whole.trim() {
        String::new()
    } else {
        format!(" in {}", quoted(part))
    }
}

/// A value parser: text → value, and value → text.
pub(crate) trait Value {
    /// The parsed value (the `Config` field's type).
    type Out;
    /// Parses a non-empty, untrimmed value; `Err` says why it is bad.
    fn parse(&self, s: &str) -> Result<Self::Out, String>;
    /// Parses the value as the environment holds it (default: non-UTF-8 as U+FFFD).
    fn parse_os(&self, s: &OsStr) -> Result<Self::Out, String> {
        self.parse(&s.to_string_lossy())
    }
    /// `v` as this parser reads it; `None` for "unset".
    fn show(&self, v: &Self::Out) -> Option<String>;
}

/// On or off: `on`, `1`, `true`, `yes` / `off`, `0`, `false`, `no`, any case.
pub(crate) struct Switch;

impl Value for Switch {
    type Out = bool;
    fn parse(&self, s: &str) -> Result<bool, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "on" | "1" | "true" | "yes" => Ok(true),
            "off" | "0" | "false" | "no" => Ok(false),
            _ => Err("is not on or off (1 or 0)".into()),
        }
    }
    fn show(&self, v: &bool) -> Option<String> {
        Some(if *v { "on" } else { "off" }.into())
    }
}

/// A whole number no smaller than the given minimum.
pub(crate) struct Whole<T>(pub T);

impl<T: FromStr + PartialOrd + Copy + ToString> Value for Whole<T> {
    type Out = T;
    fn parse(&self, s: &str) -> Result<T, String> {
        match s.trim().parse::<T>() {
            Ok(n) if n >= self.0 => Ok(n),
            _ => Err(match self.0.to_string().as_str() {
                "0" => "is not a whole number".into(),
                "1" => "is not a positive whole number".into(),
                min => format!("is not a whole number of at least {min}"),
            }),
        }
    }
    fn show(&self, v: &T) -> Option<String> {
        Some(v.to_string())
    }
}

/// A whole number where `0` means no limit (`None`).
pub(crate) struct Limit;

impl Value for Limit {
    type Out = Option<usize>;
    fn parse(&self, s: &str) -> Result<Option<usize>, String> {
        Whole(0usize).parse(s).map(|n| (n > 0).then_some(n))
    }
    fn show(&self, v: &Option<usize>) -> Option<String> {
        Some(v.unwrap_or(0).to_string())
    }
}

/// A duration with a unit ([`parse_duration`]); `Span(true)`: not zero.
pub(crate) struct Span(pub bool);

impl Value for Span {
    type Out = Duration;
    fn parse(&self, s: &str) -> Result<Duration, String> {
        match parse_duration(s) {
            Some(d) if !(self.0 && d.is_zero()) => Ok(d),
            _ if self.0 => Err("is not a positive duration like 500ms, 30s, 2m or 1h".into()),
            _ => Err("is not a duration like 5us, 2ms or 1s".into()),
        }
    }
    fn show(&self, v: &Duration) -> Option<String> {
        Some(fmt_duration(*v))
    }
}

/// The period of something tickprof repeats (a dump, a push): a duration
/// with a unit no shorter than the minimum given. Any longer duration is
/// taken (its users add it to a clock reading with a checked addition: one
/// too long for the clock means never).
pub(crate) struct Interval(pub Duration);

impl Value for Interval {
    type Out = Duration;
    fn parse(&self, s: &str) -> Result<Duration, String> {
        match parse_duration(s) {
            Some(d) if d >= self.0 => Ok(d),
            Some(_) => Err(format!(
                "is shorter than the minimum, {}",
                fmt_duration(self.0)
            )),
            None => Err("is not a duration like 500ms, 30s, 2m or 1h".into()),
        }
    }
    fn show(&self, v: &Duration) -> Option<String> {
        Some(fmt_duration(*v))
    }
}

/// A duration with a unit, in whole nanoseconds (saturating).
pub(crate) struct Nanos;

impl Value for Nanos {
    type Out = u64;
    fn parse(&self, s: &str) -> Result<u64, String> {
        Span(false)
            .parse(s)
            .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
    }
    fn show(&self, v: &u64) -> Option<String> {
        Some(fmt_duration(Duration::from_nanos(*v)))
    }
}

/// One name of a list, any case, each standing for a value.
pub(crate) struct Names<T: 'static>(pub &'static [(&'static str, T)]);

impl<T: Copy + PartialEq> Value for Names<T> {
    type Out = T;
    fn parse(&self, s: &str) -> Result<T, String> {
        let word = s.trim().to_ascii_lowercase();
        match self.0.iter().find(|(name, _)| *name == word) {
            Some(&(_, v)) => Ok(v),
            None => Err(format!("is not {}", one_of(self.0.iter().map(|(n, _)| *n)))),
        }
    }
    fn show(&self, v: &T) -> Option<String> {
        self.0
            .iter()
            .find(|(_, x)| x == v)
            .map(|(n, _)| (*n).to_owned())
    }
}

/// `a`, `a or b`, `one of a, b, c`.
pub(crate) fn one_of<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.collect();
    match names.as_slice() {
        [a] => (*a).to_owned(),
        [a, b] => format!("{a} or {b}"),
        _ => format!("one of {}", names.join(", ")),
    }
}

/// A signal name: `USR1`, `SIGUSR1`, any case (the names in upper case).
pub(crate) struct Signal<T: 'static>(pub &'static [(&'static str, T)]);

impl<T: Copy + PartialEq> Value for Signal<T> {
    type Out = T;
    fn parse(&self, s: &str) -> Result<T, String> {
        let name = s.trim().to_ascii_uppercase();
        let name = name.strip_prefix("SIG").unwrap_or(&name);
        match self.0.iter().find(|(n, _)| *n == name) {
            Some(&(_, v)) => Ok(v),
            None => Err(format!("is not {}", one_of(self.0.iter().map(|(n, _)| *n)))),
        }
    }
    fn show(&self, v: &T) -> Option<String> {
        Names(self.0).show(v)
    }
}

/// An optional value: the inner parser's value, or unset (`None`).
pub(crate) struct Opt<P>(pub P);

impl<P: Value> Value for Opt<P> {
    type Out = Option<P::Out>;
    fn parse(&self, s: &str) -> Result<Option<P::Out>, String> {
        self.0.parse(s).map(Some)
    }
    fn show(&self, v: &Option<P::Out>) -> Option<String> {
        v.as_ref().and_then(|v| self.0.show(v))
    }
}

/// The text as given (not trimmed).
pub(crate) struct Text;

impl Value for Text {
    type Out = String;
    fn parse(&self, s: &str) -> Result<String, String> {
        Ok(s.to_owned())
    }
    fn show(&self, v: &String) -> Option<String> {
        Some(v.clone())
    }
}

/// Comma-separated paths (trimmed; empty items dropped), byte for byte on Unix.
pub(crate) struct Paths;

impl Value for Paths {
    type Out = Vec<std::path::PathBuf>;
    fn parse(&self, s: &str) -> Result<Self::Out, String> {
        let items = s.split(',').map(str::trim);
        Ok(items.filter(|p| !p.is_empty()).map(Into::into).collect())
    }
    #[cfg(unix)]
    fn parse_os(&self, s: &OsStr) -> Result<Self::Out, String> {
        use std::os::unix::ffi::OsStrExt;
        let items = s.as_bytes().split(|b| *b == b',').map(<[u8]>::trim_ascii);
        let paths = items.filter(|p| !p.is_empty()).map(OsStr::from_bytes);
        Ok(paths.map(Into::into).collect())
    }
    fn show(&self, v: &Self::Out) -> Option<String> {
        let shown: Vec<_> = v.iter().map(|p| p.to_string_lossy()).collect();
        (!v.is_empty()).then(|| shown.join(","))
    }
}

/// A comma-separated list of whole numbers (empty items dropped).
pub(crate) struct Numbers;

impl Value for Numbers {
    type Out = Vec<u64>;
    fn parse(&self, s: &str) -> Result<Vec<u64>, String> {
        s.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::parse::<u64>)
            .collect::<Result<_, _>>()
            .map_err(|_| "is not a comma-separated list of whole numbers".into())
    }
    fn show(&self, v: &Vec<u64>) -> Option<String> {
        (!v.is_empty()).then(|| v.iter().map(u64::to_string).collect::<Vec<_>>().join(","))
    }
}

/// Two whole numbers, `N,K` (`TICKPROF_AFTER_INLINING`: the functions
/// marked, the functions left inlined).
pub(crate) struct Counts;

impl Value for Counts {
    type Out = (u64, u64);
    fn parse(&self, s: &str) -> Result<(u64, u64), String> {
        let number = |n: &str| n.trim().parse::<u64>().ok();
        match s.split_once(',') {
            Some((a, b)) => number(a).zip(number(b)),
            None => None,
        }
        .ok_or_else(|| "is not two whole numbers, `N,K`".into())
    }
    fn show(&self, v: &(u64, u64)) -> Option<String> {
        Some(format!("{},{}", v.0, v.1))
    }
}

/// Comma-separated glob patterns: `*` any run of characters, `?` one.
pub(crate) struct Globs;

impl Value for Globs {
    type Out = Vec<String>;
    fn parse(&self, s: &str) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        for p in s.split(',').map(str::trim) {
            if p.is_empty() {
                return Err(
                    "has an empty pattern (write patterns separated by single commas)".into(),
                );
            }
            if let Some(c) = p.chars().find(|c| matches!(c, '[' | ']' | '{' | '}')) {
                return Err(format!(
                    "has {c:?}{} (patterns use only * and ?, e.g. app::parse*)",
                    within(p, s)
                ));
            }
            out.push(p.to_owned());
        }
        Ok(out)
    }
    fn show(&self, v: &Vec<String>) -> Option<String> {
        (!v.is_empty()).then(|| v.join(","))
    }
}

/// `PORT` (on 127.0.0.1) or `IP:PORT`. An address outside loopback must be
/// written out: a bare port never listens beyond this machine.
pub(crate) struct Address;

impl Value for Address {
    type Out = SocketAddr;
    fn parse(&self, s: &str) -> Result<SocketAddr, String> {
        let s = s.trim();
        if let Ok(port) = s.parse::<u16>() {
            return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
        }
        s.parse()
            .map_err(|_| "is not PORT or IP:PORT (e.g. 127.0.0.1:6060)".into())
    }
    fn show(&self, v: &SocketAddr) -> Option<String> {
        Some(v.to_string())
    }
}

/// Parses `500ms`, `30s`, `1.5s`, `2m`, `1h`, `250us`, `250µs`, `100ns`, or
/// a bare `0`. A unit is required for anything else.
#[doc(hidden)]
pub fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let value: f64 = num.parse().ok()?;
    let scale = match unit.trim() {
        "" if value == 0.0 => 0.0,
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return None,
    };
    Duration::try_from_secs_f64(value * scale).ok()
}

/// A duration as [`parse_duration`] reads it: the largest unit that
/// divides it (`1h`, `90s`, `250ms`), or `0`.
pub(crate) fn fmt_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns == 0 {
        return "0".into();
    }
    for (unit, size) in [
        ("h", 3_600_000_000_000u128),
        ("m", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
    ] {
        if ns % size == 0 {
            return format!("{}{unit}", ns / size);
        }
    }
    format!("{ns}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every parser reads back what it shows.
    fn round_trips<P: Value>(p: &P, v: P::Out)
    where
        P::Out: PartialEq + std::fmt::Debug,
    {
        let shown = p.show(&v).expect("a value shows");
        assert_eq!(p.parse(&shown).as_ref(), Ok(&v), "{shown}");
    }

    #[test]
    fn switches() {
        for on in ["on", "1", "TRUE", " yes "] {
            assert_eq!(Switch.parse(on), Ok(true), "{on}");
        }
        for off in ["off", "0", "False", "no"] {
            assert_eq!(Switch.parse(off), Ok(false), "{off}");
        }
        assert_eq!(
            Switch.parse("maybe"),
            Err("is not on or off (1 or 0)".into())
        );
        round_trips(&Switch, true);
        round_trips(&Switch, false);
    }

    #[test]
    fn whole_numbers_and_limits() {
        assert_eq!(Whole(0usize).parse(" 7 "), Ok(7));
        assert_eq!(Whole(0usize).parse("0"), Ok(0));
        assert_eq!(
            Whole(0usize).parse("-1"),
            Err("is not a whole number".into())
        );
        assert_eq!(
            Whole(1usize).parse("0"),
            Err("is not a positive whole number".into())
        );
        assert_eq!(
            Whole(3u64).parse("2"),
            Err("is not a whole number of at least 3".into())
        );
        assert_eq!(Whole(0u64).parse("18446744073709551615"), Ok(u64::MAX));
        round_trips(&Whole(1usize), 64);
        assert_eq!(Limit.parse("0"), Ok(None));
        assert_eq!(Limit.parse("5"), Ok(Some(5)));
        assert!(Limit.parse("ten").is_err());
        round_trips(&Limit, None);
        round_trips(&Limit, Some(3));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("30s"), Some(Duration::from_secs(30)));
        assert_eq!(parse_duration("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("2min"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Some(Duration::from_secs(3600)));
        assert_eq!(parse_duration("250µs"), Some(Duration::from_micros(250)));
        assert_eq!(parse_duration("100ns"), Some(Duration::from_nanos(100)));
        assert_eq!(parse_duration("0"), Some(Duration::ZERO));
        assert_eq!(parse_duration("10"), None);
        assert_eq!(parse_duration("abc"), None);
        assert_eq!(parse_duration("5 parsecs"), None);
        assert_eq!(parse_duration("-5s"), None);
        assert_eq!(parse_duration(""), None);
        assert_eq!(fmt_duration(Duration::from_secs(3600)), "1h");
        assert_eq!(fmt_duration(Duration::from_millis(1500)), "1500ms");
        assert_eq!(fmt_duration(Duration::from_nanos(1001)), "1001ns");
        assert_eq!(fmt_duration(Duration::ZERO), "0");
        for d in [
            0,
            1,
            999,
            1_000,
            1_500_000,
            90_000_000_000,
            7_200_000_000_000,
        ] {
            round_trips(&Span(false), Duration::from_nanos(d));
            round_trips(&Nanos, d);
        }
        assert!(Span(true).parse("0s").is_err());
        let every = Interval(Duration::from_millis(100));
        assert_eq!(every.parse("100ms"), Ok(Duration::from_millis(100)));
        assert_eq!(
            every.parse("1ns"),
            Err("is shorter than the minimum, 100ms".into())
        );
        assert_eq!(
            every.parse("0"),
            Err("is shorter than the minimum, 100ms".into())
        );
        assert!(every.parse("10").is_err());
        // Any length is taken; its users add it with a checked addition.
        let long = every.parse("3000000000000000h").unwrap();
        assert_eq!(long.as_secs(), 3_000_000_000_000_000 * 3600);
        round_trips(&every, Duration::from_secs(15));
        assert!(Span(false).parse("0s").is_ok());
        assert_eq!(Nanos.parse("5us"), Ok(5_000));
    }

    #[test]
    fn warnings_quote_at_most_a_hundred_bytes() {
        assert_eq!(quoted("a\"b"), "\"a\\\"b\"");
        let long = "é".repeat(100_000);
        let q = quoted(&long);
        assert!(q.ends_with("\"… (200000 bytes)"), "{q}");
        assert_eq!(q.len(), 1 + 100 + 1 + "… (200000 bytes)".len());
        assert_eq!(
            named(&"x".repeat(101)),
            format!("{}… (101 bytes)", "x".repeat(100))
        );
        assert_eq!(within("a b", " a b "), "");
        assert_eq!(within("a", "a,b"), " in \"a\"");
    }

    #[test]
    fn names_and_signals() {
        const N: Names<u8> = Names(&[("total", 1), ("delta", 2)]);
        assert_eq!(N.parse(" Delta "), Ok(2));
        assert_eq!(N.parse("x"), Err("is not total or delta".into()));
        round_trips(&N, 1);
        const M: Names<u8> = Names(&[("a", 1), ("b", 2), ("c", 3)]);
        assert_eq!(M.parse("d"), Err("is not one of a, b, c".into()));
        const S: Signal<u8> = Signal(&[("USR1", 1), ("USR2", 2)]);
        assert_eq!(S.parse("sigusr2"), Ok(2));
        assert_eq!(S.parse("USR1"), Ok(1));
        assert_eq!(S.parse("TERM"), Err("is not USR1 or USR2".into()));
        round_trips(&S, 2);
        round_trips(&Opt(S), Some(1));
        assert_eq!(Opt(S).show(&None), None);
    }

    #[test]
    fn lists() {
        assert_eq!(
            Paths.parse(" a.csv, ,b.txt "),
            Ok(vec!["a.csv".into(), "b.txt".into()])
        );
        round_trips(&Paths, vec!["a.csv".into(), "b.txt".into()]);
        assert_eq!(Counts.parse("52, 220"), Ok((52, 220)));
        for bad in ["52", "52,", "a,1", "1,2,3"] {
            assert!(Counts.parse(bad).is_err(), "{bad}");
        }
        round_trips(&Counts, (0, 7));
        assert_eq!(Numbers.parse("1, 3,"), Ok(vec![1, 3]));
        assert!(Numbers.parse("main").is_err());
        round_trips(&Numbers, vec![1, 3]);
        assert_eq!(
            Globs.parse("app::*, main"),
            Ok(vec!["app::*".into(), "main".into()])
        );
        assert!(Globs.parse("a,,b").unwrap_err().contains("empty pattern"));
        assert!(Globs.parse("[ab]").unwrap_err().contains("'['"));
        round_trips(&Globs, vec!["app::*".into(), "main".into()]);
        assert_eq!(Text.parse(" a=panic "), Ok(" a=panic ".into()));
    }

    #[test]
    fn addresses() {
        assert_eq!(Address.parse("6060"), Ok(([127, 0, 0, 1], 6060).into()));
        assert_eq!(
            Address.parse("0.0.0.0:7070"),
            Ok(([0, 0, 0, 0], 7070).into())
        );
        assert!(Address.parse("localhost").is_err());
        round_trips(&Address, ([10, 0, 0, 1], 80).into());
    }
}
