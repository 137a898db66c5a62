//! The settings' default values that code outside `config` also needs (the
//! switches' initial values, the failpoints' seed). Plain constants that
//! import nothing, so any module can read them without depending on
//! `config`; the settings table in `config` uses the same constants.

use core::time::Duration;

/// Default `TICKPROF_MAX_DELTA`: one hour.
pub const DEFAULT_MAX_DELTA: Duration = Duration::from_secs(3600);
/// Default `TICKPROF_MAX_NODES`: calling-context tree nodes per thread.
pub const DEFAULT_MAX_NODES: usize = 1_000_000;
/// Default `TICKPROF_TRACE_EVENTS`: trace events kept per thread.
pub const DEFAULT_TRACE_EVENTS: usize = 2_000_000;
/// Default `TICKPROF_THREADS_KEPT`: distinct names of finished threads that
/// keep a per-thread row; later names share one `<other threads>` row.
pub const DEFAULT_THREADS_KEPT: usize = 64;
/// The seed of the failpoints' probabilities when `TICKPROF_FAIL_SEED` is
/// not set: runs are reproducible by default.
pub const DEFAULT_FAIL_SEED: u64 = 0x7469_636b_7072_6f66;
/// The shortest period of a repeated report (`TICKPROF_DUMP_INTERVAL`,
/// `dump_every`) or push (`TICKPROF_PUSH_INTERVAL`): a shorter one would
/// keep a core busy and flood stderr or the receiver.
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);
/// Default `TICKPROF_SAMPLE`: the sampler's rate, per second.
pub const DEFAULT_SAMPLE_HZ: u64 = 1000;
/// The highest `TICKPROF_SAMPLE` the sampler keeps (a higher value is
/// warned about and this used): a period of 100 µs, about three sweeps of
/// one recording thread (~30 µs of CPU each, docs/measured.md) and twice
/// Linux's default timer slack (50 µs). Above it the sampler's thread
/// sweeps without pause and takes a core from the program.
pub const MAX_SAMPLE_HZ: u64 = 10_000;
