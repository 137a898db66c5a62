//! The trace part of a report: the per-thread trace buffers' events, in
//! nanoseconds from the trace's origin, names interned once.

use crate::record::trace::ThreadEvents;
use crate::report::{Trace, TraceEvent, TraceThread};
use crate::tree::site_key;
use std::collections::HashMap;

/// Converts raw per-thread events into a [`Trace`] (internal sites left
/// out), `ns_per_tick` nanoseconds to a tick.
pub(super) fn trace(raw: &[ThreadEvents], origin: u64, ns_per_tick: f64) -> Trace {
    let mut names: Vec<String> = Vec::new();
    let mut index: HashMap<usize, u32> = HashMap::new();
    let mut threads = Vec::new();
    for t in raw {
        let mut out = Vec::with_capacity(t.events.len());
        for e in t.events.iter().filter(|e| !e.site.is_internal()) {
            let n = *index.entry(site_key(Some(e.site))).or_insert_with(|| {
                names.push(e.site.name());
                (names.len() - 1) as u32
            });
            out.push(TraceEvent {
                name: n,
                start_ns: e.start.wrapping_sub(origin) as i64 as f64 * ns_per_tick,
                duration_ns: e.end.wrapping_sub(e.start) as i64 as f64 * ns_per_tick,
            });
        }
        if !out.is_empty() || t.dropped > 0 {
            threads.push(TraceThread {
                id: t.thread_id,
                name: t.thread_name.clone(),
                events: out,
                dropped: t.dropped,
            });
        }
    }
    Trace { names, threads }
}
