//! Every other target: no counter is read; `std::time::Instant` (the OS
//! monotonic clock) stands in, with nanosecond ticks. Each marked call
//! then pays two OS clock reads (`clock_gettime`, `QueryPerformanceCounter`,
//! WASI's `clock_time_get`), and start-up says so on stderr.

use super::CounterFacts;
use std::sync::OnceLock;
use std::time::Instant;

static EPOCH: OnceLock<Instant> = OnceLock::new();

/// Nanoseconds since the first read, from the OS monotonic clock.
#[inline(always)]
pub(crate) fn ticks() -> u64 {
    let epoch = EPOCH.get_or_init(Instant::now);
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// The clock this module reads.
pub(crate) const SOURCE: crate::report::ClockSource = crate::report::ClockSource::Monotonic;

/// Ticks are nanoseconds by construction; no invariant-TSC fact.
pub(crate) fn facts() -> CounterFacts {
    CounterFacts {
        invariant_tsc: None,
        nominal: Some((1e9, "std::time::Instant: ticks are nanoseconds")),
    }
}
