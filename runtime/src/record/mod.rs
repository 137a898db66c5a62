//! The hot path: per-thread calling-context trees, written by guards.
//!
//! Bottom to top (each file imports only files above it in this list, and
//! none imports a module of the crate above the recorder):
//!
//! - [`hist`]: a thread's latency histograms, one per site;
//! - [`node`]: one tree node, its counters and its child cache;
//! - [`timing`]: timed and counted calls in one place: the rule, a
//!   node's timing state and its transitions;
//! - [`trace`]: per-thread trace buffers;
//! - [`arena`]: a thread's nodes, in segments that never move;
//! - [`registry`]: live and finished threads, and the capture a report
//!   starts from;
//! - [`frame`]: the guard's frame encoding (flags and tags);
//! - [`pending`]: allocation counts of a thread with no tree yet;
//! - [`stack`]: the thread's state: its current-node word (owns its
//!   `unsafe`), the child lookups, set-up and teardown of its tree,
//!   out-of-order exits;
//! - [`sampler`]: the sampler's thread and table, a reader of the states;
//! - `pcs` (feature `inlined`, Linux): program-counter samples, taken by a
//!   per-thread CPU-time timer's signal handler into the thread's table;
//! - [`life`]: a thread's set-up (tree, exit registration, sampler entry)
//!   and teardown;
//! - [`alloc`]: allocation counts of `tickprof::Alloc`, on the current node;
//! - [`hook`]: the hooks' cold path (dispatch, re-entrancy, panics);
//! - [`cold`]: the one cold entry path and the cold exit, for guards and
//!   polls alike (set-up, failpoints, hooks, tracing, detached calls);
//! - [`guard`]: `Guard`, its fast entry and exit — the per-call path, top
//!   to bottom in one file;
//! - [`counted`]: a counted call inline in the marked function (a cache
//!   hit, one add, the top set and put back);
//! - [`body`]: the guard of a body emitted once, out of line;
//! - [`poll`]: async polls, cancelled calls, spans' frames;
//! - [`future`]: the future wrapper of `#[profile] async fn`;
//! - `span`: frames of spans entered from outside (the `tracing` bridge);
//! - [`calibrate`]: a timed call's least cost, measured on the sampler's
//!   thread (handed to it as its job at start-up);
//! - [`fork`]: the `fork` handlers (no lock inherited held; the child
//!   starts a fresh profile).
//!
//! Only the owning thread writes a node's counters (relaxed load + store,
//! no locked instruction), but for the sampler's own cells; the report
//! reads every arena at any time with relaxed loads. When a thread exits,
//! its tree is merged into the finished threads' data, so nothing it
//! recorded is lost.

pub(crate) mod alloc;
pub(crate) mod arena;
pub(crate) mod body;
pub(crate) mod calibrate;
mod cold;
pub(crate) mod counted;
mod cpuclock;
mod detached;
pub(crate) mod fasthash;
#[cfg(unix)]
pub(crate) mod fork;
mod frame;
pub(crate) mod future;
pub(crate) mod guard;
pub(crate) mod hist;
pub(crate) mod hook;
mod life;
pub(crate) mod node;
pub(crate) mod pagemap;
pub(crate) mod pages;
#[cfg(all(feature = "inlined", target_os = "linux"))]
pub(crate) mod pcs;
mod pending;
mod poll;
pub(crate) mod registry;
pub(crate) mod sampler;
mod sigmask;
#[cfg(feature = "tracing")]
pub(crate) mod span;
pub(crate) mod stack;
pub(crate) mod timing;
pub(crate) mod trace;

#[cfg(unix)]
pub(crate) use life::exit_key;
pub(crate) use registry::{capture, reset_all, Capture};
pub(crate) use timing::read_cost;

/// At load, from tickprof's constructor (before `main`, on the main
/// thread, outside any signal handler): notes the signals the process
/// was started with blocked (see `sigmask`).
pub(crate) fn at_load() {
    sigmask::note_at_load();
}

/// Runs `f` (tickprof's own work: capturing, building and writing
/// reports) with the calling thread's marked calls turned away, so that a
/// marked global allocator called by that work is neither recorded nor
/// re-entered.
pub(crate) fn quietly<R>(f: impl FnOnce() -> R) -> R {
    stack::current().while_busy(f)
}
