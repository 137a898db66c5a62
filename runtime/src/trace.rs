//! Individual call events for a Chrome / Perfetto trace.
//!
//! Off unless a `.trace.json` output is requested or `TICKPROF_TRACE=1`;
//! then every finished call (every poll, for async sites) appends one event
//! to its thread's bounded buffer. Events past the bound
//! (`TICKPROF_TRACE_EVENTS`, default [`DEFAULT_TRACE_EVENTS`]) are counted as
//! dropped, never stored. With tracing off, the hot path pays one
//! predictable branch on [`TRACE_ON`].

// Recording is compiled in both configurations; only `enabled` calls it.
#![cfg_attr(not(feature = "enabled"), allow(dead_code))]

use crate::site::CallSite;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Default bound of events per thread.
pub const DEFAULT_TRACE_EVENTS: usize = 2_000_000;

/// Whether calls are recorded as events.
pub(crate) static TRACE_ON: AtomicBool = AtomicBool::new(false);
/// Events kept per thread.
pub(crate) static TRACE_LIMIT: AtomicUsize = AtomicUsize::new(DEFAULT_TRACE_EVENTS);

/// One recorded call, in raw ticks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawEvent {
    pub site: &'static CallSite,
    pub start: u64,
    pub end: u64,
}

/// One thread's events.
#[derive(Debug, Default)]
pub(crate) struct Buffer {
    pub events: Vec<RawEvent>,
    pub dropped: u64,
}

impl Buffer {
    /// Appends an event, or counts it as dropped past the bound.
    pub fn push(&mut self, e: RawEvent) {
        if self.events.len() < TRACE_LIMIT.load(Ordering::Relaxed) {
            if self.events.len() == self.events.capacity() {
                // Grow by doubling up to the bound, never past it.
                let limit = TRACE_LIMIT.load(Ordering::Relaxed);
                let want = (self.events.capacity() * 2).max(1024).min(limit);
                self.events.reserve_exact(want - self.events.len());
            }
            self.events.push(e);
        } else {
            self.dropped += 1;
        }
    }
}

/// A thread's trace buffer, shared with the report.
#[derive(Debug, Default)]
pub(crate) struct Shared(pub Mutex<Buffer>);

impl Shared {
    /// Records one call. Called only when [`TRACE_ON`] is set.
    #[cold]
    #[inline(never)]
    pub fn record(&self, site: &'static CallSite, start: u64, end: u64) {
        if let Ok(mut b) = self.0.lock() {
            b.push(RawEvent { site, start, end });
        }
    }

    /// Copies the events (bounded wait: the owner holds the lock only to
    /// push one event).
    pub fn copy(&self) -> (Vec<RawEvent>, u64) {
        match self.0.try_lock() {
            Ok(b) => (b.events.clone(), b.dropped),
            Err(std::sync::TryLockError::Poisoned(e)) => {
                let b = e.into_inner();
                (b.events.clone(), b.dropped)
            }
            Err(std::sync::TryLockError::WouldBlock) => {
                std::thread::yield_now();
                self.0
                    .lock()
                    .map_or((Vec::new(), 0), |b| (b.events.clone(), b.dropped))
            }
        }
    }

    /// Forgets all events.
    pub fn clear(&self) {
        if let Ok(mut b) = self.0.lock() {
            b.events.clear();
            b.dropped = 0;
        }
    }
}

/// One call on the timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceEvent {
    /// Index into [`Trace::names`].
    pub name: u32,
    /// Start, in nanoseconds since the profiler started.
    pub start_ns: f64,
    /// Duration, in nanoseconds (raw: instrumentation included).
    pub duration_ns: f64,
}

/// One thread's timeline.
#[derive(Clone, Debug)]
pub struct TraceThread {
    /// tickprof's thread number (as in [`ThreadStats::id`](crate::ThreadStats)).
    pub id: u64,
    /// The thread's name.
    pub name: String,
    /// Its calls, in the order they finished.
    pub events: Vec<TraceEvent>,
    /// Calls past the per-thread bound, not stored.
    pub dropped: u64,
}

/// Individual calls per thread, when tracing is on.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    /// Site names, indexed by [`TraceEvent::name`].
    pub names: Vec<String>,
    /// One timeline per thread that recorded events.
    pub threads: Vec<TraceThread>,
}

impl Trace {
    /// Events dropped over all threads.
    pub fn dropped(&self) -> u64 {
        self.threads.iter().map(|t| t.dropped).sum()
    }

    /// Events stored over all threads.
    pub fn len(&self) -> usize {
        self.threads.iter().map(|t| t.events.len()).sum()
    }

    /// Whether no event is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Converts raw per-thread events into a [`Trace`].
pub(crate) fn build(
    raw: &[(u64, String, Vec<RawEvent>, u64)],
    origin: u64,
    ns_per_tick: f64,
    skip: usize,
) -> Trace {
    let mut names: Vec<String> = Vec::new();
    let mut index: std::collections::HashMap<usize, u32> = std::collections::HashMap::new();
    let mut threads = Vec::new();
    for (id, name, events, dropped) in raw {
        let mut out = Vec::with_capacity(events.len());
        for e in events {
            let key = e.site as *const CallSite as usize;
            if key == skip {
                continue;
            }
            let n = *index.entry(key).or_insert_with(|| {
                names.push(e.site.name());
                (names.len() - 1) as u32
            });
            out.push(TraceEvent {
                name: n,
                start_ns: e.start.wrapping_sub(origin) as i64 as f64 * ns_per_tick,
                duration_ns: e.end.wrapping_sub(e.start) as i64 as f64 * ns_per_tick,
            });
        }
        if !out.is_empty() || *dropped > 0 {
            threads.push(TraceThread {
                id: *id,
                name: name.clone(),
                events: out,
                dropped: *dropped,
            });
        }
    }
    Trace { names, threads }
}

/// The Chrome trace event format (JSON object form), loadable by
/// `chrome://tracing`, Perfetto (ui.perfetto.dev) and speedscope: one
/// complete event (`"ph": "X"`) per call, times in microseconds, one `tid`
/// per thread with its name as metadata.
pub fn render(trace: &Trace) -> String {
    use std::fmt::Write as _;
    let q = |s: &str| {
        let mut quoted = String::with_capacity(s.len() + 2);
        crate::export::json::push_str_literal(&mut quoted, s);
        quoted
    };
    let names: Vec<String> = trace.names.iter().map(|n| q(n)).collect();
    let mut s = String::with_capacity(64 + trace.len() * 80);
    s.push_str("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"tickprof\",\"events\":");
    let _ = write!(
        s,
        "{},\"dropped_events\":{}}},\"traceEvents\":[",
        trace.len(),
        trace.dropped()
    );
    let mut first = true;
    let mut sep = |s: &mut String| {
        if !first {
            s.push_str(",\n");
        }
        first = false;
    };
    for t in &trace.threads {
        sep(&mut s);
        let _ = write!(
            s,
            "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":{},\"args\":{{\"name\":{}}}}}",
            t.id,
            q(&t.name)
        );
        for e in &t.events {
            sep(&mut s);
            let _ = write!(
                s,
                "{{\"ph\":\"X\",\"name\":{},\"pid\":1,\"tid\":{},\"ts\":{:.3},\"dur\":{:.3}}}",
                names[e.name as usize],
                t.id,
                e.start_ns / 1e3,
                e.duration_ns.max(0.0) / 1e3
            );
        }
    }
    s.push_str("]}\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m() {}
    static SITE: CallSite = CallSite::function(
        crate::site::path_of(m),
        Some("a \"quoted\" <name>"),
        "t.rs",
        1,
    );

    #[test]
    fn buffer_is_bounded_and_counts_drops() {
        TRACE_LIMIT.store(3, Ordering::Relaxed);
        let mut b = Buffer::default();
        for i in 0..10 {
            b.push(RawEvent {
                site: &SITE,
                start: i,
                end: i + 1,
            });
        }
        TRACE_LIMIT.store(DEFAULT_TRACE_EVENTS, Ordering::Relaxed);
        assert_eq!(b.events.len(), 3);
        assert_eq!(b.dropped, 7);
        assert!(b.events.capacity() <= 1024);
    }

    #[test]
    fn render_is_valid_json_with_escaped_names() {
        let raw = vec![(
            7u64,
            "worker \"1\"".to_owned(),
            vec![RawEvent {
                site: &SITE,
                start: 100,
                end: 300,
            }],
            2u64,
        )];
        let t = build(&raw, 0, 0.5, 0);
        let v: serde_json::Value = serde_json::from_str(&render(&t)).unwrap();
        let ev = &v["traceEvents"];
        assert_eq!(ev[0]["ph"], "M");
        assert_eq!(ev[0]["args"]["name"], "worker \"1\"");
        assert_eq!(ev[1]["name"], "a \"quoted\" <name>");
        assert_eq!(ev[1]["tid"], 7);
        assert_eq!(ev[1]["ts"], 0.05);
        assert_eq!(ev[1]["dur"], 0.1);
        assert_eq!(v["otherData"]["dropped_events"], 2);
    }
}
