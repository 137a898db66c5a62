//! Environment settings, parsed once into typed values.
//!
//! A bad value gives one warning line naming the variable, and the default.

pub use crate::log::LogOptions;
pub use crate::report::{Layout, SortKey};
use std::time::Duration;

mod log;

/// Default `TICKPROF_MAX_DELTA`: one hour.
pub const DEFAULT_MAX_DELTA: Duration = Duration::from_secs(3600);
/// Default `TICKPROF_MAX_NODES`: calling-context tree nodes per thread.
pub const DEFAULT_MAX_NODES: usize = 1_000_000;
/// Default `TICKPROF_TRACE_EVENTS`: trace events kept per thread.
pub const DEFAULT_TRACE_EVENTS: usize = 2_000_000;
/// Default `TICKPROF_THREADS_KEPT`: distinct names of finished threads that
/// keep a per-thread row; later names share one `<other threads>` row.
pub const DEFAULT_THREADS_KEPT: usize = 64;

/// All settings, with defaults for what was unset or invalid.
#[derive(Clone, Debug)]
pub struct Config {
    /// `TICKPROF`: record and report (true) or do nothing (false).
    pub enabled: bool,
    /// `TICKPROF_OUT`: extra output files, format chosen by extension.
    pub outputs: Vec<String>,
    /// `TICKPROF_TOP`: at most this many rows in the text table.
    pub top: Option<usize>,
    /// `TICKPROF_SORT`.
    pub sort: SortKey,
    /// `TICKPROF_MAX_DELTA`: deltas above this are rejected as oversized.
    pub max_delta: Duration,
    /// `TICKPROF_MAX_NODES`: calling-context tree nodes per thread.
    pub max_nodes: usize,
    /// `TICKPROF_REPORT`.
    pub layout: Layout,
    /// `TICKPROF_THREADS`: add a per-thread breakdown.
    pub threads: bool,
    /// `TICKPROF_COMPENSATE`: show figures with the calibrated
    /// instrumentation cost subtracted (true) or raw (false).
    pub compensate: bool,
    /// `TICKPROF_TRACE` (or a `.trace.json` output): record every call as an
    /// event for the trace output.
    pub trace: bool,
    /// `TICKPROF_TRACE_EVENTS`: events kept per thread.
    pub trace_events: usize,
    /// `TICKPROF_THREADS_KEPT`: finished threads are merged by name into
    /// per-thread rows; at most this many distinct names keep a row, and
    /// the threads of any further name share one `<other threads>` row (the
    /// merged totals always have every thread).
    pub threads_kept: usize,
    /// `TICKPROF_STDERR`: print the exit report to stderr (true, the
    /// default) or not (false; the `TICKPROF_OUT` files are still written).
    pub stderr: bool,
    /// `TICKPROF_LOG`: the trace log's destination, `stderr` or a path
    /// (`None`: no log).
    pub log: Option<String>,
    /// `TICKPROF_LOG_FILTER`, `_NOTRACE`, `_DEPTH`, `_THRESHOLD`, `_TID`.
    pub log_options: LogOptions,
    /// `TICKPROF_REPORT=coverage`: list the marks that never ran.
    pub coverage: bool,
    /// `TICKPROF_FAIL`: the failpoint table, in the `fail` crate's syntax
    /// (checked when it is armed: a bad entry warns there).
    pub fail: Option<String>,
    /// `TICKPROF_FAIL_SEED`: the seed of the failpoints' probabilities
    /// (default [`DEFAULT_FAIL_SEED`]).
    pub fail_seed: u64,
    /// `TICKPROF_DUMP_SIGNAL`: write the report each time this signal
    /// arrives, without stopping the program.
    pub dump_signal: Option<DumpSignal>,
    /// `TICKPROF_DUMP_INTERVAL`: write the report this often.
    pub dump_interval: Option<Duration>,
    /// `TICKPROF_DUMP`: what each dump covers.
    pub dump_mode: DumpMode,
    /// `TICKPROF_ON_TERM`: on SIGTERM, SIGINT or SIGHUP write the final
    /// report, then terminate as the signal's default action would.
    pub on_term: bool,
    /// `TICKPROF_HTTP`: serve pprof profiles at this address, at
    /// `/debug/pprof/profile`.
    pub http: Option<std::net::SocketAddr>,
}

/// A signal that asks for a report (`TICKPROF_DUMP_SIGNAL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DumpSignal {
    /// `SIGUSR1`.
    Usr1,
    /// `SIGUSR2`.
    Usr2,
}

/// What a report written before exit covers (`TICKPROF_DUMP`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DumpMode {
    /// The run so far (the default).
    #[default]
    Total,
    /// Only what happened since the previous dump (the first: since the
    /// start or the last `reset()`).
    Delta,
}

/// The seed of the failpoints' probabilities when `TICKPROF_FAIL_SEED` is
/// not set: runs are reproducible by default.
pub const DEFAULT_FAIL_SEED: u64 = 0x7469_636b_7072_6f66;

impl Default for Config {
    fn default() -> Self {
        Config {
            enabled: true,
            outputs: Vec::new(),
            top: None,
            sort: SortKey::Total,
            max_delta: DEFAULT_MAX_DELTA,
            max_nodes: DEFAULT_MAX_NODES,
            layout: Layout::Flat,
            threads: false,
            compensate: true,
            trace: false,
            trace_events: DEFAULT_TRACE_EVENTS,
            threads_kept: DEFAULT_THREADS_KEPT,
            stderr: true,
            dump_signal: None,
            dump_interval: None,
            dump_mode: DumpMode::Total,
            on_term: false,
            http: None,
            log: None,
            log_options: LogOptions::default(),
            coverage: false,
            fail: None,
            fail_seed: DEFAULT_FAIL_SEED,
        }
    }
}

impl Config {
    /// `TICKPROF_REPORT`: `flat`, `tree`, `coverage`, or a comma list such as
    /// `tree,coverage` (at most one of flat and tree).
    fn report_values(v: &str) -> Option<(Layout, bool)> {
        let (mut layout, mut coverage) = (None, false);
        for word in v.split(',').map(|w| w.trim().to_ascii_lowercase()) {
            match word.as_str() {
                "flat" if layout.is_none() => layout = Some(Layout::Flat),
                "tree" if layout.is_none() => layout = Some(Layout::Tree),
                "coverage" if !coverage => coverage = true,
                _ => return None,
            }
        }
        Some((layout.unwrap_or(Layout::Flat), coverage))
    }

    /// Parses settings through `get` (the environment in production).
    /// Returns the settings and one warning line per bad value.
    pub fn parse(get: impl Fn(&str) -> Option<String>) -> (Config, Vec<String>) {
        let mut c = Config::default();
        let mut warnings = Vec::new();
        let mut warn = |var: &str, value: &str, why: &str, default: &str| {
            warnings.push(format!(
                "tickprof: warning: {var}={value:?} {why}; using the default ({default})"
            ));
        };
        if let Some(v) = get("TICKPROF") {
            match v.trim().to_ascii_lowercase().as_str() {
                "off" | "0" | "false" | "no" => c.enabled = false,
                "on" | "1" | "true" | "yes" | "" => c.enabled = true,
                _ => warn("TICKPROF", &v, "is not on or off", "on"),
            }
        }
        let mut bad_outputs = Vec::new();
        if let Some(v) = get("TICKPROF_OUT") {
            for path in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                if crate::export::format_of(path).is_some() {
                    c.outputs.push(path.to_owned());
                } else {
                    bad_outputs.push(format!(
                        "tickprof: warning: TICKPROF_OUT: {path:?} has no known extension ({}); not written",
                        crate::export::EXTENSIONS.join(" ")
                    ));
                }
            }
        }
        if let Some(v) = get("TICKPROF_TOP") {
            match v.trim().parse::<usize>() {
                Ok(0) => c.top = None,
                Ok(n) => c.top = Some(n),
                Err(_) => warn("TICKPROF_TOP", &v, "is not a whole number", "all rows"),
            }
        }
        if let Some(v) = get("TICKPROF_SORT") {
            match v.trim().to_ascii_lowercase().as_str() {
                "total" => c.sort = SortKey::Total,
                "self" => c.sort = SortKey::SelfTime,
                "calls" => c.sort = SortKey::Calls,
                "mean" => c.sort = SortKey::Mean,
                "name" => c.sort = SortKey::Name,
                "bytes" => c.sort = SortKey::Bytes,
                "allocs" => c.sort = SortKey::Allocs,
                _ => warn(
                    "TICKPROF_SORT",
                    &v,
                    "is not one of total, self, calls, mean, name, bytes, allocs",
                    "total",
                ),
            }
        }
        if let Some(v) = get("TICKPROF_MAX_DELTA") {
            match parse_duration(&v) {
                Some(d) if !d.is_zero() => c.max_delta = d,
                _ => warn(
                    "TICKPROF_MAX_DELTA",
                    &v,
                    "is not a positive duration like 500ms, 30s, 2m or 1h",
                    &fmt_duration(DEFAULT_MAX_DELTA),
                ),
            }
        }
        if let Some(v) = get("TICKPROF_MAX_NODES") {
            match v.trim().parse::<usize>() {
                Ok(n) if n >= 1 => c.max_nodes = n,
                _ => warn(
                    "TICKPROF_MAX_NODES",
                    &v,
                    "is not a positive whole number",
                    &DEFAULT_MAX_NODES.to_string(),
                ),
            }
        }
        if let Some(v) = get("TICKPROF_REPORT") {
            match Self::report_values(&v) {
                Some((layout, coverage)) => (c.layout, c.coverage) = (layout, coverage),
                None => warn(
                    "TICKPROF_REPORT",
                    &v,
                    "is not flat, tree, coverage or a comma list of them",
                    "flat",
                ),
            }
        }
        if let Some(v) = get("TICKPROF_THREADS") {
            match v.trim().to_ascii_lowercase().as_str() {
                "1" | "on" | "true" | "yes" => c.threads = true,
                "0" | "off" | "false" | "no" | "" => c.threads = false,
                _ => warn("TICKPROF_THREADS", &v, "is not 0 or 1", "0"),
            }
        }
        if let Some(v) = get("TICKPROF_COMPENSATE") {
            match v.trim().to_ascii_lowercase().as_str() {
                "1" | "on" | "true" | "yes" | "" => c.compensate = true,
                "0" | "off" | "false" | "no" => c.compensate = false,
                _ => warn("TICKPROF_COMPENSATE", &v, "is not 0 or 1", "1"),
            }
        }
        if let Some(v) = get("TICKPROF_TRACE") {
            match v.trim().to_ascii_lowercase().as_str() {
                "1" | "on" | "true" | "yes" => c.trace = true,
                "0" | "off" | "false" | "no" | "" => c.trace = false,
                _ => warn("TICKPROF_TRACE", &v, "is not 0 or 1", "0"),
            }
        }
        if let Some(v) = get("TICKPROF_TRACE_EVENTS") {
            match v.trim().parse::<usize>() {
                Ok(n) if n >= 1 => c.trace_events = n,
                _ => warn(
                    "TICKPROF_TRACE_EVENTS",
                    &v,
                    "is not a positive whole number",
                    &DEFAULT_TRACE_EVENTS.to_string(),
                ),
            }
        }
        if let Some(v) = get("TICKPROF_THREADS_KEPT") {
            match v.trim().parse::<usize>() {
                Ok(n) => c.threads_kept = n,
                _ => warn(
                    "TICKPROF_THREADS_KEPT",
                    &v,
                    "is not a whole number",
                    &DEFAULT_THREADS_KEPT.to_string(),
                ),
            }
        }
        if let Some(v) = get("TICKPROF_STDERR") {
            match v.trim().to_ascii_lowercase().as_str() {
                "1" | "on" | "true" | "yes" | "" => c.stderr = true,
                "0" | "off" | "false" | "no" => c.stderr = false,
                _ => warn("TICKPROF_STDERR", &v, "is not 0 or 1", "1"),
            }
        }
        if let Some(v) = get("TICKPROF_DUMP_SIGNAL") {
            let name = v.trim().to_ascii_uppercase();
            match name.strip_prefix("SIG").unwrap_or(&name) {
                "USR1" => c.dump_signal = Some(DumpSignal::Usr1),
                "USR2" => c.dump_signal = Some(DumpSignal::Usr2),
                "" => c.dump_signal = None,
                _ => warn("TICKPROF_DUMP_SIGNAL", &v, "is not USR1 or USR2", "none"),
            }
        }
        if let Some(v) = get("TICKPROF_DUMP_INTERVAL") {
            match parse_duration(&v) {
                Some(d) if !d.is_zero() => c.dump_interval = Some(d),
                _ if v.trim().is_empty() => c.dump_interval = None,
                _ => warn(
                    "TICKPROF_DUMP_INTERVAL",
                    &v,
                    "is not a positive duration like 500ms, 30s, 2m or 1h",
                    "none",
                ),
            }
        }
        if let Some(v) = get("TICKPROF_DUMP") {
            match v.trim().to_ascii_lowercase().as_str() {
                "total" | "" => c.dump_mode = DumpMode::Total,
                "delta" => c.dump_mode = DumpMode::Delta,
                _ => warn("TICKPROF_DUMP", &v, "is not total or delta", "total"),
            }
        }
        if let Some(v) = get("TICKPROF_ON_TERM") {
            match v.trim().to_ascii_lowercase().as_str() {
                "1" | "on" | "true" | "yes" => c.on_term = true,
                "0" | "off" | "false" | "no" | "" => c.on_term = false,
                _ => warn("TICKPROF_ON_TERM", &v, "is not 0 or 1", "0"),
            }
        }
        if let Some(v) = get("TICKPROF_HTTP") {
            match parse_http(&v) {
                Some(a) => c.http = Some(a),
                None if v.trim().is_empty() => c.http = None,
                None => warn(
                    "TICKPROF_HTTP",
                    &v,
                    "is not PORT or IP:PORT (e.g. 127.0.0.1:6060)",
                    "not served",
                ),
            }
        }
        c.fail = get("TICKPROF_FAIL").filter(|v| !v.trim().is_empty());
        if let Some(v) = get("TICKPROF_FAIL_SEED") {
            match v.trim().parse::<u64>() {
                Ok(n) => c.fail_seed = n,
                _ => warn(
                    "TICKPROF_FAIL_SEED",
                    &v,
                    "is not a whole number",
                    &DEFAULT_FAIL_SEED.to_string(),
                ),
            }
        }
        c.log = log::target(&get);
        let (log_options, log_warnings) = log::parse(&get);
        c.log_options = log_options;
        warnings.extend(log_warnings);
        if c.outputs.iter().any(|p| p.ends_with(".trace.json")) {
            c.trace = true;
        }
        warnings.extend(bad_outputs);
        (c, warnings)
    }

    /// Parses the process environment. A variable that is set but not valid
    /// Unicode counts as a bad value.
    pub fn from_env() -> (Config, Vec<String>) {
        Config::parse(|name| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned()))
    }
}

/// `PORT` (on 127.0.0.1) or `IP:PORT`. An address outside loopback must be
/// written out: a bare port never listens beyond this machine.
fn parse_http(s: &str) -> Option<std::net::SocketAddr> {
    let s = s.trim();
    if let Ok(port) = s.parse::<u16>() {
        return Some(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    }
    s.parse().ok()
}

/// A duration as `parse_duration` reads it: the largest unit that
/// divides it (`1h`, `90s`, `250ms`).
fn fmt_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    for (unit, size) in [
        ("h", 3_600_000_000_000u128),
        ("m", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
    ] {
        if ns >= size && ns % size == 0 {
            return format!("{}{unit}", ns / size);
        }
    }
    format!("{ns}ns")
}

/// Parses `500ms`, `30s`, `1.5s`, `2m`, `1h`, `250us`, `250µs`, `100ns`.
/// A unit is required.
pub(crate) fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (num, unit) = s.split_at(split);
    let value: f64 = num.parse().ok()?;
    let scale = match unit.trim() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn parse(vars: &[(&str, &str)]) -> (Config, Vec<String>) {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::parse(|k| map.get(k).cloned())
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("30s"), Some(Duration::from_secs(30)));
        assert_eq!(parse_duration("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Some(Duration::from_secs(3600)));
        assert_eq!(parse_duration("250µs"), Some(Duration::from_micros(250)));
        assert_eq!(parse_duration("10"), None);
        assert_eq!(parse_duration("abc"), None);
        assert_eq!(parse_duration("5 parsecs"), None);
        assert_eq!(parse_duration("-5s"), None);
    }

    #[test]
    fn defaults_print_as_they_parse() {
        assert_eq!(fmt_duration(DEFAULT_MAX_DELTA), "1h");
        assert_eq!(
            parse_duration(&fmt_duration(DEFAULT_MAX_DELTA)),
            Some(DEFAULT_MAX_DELTA)
        );
        assert_eq!(fmt_duration(Duration::from_millis(1500)), "1500ms");
    }

    #[test]
    fn defaults_when_unset() {
        let (c, w) = parse(&[]);
        assert!(w.is_empty());
        assert!(c.enabled);
        assert_eq!(c.max_delta, DEFAULT_MAX_DELTA);
        assert_eq!(c.sort, SortKey::Total);
        assert_eq!(c.top, None);
    }

    #[test]
    fn valid_values() {
        let (c, w) = parse(&[
            ("TICKPROF", "off"),
            ("TICKPROF_TOP", "5"),
            ("TICKPROF_SORT", "calls"),
            ("TICKPROF_MAX_DELTA", "30s"),
            ("TICKPROF_OUT", "a.csv, b.txt"),
            ("TICKPROF_REPORT", "tree"),
        ]);
        assert!(w.is_empty(), "{w:?}");
        assert!(!c.enabled);
        assert_eq!(c.top, Some(5));
        assert_eq!(c.sort, SortKey::Calls);
        assert_eq!(c.max_delta, Duration::from_secs(30));
        assert_eq!(c.outputs, vec!["a.csv".to_string(), "b.txt".to_string()]);
        assert_eq!(c.layout, Layout::Tree);
        assert!(!c.trace);
        assert_eq!(parse(&[("TICKPROF_SORT", "bytes")]).0.sort, SortKey::Bytes);
        assert_eq!(
            parse(&[("TICKPROF_SORT", "Allocs")]).0.sort,
            SortKey::Allocs
        );
        let (c, w) = parse(&[
            ("TICKPROF_OUT", "run.trace.json"),
            ("TICKPROF_TRACE_EVENTS", "10"),
            ("TICKPROF_THREADS_KEPT", "0"),
        ]);
        assert!(w.is_empty(), "{w:?}");
        assert!(c.trace, "a .trace.json output turns tracing on");
        assert_eq!(c.trace_events, 10);
        assert_eq!(c.threads_kept, 0);
        assert_eq!(Config::default().threads_kept, DEFAULT_THREADS_KEPT);
    }

    #[test]
    fn each_bad_value_gives_one_warning_naming_the_variable_and_the_default() {
        for (var, bad) in [
            ("TICKPROF", "maybe"),
            ("TICKPROF_TOP", "ten"),
            ("TICKPROF_SORT", "size"),
            ("TICKPROF_MAX_DELTA", "10"),
            ("TICKPROF_MAX_NODES", "0"),
            ("TICKPROF_REPORT", "graph"),
            ("TICKPROF_THREADS", "2"),
            ("TICKPROF_COMPENSATE", "maybe"),
            ("TICKPROF_TRACE", "yes please"),
            ("TICKPROF_TRACE_EVENTS", "-1"),
            ("TICKPROF_THREADS_KEPT", "many"),
            ("TICKPROF_DUMP_SIGNAL", "TERM"),
            ("TICKPROF_DUMP_INTERVAL", "30"),
            ("TICKPROF_DUMP", "sometimes"),
            ("TICKPROF_ON_TERM", "please"),
            ("TICKPROF_HTTP", "localhost"),
            ("TICKPROF_REPORT", "tree,flat"),
            ("TICKPROF_FAIL_SEED", "abc"),
        ] {
            let (c, w) = parse(&[(var, bad)]);
            assert_eq!(w.len(), 1, "{var}: {w:?}");
            assert!(w[0].contains(var) && w[0].contains("default"), "{}", w[0]);
            assert!(!w[0].contains('\n'));
            let d = Config::default();
            assert_eq!(c.enabled, d.enabled);
            assert_eq!(c.top, d.top);
            assert_eq!(c.sort, d.sort);
            assert_eq!(c.max_delta, d.max_delta);
            assert_eq!(c.max_nodes, d.max_nodes);
            assert_eq!(c.threads_kept, d.threads_kept);
            assert_eq!(c.dump_signal, d.dump_signal);
            assert_eq!(c.dump_interval, d.dump_interval);
            assert_eq!(c.dump_mode, d.dump_mode);
            assert_eq!(c.on_term, d.on_term);
        }
        let (c, w) = parse(&[("TICKPROF_OUT", "a.csv,b.xyz")]);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("TICKPROF_OUT") && w[0].contains("b.xyz"));
        assert_eq!(c.outputs, vec!["a.csv".to_string()]);
    }

    #[test]
    fn dump_settings() {
        let (c, w) = parse(&[
            ("TICKPROF_DUMP_SIGNAL", "sigusr2"),
            ("TICKPROF_DUMP_INTERVAL", "1.5s"),
            ("TICKPROF_DUMP", "delta"),
            ("TICKPROF_ON_TERM", "1"),
        ]);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(c.dump_signal, Some(DumpSignal::Usr2));
        assert_eq!(c.dump_interval, Some(Duration::from_millis(1500)));
        assert_eq!(c.dump_mode, DumpMode::Delta);
        assert!(c.on_term);
        let (c, w) = parse(&[("TICKPROF_DUMP_SIGNAL", "USR1"), ("TICKPROF_ON_TERM", "0")]);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(c.dump_signal, Some(DumpSignal::Usr1));
        assert!(!c.on_term);
        let (c, _) = parse(&[("TICKPROF_HTTP", "6060")]);
        assert_eq!(c.http, Some(([127, 0, 0, 1], 6060).into()));
        let (c, _) = parse(&[("TICKPROF_HTTP", "0.0.0.0:7070")]);
        assert_eq!(c.http, Some(([0, 0, 0, 0], 7070).into()));
    }

    #[test]
    fn report_lists_coverage_and_fail_settings_parse() {
        for (v, layout) in [
            ("coverage", Layout::Flat),
            ("tree, coverage", Layout::Tree),
            ("COVERAGE,flat", Layout::Flat),
        ] {
            let (c, w) = parse(&[("TICKPROF_REPORT", v)]);
            assert!(
                w.is_empty() && c.coverage && c.layout == layout,
                "{v}: {w:?}"
            );
        }
        let (c, w) = parse(&[("TICKPROF_FAIL", " a=panic "), ("TICKPROF_FAIL_SEED", "9")]);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(c.fail.as_deref(), Some(" a=panic "));
        assert_eq!(c.fail_seed, 9);
        let (c, _) = parse(&[("TICKPROF_FAIL", "  ")]);
        assert_eq!(c.fail, None);
        assert_eq!(c.fail_seed, DEFAULT_FAIL_SEED);
    }

    #[test]
    fn stderr_report_can_be_turned_off_and_a_bad_value_warns() {
        assert!(parse(&[]).0.stderr, "on by default");
        for off in ["0", "off", "false", "no", " 0 "] {
            let (c, w) = parse(&[("TICKPROF_STDERR", off)]);
            assert!(!c.stderr && w.is_empty(), "{off:?}: {w:?}");
        }
        for on in ["1", "on", "TRUE", ""] {
            let (c, w) = parse(&[("TICKPROF_STDERR", on)]);
            assert!(c.stderr && w.is_empty(), "{on:?}: {w:?}");
        }
        let (c, w) = parse(&[("TICKPROF_STDERR", "quiet")]);
        assert!(c.stderr);
        assert_eq!(w.len(), 1);
        assert!(
            w[0].contains("TICKPROF_STDERR") && w[0].contains("default (1)"),
            "{}",
            w[0]
        );
    }
}
