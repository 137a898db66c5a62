//! Environment settings, parsed once into typed values.
//!
//! One table (the `settings!` rows below, and the trace log's in
//! `config/log.rs`; the macro is in `config/table.rs`, the value parsers
//! in `config/values.rs`) declares every variable: its `Config` field, parser, default
//! and help. The struct, its `Default`, the reader, its warnings and the
//! docs table (`docs/configuration.md`, checked by a test) all come from
//! it. A bad value gives one warning line naming the variable, the value
//! and the default, which is then used; a value of only blanks counts as
//! unset.

use crate::defaults::{
    DEFAULT_FAIL_SEED, DEFAULT_MAX_DELTA, DEFAULT_MAX_NODES, DEFAULT_SAMPLE_HZ,
    DEFAULT_THREADS_KEPT, DEFAULT_TRACE_EVENTS, MAX_SAMPLE_HZ, MIN_INTERVAL,
};
pub use crate::report::{Layout, SortKey};
pub use log::LogOptions;
pub use push::PushTarget;
#[cfg(feature = "enabled")]
pub(crate) use push::{is_app_name, plain as app_char};
#[cfg(all(feature = "enabled", feature = "failpoints"))]
pub(crate) use values::named;
pub use values::parse_duration;
#[cfg(feature = "enabled")]
pub(crate) use values::quoted;

use push::{AppName, Labels, PushUrl};
use sections::SectionList;
use table::settings;
use values::{
    Address, Counts, Interval, Limit, Names, Opt, Paths, Signal, Span, Switch, Text, Value, Whole,
};

mod known;
mod log;
mod push;
mod sections;
pub(crate) mod table;
#[cfg(test)]
mod tests;
mod values;

settings! {
    /// All settings, with defaults for what was unset or invalid.
    ///
    /// Read from the environment once, at start-up ([`Config::from_env`]);
    /// `Config::default()` is what an empty environment gives. Build one
    /// from the default and set the fields you need.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut config = tickprof_runtime::Config::default();
    /// config.top = Some(10);
    /// assert!(config.enabled);
    /// ```
    pub struct Config {
        /// Record and report (true) or do nothing (false).
        enabled: bool {
            var: "TICKPROF",
            parse: Switch,
            default: true,
            help: "`off` (also `0`, `false`, `no`): record nothing, print nothing; `on` (also `1`, `true`, `yes`)",
        },
        /// Start with recording paused until `tickprof::resume()`.
        paused: bool {
            var: "TICKPROF_PAUSED",
            parse: Switch,
            default: false,
            help: "`on`: start with recording paused: marked calls cost what they cost with `TICKPROF=off` and are not counted until the program calls `tickprof::resume()` (see [pause and resume](guide.md#pause-and-resume)); `off`: record from start-up",
        },
        /// Extra output files, format chosen by extension (an unknown
        /// extension is dropped with a warning).
        outputs: Vec<std::path::PathBuf> {
            var: "TICKPROF_OUT",
            parse: Paths,
            default: Vec::new(),
            note: "no files",
            help: "`path[,path…]`: also write these files at exit, the format chosen by the extension (see [formats](formats.md)). In a path, `%p` becomes the process id, `%e` the executable's file name, `%%` a `%`. A comma cannot be part of a path; a path need not be UTF-8. An unknown extension gives one warning line; a path that cannot be written (a missing or read-only directory, a FIFO or device at the path) one warning at start-up; it is tried again at exit (files are replaced safely: see [formats](formats.md#how-files-are-written)).",
        },
        /// Print the exit report to stderr (true) or not (false; the
        /// `TICKPROF_OUT` files are still written).
        stderr: bool {
            var: "TICKPROF_STDERR",
            parse: Switch,
            default: true,
            help: "`off`: do not print the exit report on stderr (the `TICKPROF_OUT` files are still written); `on`: print it",
        },
        /// Record every call as an event for the trace output (also turned
        /// on by a `.trace.json` output).
        trace: bool {
            var: "TICKPROF_TRACE",
            parse: Switch,
            default: false,
            help: "`on`: record every call for the trace output (also turned on by a `.trace.json` path in `TICKPROF_OUT`; without one, writes `tickprof.trace.json` in the current directory and says so on stderr)",
        },
        /// Trace events kept per thread.
        trace_events: usize {
            var: "TICKPROF_TRACE_EVENTS",
            parse: Whole(1),
            default: DEFAULT_TRACE_EVENTS,
            help: "events kept per thread for the trace; later ones are counted as dropped",
        },
        /// At most this many rows in the text table (`None`: all).
        top: Option<usize> {
            var: "TICKPROF_TOP",
            parse: Limit,
            default: None,
            note: "all rows",
            help: "`N`: at most N rows in the text table (the report says how many were left out); `0`: all",
        },
        /// The text table's order.
        sort: SortKey {
            var: "TICKPROF_SORT",
            parse: SORT_KEYS,
            default: SortKey::SelfTime,
            help: "`self` (the default: where the time is spent, as perf's and gprof's flat profiles), `total`, `calls`, `mean`, `bytes` (total bytes allocated), `allocs` (total allocations) (descending) or `name` (ascending); `bytes` and `allocs` need [`Alloc`](tools.md#allocation-profiling)",
        },
        /// Deltas above this are rejected as oversized.
        max_delta: std::time::Duration {
            var: "TICKPROF_MAX_DELTA",
            parse: Span(true),
            default: DEFAULT_MAX_DELTA,
            help: "a duration with a unit: `500ms`, `30s`, `2m`, `1h`, `250us`, `100ns`. Longer calls are rejected as oversized.",
        },
        /// Calling-context tree nodes per thread.
        max_nodes: usize {
            var: "TICKPROF_MAX_NODES",
            parse: Whole(1),
            default: DEFAULT_MAX_NODES,
            help: "calling-context tree nodes per thread (a memory bound, 256 bytes a node); beyond it, calls on new paths are recorded on one overflow node per site (their counts and times stay in the site's figures) and the report says how many were folded",
        },
        /// The text report's layout and sections.
        report: ReportSections {
            var: "TICKPROF_REPORT",
            parse: SectionList,
            default: ReportSections::default(),
            help: "`flat`, or `tree`: after the table, a section per site with its callers and callees (see [the report](report.md)). `coverage`: list the marks that never ran (see [coverage](tools.md#coverage-marks-that-never-ran)). `verbose`: the whole header (the clock and its source, pauses, time waited for a CPU, threads' set-up, faults armed), not its first three lines (see [the header](report.md#the-header)). Combine as a comma list, at most one of `flat` and `tree`: `tree,coverage,verbose`",
        },
        /// Which calls read the clock: adaptive (too-short sites become
        /// counted) or all.
        time: TimeMode {
            var: "TICKPROF_TIME",
            parse: Names(&[
                ("adaptive", TimeMode::Adaptive),
                ("all", TimeMode::All),
                ("counted", TimeMode::Counted),
            ]),
            default: TimeMode::Adaptive,
            help: "`adaptive`: a site whose calls prove too short for the clock to resolve becomes *counted*: every call still counted exactly, none timed once the site is decided, its time found by the sampler (see [timed and counted sites](accuracy.md#timed-and-counted-sites)); `all`: every call timed; `counted`: every site becomes counted after its learning calls, however long its calls (to measure the counted path)",
        },
        /// The sampler's rate per second (0: no sampler).
        sample_hz: u64 {
            var: "TICKPROF_SAMPLE",
            parse: Whole(0),
            default: DEFAULT_SAMPLE_HZ,
            help: "samples per second of each recording thread's current marked call, taken by a thread of tickprof's own: where the time of counted sites is found, and what the instrumentation costs (see [the sampler](accuracy.md#the-sampler)); with the `inlined` feature (`cargo tickprof`), each thread's program counter at half this rate (see [inlined rows](accuracy.md#inlined-and-unmarked-rows)); `0`: no sampler: times are raw, and a counted site's come from its timed (learning) calls; at most `10000` (above: one warning, and `10000`)",
        },
        /// Program-counter samples of the kernel's time too (`inlined`).
        pc_kernel: bool {
            var: "TICKPROF_PC_KERNEL",
            parse: Switch,
            default: true,
            help: "with the `inlined` feature (`cargo tickprof`): `on`: the program-counter samples count each thread's time in the kernel too (a page fault, a system call), where the system allows it (`perf_event_paranoid` 1 or below, or `CAP_PERFMON`), each at the program's address that entered the kernel, as perf's call chains put it; such a sample can make a call that a signal handler always interrupts (`poll`, `nanosleep`, `epoll_wait`) return `EINTR`, 2 to 10 of 1,200 such calls in `examples/pc_samples.rs` (see [inlined rows](accuracy.md#inlined-and-unmarked-rows)); `off`: user mode only (the POSIX-timer fallback's clock counts both whatever this says)",
        },
        /// Show figures with the instrumentation the sampler measured
        /// taken out (true) or raw (false).
        compensate: bool {
            var: "TICKPROF_COMPENSATE",
            parse: Switch,
            default: true,
            help: "`on`: show times with the instrumentation the sampler measured in this run taken out (see [accuracy](accuracy.md)); `off`: raw times, the instrumentation in them. The header says which; both are always in the API, CSV and JSON.",
        },
        /// Set by `cargo tickprof`: the marks were placed after inlining,
        /// on the functions the optimised unmarked build keeps (the
        /// first number), the others left inlined (the second).
        after_inlining: Option<(u64, u64)> {
            var: "TICKPROF_AFTER_INLINING",
            parse: Opt(Counts),
            default: None,
            note: "no such line",
            help: "`N,K`, set by `cargo tickprof` (see [cargo tickprof](../cli/README.md#cargo-tickprof)): the header says that the marks were placed after inlining, on the N functions the unmarked build keeps as functions of their own, and that K functions were left inlined into them",
        },
        /// Add a per-thread breakdown.
        threads: bool {
            var: "TICKPROF_THREADS",
            parse: Switch,
            default: false,
            help: "`on`: add a per-thread breakdown (one row per live thread, one per name for finished threads; per-site calls, total, self)",
        },
        /// Finished threads are merged by name into per-thread rows; at most
        /// this many distinct names keep a row, and the threads of any
        /// further name share one `<other threads>` row (the merged totals
        /// always have every thread).
        threads_kept: usize {
            var: "TICKPROF_THREADS_KEPT",
            parse: Whole(0),
            default: DEFAULT_THREADS_KEPT,
            help: "finished threads are merged by name into per-thread rows; at most this many names get a row, and the finished threads of later names share one `<other threads>` row. The totals always include every thread. `0`: every finished thread goes to `<other threads>`",
        },
        /// The failpoint table, in the `fail` crate's syntax (checked when
        /// it is armed: a bad entry warns there).
        fail: Option<String> {
            var: "TICKPROF_FAIL",
            parse: Opt(Text),
            default: None,
            note: "nothing armed",
            help: "a failpoint table, `name=actions[;name=actions…]` in the `fail` crate's syntax (see [fault injection](tools.md#fault-injection-failpoints-at-marks)), armed at start-up on every thread; works with `TICKPROF=off` too. A bad entry gives one warning line naming it and is not armed; the other entries are. Ignored when the `failpoints` feature is off",
        },
        /// The seed of the failpoints' probabilities.
        fail_seed: u64 {
            var: "TICKPROF_FAIL_SEED",
            parse: Whole(0),
            default: DEFAULT_FAIL_SEED,
            help: "a whole number: the seed of the random stream the `p%` prefixes of `TICKPROF_FAIL` draw from",
        },
        /// Write the report each time this signal arrives, without stopping
        /// the program.
        dump_signal: Option<DumpSignal> {
            var: "TICKPROF_DUMP_SIGNAL",
            parse: Opt(Signal(&[("USR1", DumpSignal::Usr1), ("USR2", DumpSignal::Usr2)])),
            default: None,
            note: "no handler",
            help: "`USR1` or `USR2` (`SIGUSR1`, `SIGUSR2`; any case): write the report each time this signal arrives, and go on running (see [reports before exit](services.md))",
        },
        /// Write the report this often.
        dump_interval: Option<std::time::Duration> {
            var: "TICKPROF_DUMP_INTERVAL",
            parse: Opt(Interval(MIN_INTERVAL)),
            default: None,
            note: "none",
            help: "a duration with a unit (`500ms`, `30s`, `1.5s`, `2m`, `1h`), at least `100ms`: write the report this often",
        },
        /// What each dump covers.
        dump_mode: DumpMode {
            var: "TICKPROF_DUMP",
            parse: Names(&[("total", DumpMode::Total), ("delta", DumpMode::Delta)]),
            default: DumpMode::Total,
            help: "`total`: each report written before exit is the run so far; `delta`: only what happened since the previous one. The exit report is always the whole run.",
        },
        /// On SIGTERM, SIGINT or SIGHUP write the final report, then
        /// terminate as the signal's default action would.
        on_term: bool {
            var: "TICKPROF_ON_TERM",
            parse: Switch,
            default: false,
            help: "`on`: on SIGTERM, SIGINT or SIGHUP write the final report, then die of the signal as its default action would; `off`: the signals act as without tickprof",
        },
        /// Serve pprof profiles at this address, at the `/debug/pprof/`
        /// paths.
        http: Option<std::net::SocketAddr> {
            var: "TICKPROF_HTTP",
            parse: Opt(Address),
            default: None,
            note: "not served",
            help: "`PORT` (on `127.0.0.1`) or `IP:PORT`: serve pprof profiles at `/debug/pprof/profile`, `allocs`, `block`, `mutex` and `goroutine` (see [profiles over HTTP](services.md#profiles-over-http-tickprof_http)) and Prometheus metrics at `/metrics` (see [metrics](metrics.md)); an address beyond loopback gives a warning line, one that cannot be bound a warning and nothing served",
        },
        /// Push profiles to this Pyroscope-compatible receiver.
        push: Option<PushTarget> {
            var: "TICKPROF_PUSH",
            parse: Opt(PushUrl),
            default: None,
            note: "no push",
            help: "`http://HOST:PORT[/PREFIX]`: every `TICKPROF_PUSH_INTERVAL`, and once at exit (and on `TICKPROF_ON_TERM`'s signals), post the profile of the interval to Pyroscope's `POST PREFIX/ingest` (pprof with its `sample_type_config`; see [push](services.md#push-to-pyroscope-tickprof_push)), from a background thread: it never blocks the program, and failures are counted in the exit report's last line and warned about once per kind. Plain HTTP only: for HTTPS push to a local relay",
        },
        /// How often profiles are pushed.
        push_interval: std::time::Duration {
            var: "TICKPROF_PUSH_INTERVAL",
            parse: Interval(MIN_INTERVAL),
            default: std::time::Duration::from_secs(15),
            help: "a duration with a unit (`5s`, `1m`), at least `100ms`: how often `TICKPROF_PUSH` posts the profile of the last interval",
        },
        /// The application name of pushed profiles (`None`: the
        /// executable's file name).
        push_name: Option<String> {
            var: "TICKPROF_PUSH_NAME",
            parse: Opt(AppName),
            default: None,
            note: "the executable's file name",
            help: "the application name pushed profiles carry (letters, digits, `-._/:`)",
        },
        /// Static labels of pushed profiles.
        push_labels: Vec<(String, String)> {
            var: "TICKPROF_PUSH_LABELS",
            parse: Labels,
            default: Vec::new(),
            note: "none",
            help: "`name=value[,name=value…]` (at most 16): labels of every pushed profile, e.g. `service_name=api,env=prod`; names of letters, digits and `_`, values of letters, digits and `-._/:`",
        },
        /// The trace log's destination, `stderr` or a path (`None`: no log).
        log: Option<String> {
            var: "TICKPROF_LOG",
            parse: LogTarget,
            default: None,
            note: "no log",
            help: "`stderr` (also `on`, `1`) or a file path (`%p`, `%e` expand as in `TICKPROF_OUT`): print every marked entry and exit as an indented per-thread log (see [trace log](tools.md#trace-log-tickprof_log)); works with `TICKPROF=off` too. `off`: no log. An unwritable path gives one warning and no log.",
        };
        /// What the trace log shows (`TICKPROF_LOG_*`).
        log_options: LogOptions
    }
}

/// `TICKPROF_SORT`'s names.
const SORT_KEYS: Names<SortKey> = Names(&[
    ("total", SortKey::Total),
    ("self", SortKey::SelfTime),
    ("calls", SortKey::Calls),
    ("mean", SortKey::Mean),
    ("name", SortKey::Name),
    ("bytes", SortKey::Bytes),
    ("allocs", SortKey::Allocs),
]);

/// Which marked calls read the clock (`TICKPROF_TIME`).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeMode {
    /// Every site starts timed; a site whose calls prove too short to
    /// resolve becomes counted (the default).
    #[default]
    Adaptive,
    /// Every call is timed.
    All,
    /// Every site becomes counted after its learning calls, however long
    /// its calls: to measure what a counted call costs, and in tests.
    Counted,
}

/// A signal that asks for a report (`TICKPROF_DUMP_SIGNAL`).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DumpSignal {
    /// `SIGUSR1`.
    Usr1,
    /// `SIGUSR2`.
    Usr2,
}

/// What a report written before exit covers (`TICKPROF_DUMP`).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DumpMode {
    /// The run so far (the default).
    #[default]
    Total,
    /// Only what happened since the previous dump (the first: since the
    /// start or the last `reset()`).
    Delta,
}

/// What the text report shows (`TICKPROF_REPORT`).
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ReportSections {
    /// The table alone, or with a caller/callee section per site.
    pub layout: Layout,
    /// List the marks that never ran.
    pub coverage: bool,
    /// The whole header (the clock, pauses, waits, set-up), not its
    /// three lines.
    pub verbose: bool,
}

/// `TICKPROF_LOG`: `stderr` (or `on`, `1`), or a path; `off` (or `0`,
/// `false`, `no`): no log.
struct LogTarget;

impl Value for LogTarget {
    type Out = Option<String>;
    fn parse(&self, s: &str) -> Result<Option<String>, String> {
        let s = s.trim();
        Ok(match s.to_ascii_lowercase().as_str() {
            "0" | "off" | "false" | "no" => None,
            "stderr" | "1" | "on" => Some("stderr".to_owned()),
            _ => Some(s.to_owned()),
        })
    }
    fn show(&self, v: &Option<String>) -> Option<String> {
        v.clone()
    }
}

impl Config {
    /// Parses settings through `get` (the environment in production).
    /// Returns the settings and one warning line per bad value.
    pub fn parse(get: impl Fn(&str) -> Option<String>) -> (Config, Vec<String>) {
        Config::parse_os(&|name| get(name).map(std::ffi::OsString::from))
    }

    /// [`Config::parse`] over the values as the environment holds them.
    fn parse_os(get: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> (Config, Vec<String>) {
        let mut c = Config::default();
        let mut warnings = Vec::new();
        c.read(get, &mut warnings);
        if c.sample_hz > MAX_SAMPLE_HZ {
            warnings.push(format!(
                "tickprof: warning: TICKPROF_SAMPLE={} is above the most samples a second the sampler keeps; using {MAX_SAMPLE_HZ}",
                c.sample_hz
            ));
            c.sample_hz = MAX_SAMPLE_HZ;
        }
        c.outputs.retain(|path| {
            let known = crate::export::format_of(&path.to_string_lossy()).is_some();
            if !known {
                warnings.push(format!(
                    "tickprof: warning: TICKPROF_OUT: {} has no known extension ({}); not written",
                    values::quoted(&path.to_string_lossy()),
                    crate::export::EXTENSIONS.join(" ")
                ));
            }
            known
        });
        if c.outputs
            .iter()
            .any(|p| p.to_string_lossy().ends_with(".trace.json"))
        {
            c.trace = true;
        }
        (c, warnings)
    }

    /// Parses the process environment. `TICKPROF_OUT` is read byte for
    /// byte (its paths need not be UTF-8); in any other variable, bytes
    /// that are not UTF-8 become U+FFFD (and the value is then likely bad).
    ///
    /// A variable named `TICKPROF_*` (in any case) that is not in the
    /// settings table gives one warning line naming it and the closest
    /// known name, after the warnings about values.
    pub fn from_env() -> (Config, Vec<String>) {
        let (config, mut warnings) = Config::parse_os(&|name| std::env::var_os(name));
        warnings.extend(known::unknown(std::env::vars_os().map(|(name, _)| name)));
        (config, warnings)
    }
}

/// The settings table as markdown, `| variable | values | default |`, one
/// row per variable in table order (`docs/configuration.md` holds it).
#[doc(hidden)]
pub fn settings_markdown() -> String {
    let mut rows = Vec::new();
    Config::rows(&mut rows);
    let mut out = String::from("| variable | values | default |\n|---|---|---|\n");
    for row in rows {
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            row.var, row.help, row.default
        ));
    }
    out
}
