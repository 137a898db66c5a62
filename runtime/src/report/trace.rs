//! The trace part of a report: individual calls per thread.

/// One call on the timeline.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct TraceEvent {
    /// Index into [`Trace::names`].
    pub name: u32,
    /// Start, in nanoseconds since the profiler started.
    pub start_ns: f64,
    /// Duration, in nanoseconds (raw: instrumentation included).
    pub duration_ns: f64,
}

/// One thread's timeline.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct TraceThread {
    /// tickprof's thread number (as in [`ThreadStats::id`](super::ThreadStats::id)).
    pub id: u64,
    /// The thread's name.
    pub name: String,
    /// Its calls, in the order they finished.
    pub events: Vec<TraceEvent>,
    /// Calls past the per-thread bound, not stored.
    pub dropped: u64,
}

/// Individual calls per thread, when tracing is on.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Trace {
    /// Site names, indexed by [`TraceEvent::name`].
    pub names: Vec<String>,
    /// One timeline per thread that recorded events.
    pub threads: Vec<TraceThread>,
}

impl Trace {
    /// Events dropped over all threads.
    pub fn dropped(&self) -> u64 {
        self.threads
            .iter()
            .fold(0u64, |a, t| a.saturating_add(t.dropped))
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
