//! Instruction counts of one marked call, for callgrind.
//!
//! `bash scripts/callgrind_overhead.sh` runs this under
//! `valgrind --tool=callgrind` and prints instructions per call of the
//! unmarked function, the floor (two `rdtsc`) and `#[profile]` (with its
//! body duplicated, with one guarded body, with `once` and with `always`),
//! and three marked children called in turn (`probe_turns`).
//! `PROBE_HOOK=1` installs an empty hook first (the cost of a hooked call);
//! `TICKPROF_LOG=/dev/null` measures the trace log. `PROBE_TIME=1` prints
//! the wall-clock time per marked call (`scripts/log_cost.sh`).
//! `PROBE_CALLS=N` calls each probe N times instead of 1,000,000 (the
//! script's steady-state figure: the difference of two runs).

use std::hint::black_box;

/// Calls of each probe: `PROBE_CALLS`, else 1,000,000.
fn calls() -> u64 {
    std::env::var("PROBE_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000)
}

#[path = "../benches/support/floor.rs"]
mod floor;
use floor::Floor;

#[inline(never)]
fn probe_unmarked(x: u64) -> u64 {
    black_box(x) + 1
}

#[inline(never)]
fn probe_floor(x: u64) -> u64 {
    let _g = Floor::new();
    black_box(x) + 1
}

#[inline(never)]
#[tickprof::profile]
fn probe_marked(x: u64) -> u64 {
    black_box(x) + 1
}

/// `probe_marked` with one guarded body: `#[track_caller]` keeps
/// `#[profile]` from duplicating it (as a user macro, an `impl Trait`
/// return or a long body would).
#[inline(never)]
#[tickprof::profile]
#[track_caller]
fn probe_guarded(x: u64) -> u64 {
    black_box(x) + 1
}

/// `probe_marked` with its body once, the guard around it (`once`).
#[inline(never)]
#[tickprof::profile(once)]
fn probe_once(x: u64) -> u64 {
    black_box(x) + 1
}

/// `probe_marked` as `cargo tickprof` marks it (`always`): one inline
/// copy of the body serves profiling off and a counted call.
#[inline(never)]
#[tickprof::profile(always)]
fn probe_always(x: u64) -> u64 {
    black_box(x) + 1
}

/// Three marked children, `always` as `cargo tickprof` marks: a parent
/// calls them in turn (`probe_turns`), so that each call finds its child
/// in the parent's cache past the one-entry one.
#[inline(never)]
#[tickprof::profile(always)]
fn turn_a(x: u64) -> u64 {
    black_box(x) + 1
}

#[inline(never)]
#[tickprof::profile(always)]
fn turn_b(x: u64) -> u64 {
    black_box(x) + 2
}

#[inline(never)]
#[tickprof::profile(always)]
fn turn_c(x: u64) -> u64 {
    black_box(x) + 3
}

/// An unmarked caller of the three marked children in turn.
#[inline(never)]
fn probe_turns(x: u64) -> u64 {
    turn_a(x) ^ turn_b(x) ^ turn_c(x)
}

/// An unmarked child of `probe_turns_unmarked`.
#[inline(never)]
fn plain(x: u64) -> u64 {
    black_box(x) + 1
}

/// `probe_turns` with unmarked children: the difference is what the
/// three marks cost.
#[inline(never)]
fn probe_turns_unmarked(x: u64) -> u64 {
    plain(x) ^ plain(x + 1) ^ plain(x + 2)
}

/// A hook that does nothing: what the hooks' cold path costs by itself.
struct Empty;

impl tickprof::Hook for Empty {}

static EMPTY: Empty = Empty;

fn main() {
    if std::env::var_os("PROBE_HOOK").is_some() {
        let _ = tickprof::set_hook(&EMPTY);
    }
    let mut s = 0u64;
    run("unmarked", probe_unmarked, &mut s);
    run("floor", probe_floor, &mut s);
    run("marked", probe_marked, &mut s);
    run("guarded", probe_guarded, &mut s);
    run("once", probe_once, &mut s);
    run("always", probe_always, &mut s);
    run("turns", probe_turns, &mut s);
    run("turns_unmarked", probe_turns_unmarked, &mut s);
    println!("{s}");
}

/// Calls `probe` [`calls`] times, adding what it returns to `s`; with
/// `PROBE_TIME` set, prints the wall-clock time per call of the marked
/// probes.
fn run(name: &str, probe: fn(u64) -> u64, s: &mut u64) {
    let calls = calls();
    let t = std::time::Instant::now();
    for i in 0..calls {
        *s = s.wrapping_add(probe(black_box(i)));
    }
    if std::env::var_os("PROBE_TIME").is_some() && name != "unmarked" && name != "floor" {
        let ns = t.elapsed().as_nanos() as f64 / calls as f64;
        eprintln!("{name}: {ns:.1} ns per call (wall clock)");
    }
}
