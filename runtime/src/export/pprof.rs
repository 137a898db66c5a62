//! pprof (`.pb`, `.pb.gz`): the calling-context tree as a `profile.proto`
//! message, as read by `go tool pprof` and continuous-profiling backends
//! (Pyroscope, Parca, Grafana, the OpenTelemetry collector).
//!
//! - **Sample types**: [`SAMPLE_TYPES`]: `calls/count` and
//!   `time/nanoseconds` (the default), each a **self** value, so pprof's
//!   `flat` is a site's self figure and `cum` its total; with allocation
//!   profiling on, [`ALLOC_SAMPLE_TYPES`] first (`alloc_objects/count`,
//!   `alloc_space/bytes`, self as well).
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

/// The sample types of `report`'s profile, in order.
pub fn sample_types(report: &Report) -> Vec<&'static SampleType> {
    let alloc: &[SampleType] = if report.run.alloc_installed {
        ALLOC_SAMPLE_TYPES
    } else {
        &[]
    };
    alloc.iter().chain(SAMPLE_TYPES).collect()
}

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
    let frames = stacks::build(report);
    let types = sample_types(report);
    let mut strings = Strings::new();
    let mut p = Message::default();
    for t in &types {
        let mut vt = Message::default();
        vt.uint(1, strings.id(t.kind));
        vt.uint(2, strings.id(t.unit));
        p.message(1, &vt);
    }
    // Functions and locations: one per distinct frame name (a site, or a
    // cut), with the same id for both.
    let sites: HashMap<_, _> = report
        .sites
        .iter()
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
    mapping.uint(5, strings.id("tickprof"));
    for field in 7..=9 {
        mapping.uint(field, 1); // has_functions, has_filenames, has_line_numbers
    }
    p.message(3, &mapping);
    let thread = match report.threads.as_slice() {
        [one] => one.name.clone(),
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
    let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
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
    if report.run.counted_sites > 0 {
        let note = format!(
            "tickprof: {} site(s) counted (label timing=counted): calls exact, their time in their callers' self",
            report.run.counted_sites
        );
        p.uint(13, strings.id(&note));
    }
    for s in &strings.table {
        p.bytes(6, s.as_bytes());
    }
    // `duration_nanos`; no `time_nanos`: the report does not say when the
    // run started, and the output stays a function of the report alone.
    p.uint(10, int64(report.run.wall_ns));
    let default = strings.index.get("time").copied();
    p.uint(14, default.unwrap_or(0));
    p.buf
}

/// The profile gzipped (`.pb.gz`), the form pprof tools usually exchange.
pub fn render_gz(report: &Report) -> Vec<u8> {
    gzip::wrap(&render(report))
}
