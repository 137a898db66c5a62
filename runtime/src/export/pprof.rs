//! pprof (`.pb`, `.pb.gz`): the calling-context tree as a `profile.proto`
//! message, as read by `go tool pprof` and continuous-profiling backends
//! (Pyroscope, Parca, Grafana, the OpenTelemetry collector).
//!
//! - **Sample types**: [`SAMPLE_TYPES`]: `calls/count` and
//!   `time/nanoseconds` (the default), each a **self** value, so pprof's
//!   `flat` is a site's self figure and `cum` its total; with allocation
//!   profiling on, [`ALLOC_SAMPLE_TYPES`] first (`alloc_objects/count`,
//!   `alloc_space/bytes`, self as well). The allocation profile
//!   ([`Kind::Allocs`], served at `/debug/pprof/allocs`) holds only those
//!   two, as Go's `allocs` profile names them.
//! - **Metadata**: `period_type` `calls/count` with `period` 1 (every call
//!   is recorded, none sampled; `alloc_space/bytes` and 1 for the
//!   allocation profile), `duration_nanos` the report's wall time, and, in
//!   profiles of a running process ([`render_live`]), `time_nanos` its
//!   start (now minus the wall time).
//! - **Mapping**: one, whose file name is the program's executable path
//!   (`go tool pprof` prints its base name as `File:`); `tickprof` for a
//!   report made by another process (read back by `tickprof show`).
//! - **Functions and locations**: one of each per site (its name, file and
//!   line), shared by every path through it.
//! - **Samples**: one per path of the [stack tree](super::stacks), leaf
//!   first, with that path's self values. The stack tree applies the rule of
//!   the folded export: direct recursion collapsed into one frame (so `cum`
//!   counts a recursive site once, as its total does), paths cut at
//!   [`MAX_DEPTH`](super::stacks::MAX_DEPTH) frames into one
//!   `[… N frames]` function. The file is bounded like `.folded`.
//! - **Label** `thread`: the thread's name when one thread made every
//!   marked call, `<all threads>` otherwise (the report's tree merges the
//!   threads).
//! - `.pb.gz` is gzip of stored (uncompressed) DEFLATE blocks; pprof and
//!   `gzip -d` read it.
//!
//! [`empty_gz`] makes the valid, sample-less profiles served for the Go
//! profiles tickprof has no data for (`block`, `mutex`, `goroutine`, and
//! `allocs` without `tickprof::Alloc`), each with a comment saying why.

use super::folded;
use super::stacks::{self, Frame};
use crate::report::Report;
use std::collections::HashMap;

mod gzip;
mod proto;

use proto::Message;

/// One value of every sample: its pprof `sample_type` and how a frame of
/// the stack tree gives it.
pub struct SampleType {
    /// The value's `type`, e.g. `time`.
    pub kind: &'static str,
    /// Its `unit`, e.g. `nanoseconds`.
    pub unit: &'static str,
    /// The value of one frame (self, not including its children).
    pub of: fn(&Frame<'_>) -> u64,
}

fn calls(f: &Frame<'_>) -> u64 {
    f.calls
}

fn self_ns(f: &Frame<'_>) -> u64 {
    f.self_ns
}

fn self_allocs(f: &Frame<'_>) -> u64 {
    f.self_allocs
}

fn self_alloc_bytes(f: &Frame<'_>) -> u64 {
    f.self_alloc_bytes
}

/// The sample types of every profile, in order; the last, `time`, is
/// pprof's default.
pub const SAMPLE_TYPES: &[SampleType] = &[
    SampleType {
        kind: "calls",
        unit: "count",
        of: calls,
    },
    SampleType {
        kind: "time",
        unit: "nanoseconds",
        of: self_ns,
    },
];

/// The sample types added, before [`SAMPLE_TYPES`], when allocation
/// profiling is on (`tickprof::Alloc` is the global allocator): Go's heap
/// profile names, `alloc_objects/count` and `alloc_space/bytes`, each the
/// allocations made directly in the frame (`go tool pprof
/// -sample_index=alloc_space`).
pub const ALLOC_SAMPLE_TYPES: &[SampleType] = &[
    SampleType {
        kind: "alloc_objects",
        unit: "count",
        of: self_allocs,
    },
    SampleType {
        kind: "alloc_space",
        unit: "bytes",
        of: self_alloc_bytes,
    },
];

/// Which profile of a report: the calls and times (with the allocation
/// types first when `tickprof::Alloc` counted), or the allocations alone.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// [`SAMPLE_TYPES`], after [`ALLOC_SAMPLE_TYPES`] when allocation
    /// profiling is on: `/debug/pprof/profile`, the `.pb` files.
    Calls,
    /// [`ALLOC_SAMPLE_TYPES`] alone: `/debug/pprof/allocs`.
    Allocs,
}

/// The sample types of `report`'s profile, in order.
pub fn sample_types(report: &Report) -> Vec<&'static SampleType> {
    let alloc: &[SampleType] = if report.run.alloc_installed {
        ALLOC_SAMPLE_TYPES
    } else {
        &[]
    };
    alloc.iter().chain(SAMPLE_TYPES).collect()
}

/// A value of a profile with no samples.
fn nothing(_: &Frame<'_>) -> u64 {
    0
}

/// The sample types of Go's `block` and `mutex` profiles.
pub const CONTENTION_SAMPLE_TYPES: &[SampleType] = &[
    SampleType {
        kind: "contentions",
        unit: "count",
        of: nothing,
    },
    SampleType {
        kind: "delay",
        unit: "nanoseconds",
        of: nothing,
    },
];

/// The sample type of Go's `goroutine` profile.
pub const GOROUTINE_SAMPLE_TYPES: &[SampleType] = &[SampleType {
    kind: "goroutine",
    unit: "count",
    of: nothing,
}];

/// The string table: index 0 is the empty string.
struct Strings {
    index: HashMap<String, u64>,
    table: Vec<String>,
}

impl Strings {
    fn new() -> Strings {
        Strings {
            index: HashMap::from([(String::new(), 0)]),
            table: vec![String::new()],
        }
    }

    fn id(&mut self, s: &str) -> u64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.table.len() as u64;
        self.index.insert(s.to_owned(), i);
        self.table.push(s.to_owned());
        i
    }
}

/// pprof's `int64` values: larger figures are clamped.
fn int64(v: u64) -> u64 {
    v.min(i64::MAX as u64)
}

/// What a profile says beside its samples.
struct Meta<'a> {
    types: Vec<&'static SampleType>,
    /// `period_type` (type, unit); the period is 1.
    period: (&'static str, &'static str),
    /// `time_nanos` (0: not set).
    time_nanos: u64,
    /// `comment`s.
    comments: &'a [&'a str],
}

/// The mapping's file name: the executable's path when `report` was made
/// by this process (its `pid`), else `tickprof` (a report read back from
/// a file by `tickprof show`: its program is not in it).
fn program_of(report: Option<&Report>) -> &'static str {
    match report {
        Some(r) if r.run.pid != crate::process::program_pid() => "tickprof",
        _ => program(),
    }
}

/// The executable's path (`argv[0]`, or `tickprof`, if the system does
/// not say), read once.
fn program() -> &'static str {
    static PROGRAM: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PROGRAM.get_or_init(|| {
        std::env::current_exe()
            .ok()
            .map(|p| p.to_string_lossy().into_owned())
            .or_else(|| {
                std::env::args_os()
                    .next()
                    .map(|a| a.to_string_lossy().into_owned())
            })
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| "tickprof".to_owned())
    })
}

/// The profile as an uncompressed `profile.proto` message (`.pb`).
///
/// # Examples
///
/// ```
/// let report = tickprof_runtime::report();
/// let pb = tickprof_runtime::export::pprof::render(&report);
/// assert!(!pb.is_empty());
/// ```
pub fn render(report: &Report) -> Vec<u8> {
    encode(Some(report), &meta(report, Kind::Calls, 0, &[]))
}

/// The profile gzipped (`.pb.gz`), the form pprof tools usually exchange.
pub fn render_gz(report: &Report) -> Vec<u8> {
    gzip::wrap(&render(report))
}

/// The `kind` profile of `report`, a report of the running process that
/// ends now, gzipped, with `time_nanos` set (now minus the report's wall
/// time), and `comment` when not empty. An allocation profile of a report
/// with no allocation data is [`empty_gz`] of [`ALLOC_SAMPLE_TYPES`].
pub fn render_live(report: &Report, kind: Kind, comment: &str) -> Vec<u8> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos().min(u128::from(u64::MAX)) as u64);
    let start = now.saturating_sub(report.run.wall_ns);
    let comments: Vec<&str> = [comment].into_iter().filter(|c| !c.is_empty()).collect();
    let m = meta(report, kind, start, &comments);
    gzip::wrap(&encode(Some(report), &m))
}

fn meta<'a>(report: &Report, kind: Kind, time_nanos: u64, comments: &'a [&'a str]) -> Meta<'a> {
    match kind {
        Kind::Calls => Meta {
            types: sample_types(report),
            period: ("calls", "count"),
            time_nanos,
            comments,
        },
        Kind::Allocs => Meta {
            types: ALLOC_SAMPLE_TYPES.iter().collect(),
            period: ("alloc_space", "bytes"),
            time_nanos,
            comments,
        },
    }
}

/// A valid profile with no samples, of sample types `types` (the last is
/// the default and the `period_type`), and `comment` saying why, gzipped.
pub fn empty_gz(types: &'static [SampleType], comment: &str) -> Vec<u8> {
    let last = types.last().map_or(("", ""), |t| (t.kind, t.unit));
    let m = Meta {
        types: types.iter().collect(),
        period: last,
        time_nanos: 0,
        comments: &[comment],
    };
    gzip::wrap(&encode(None, &m))
}

/// The `profile.proto` message: `report`'s samples (none without one).
fn encode(report: Option<&Report>, m: &Meta<'_>) -> Vec<u8> {
    let frames = report.map(stacks::build).unwrap_or_default();
    let types = &m.types;
    let mut strings = Strings::new();
    let mut p = Message::default();
    for t in types {
        let mut vt = Message::default();
        vt.uint(1, strings.id(t.kind));
        vt.uint(2, strings.id(t.unit));
        p.message(1, &vt);
    }
    // Functions and locations: one per distinct frame name (a site, or a
    // cut), with the same id for both.
    let sites: HashMap<_, _> = report
        .iter()
        .flat_map(|r| &r.sites)
        .map(|s| (folded::frame(&s.name), s))
        .collect();
    let mut ids: HashMap<String, u64> = HashMap::new();
    let mut loc_of = vec![0u64; frames.len()];
    for (i, f) in frames.iter().enumerate().skip(1) {
        let name = if f.cut > 0 { f.label() } else { f.name.clone() };
        if let Some(&id) = ids.get(name.as_ref()) {
            loc_of[i] = id;
            continue;
        }
        let id = ids.len() as u64 + 1;
        let site = sites.get(&f.name).filter(|_| f.cut == 0);
        let mut func = Message::default();
        func.uint(1, id);
        func.uint(2, strings.id(&name));
        func.uint(3, strings.id(&name));
        func.uint(4, strings.id(site.map_or("", |s| s.file.as_str())));
        func.uint(5, site.map_or(0, |s| u64::from(s.line)));
        p.message(5, &func);
        let mut line = Message::default();
        line.uint(1, id);
        line.uint(2, site.map_or(0, |s| u64::from(s.line)));
        let mut loc = Message::default();
        loc.uint(1, id);
        loc.uint(2, 1);
        loc.message(4, &line);
        p.message(4, &loc);
        ids.insert(name.into_owned(), id);
        loc_of[i] = id;
    }
    let mut mapping = Message::default();
    mapping.uint(1, 1);
    mapping.uint(5, strings.id(program_of(report)));
    for field in 7..=9 {
        mapping.uint(field, 1); // has_functions, has_filenames, has_line_numbers
    }
    p.message(3, &mapping);
    let thread = match report.map(|r| r.threads.as_slice()) {
        Some([one]) => one.name.clone(),
        _ => "<all threads>".to_owned(),
    };
    let mut label = Message::default();
    label.uint(1, strings.id("thread"));
    label.uint(2, strings.id(&thread));
    // A counted site's frames carry `timing=counted`: their calls are
    // exact, their time is in their callers' (see `SiteStats::timing`).
    let mut counted_label = Message::default();
    counted_label.uint(1, strings.id("timing"));
    counted_label.uint(2, strings.id("counted"));
    // Samples, depth first: `path` holds the location ids from the root's
    // child down to the current frame.
    let mut path: Vec<u64> = Vec::new();
    let mut stack: Vec<(usize, usize)> = if frames.is_empty() {
        Vec::new()
    } else {
        vec![(0, 0)]
    };
    while let Some(top) = stack.last_mut() {
        let (i, next) = *top;
        let Some(&c) = frames[i].children.get(next) else {
            stack.pop();
            path.pop();
            continue;
        };
        top.1 += 1;
        path.push(loc_of[c]);
        let mut sample = Message::default();
        sample.packed(1, path.iter().rev().copied());
        sample.packed(2, types.iter().map(|t| int64((t.of)(&frames[c]))));
        sample.message(3, &label);
        let counted = frames[c].cut == 0
            && sites
                .get(&frames[c].name)
                .is_some_and(|s| s.timing == crate::report::Timing::Counted);
        if counted {
            sample.message(3, &counted_label);
        }
        p.message(2, &sample);
        stack.push((c, 0));
    }
    let mut period = Message::default();
    period.uint(1, strings.id(m.period.0));
    period.uint(2, strings.id(m.period.1));
    let mut comments: Vec<u64> = m.comments.iter().map(|c| strings.id(c)).collect();
    if let Some(r) = report.filter(|r| r.run.counted_sites > 0) {
        let note = format!(
            "tickprof: {} site(s) counted (label timing=counted): calls exact, their time in their nearest timed callers' self",
            r.run.counted_sites
        );
        comments.push(strings.id(&note));
    }
    let default = types.last().map_or(0, |t| strings.id(t.kind));
    for s in &strings.table {
        p.bytes(6, s.as_bytes());
    }
    p.uint(9, int64(m.time_nanos));
    p.uint(10, int64(report.map_or(0, |r| r.run.wall_ns)));
    p.message(11, &period);
    p.uint(12, 1);
    for c in comments {
        p.uint(13, c);
    }
    p.uint(14, default);
    p.buf
}
