//! The hot path: per-thread calling-context trees, written by guards.
//!
//! - [`alloc`]: allocation counts of `tickprof::Alloc`, on the current node;
//! - [`node`]: one tree node, its counters and its child cache;
//! - [`arena`]: a thread's nodes, in segments that never move;
//! - [`stack`]: the thread's shadow stack (owns its `unsafe`);
//! - [`guard`]: `Guard`, detached guards, async polls;
//! - [`future`]: the future wrapper of `#[profile] async fn`;
//! - [`hook`]: the hooks' cold path (dispatch, re-entrancy, panics);
//! - `span`: frames of spans entered from outside (the `tracing` bridge);
//! - [`trace`]: per-thread trace buffers;
//! - [`registry`]: live and finished threads, and the capture a report
//!   starts from;
//! - [`fork`]: the `fork` handlers (no lock inherited held; the child
//!   starts a fresh profile).
//!
//! Only the owning thread writes a node (relaxed load + store, no locked
//! instruction); the report reads every arena at any time with relaxed
//! loads. When a thread exits, its tree is merged into the finished
//! threads' data, so nothing it recorded is lost.

pub(crate) mod alloc;
pub(crate) mod arena;
pub(crate) mod fasthash;
pub(crate) mod fork;
pub(crate) mod future;
pub(crate) mod guard;
pub(crate) mod hook;
pub(crate) mod node;
pub(crate) mod registry;
mod sigmask;
#[cfg(feature = "tracing")]
pub(crate) mod span;
pub(crate) mod stack;
pub(crate) mod trace;

pub(crate) use registry::{capture, reset_all, Capture};
pub(crate) use stack::CALIBRATION_THREAD;

/// Runs `f` (tickprof's own work: capturing, building and writing
/// reports) with the calling thread's marked calls turned away, so that a
/// marked global allocator called by that work is neither recorded nor
/// re-entered.
pub(crate) fn quietly<R>(f: impl FnOnce() -> R) -> R {
    stack::current().while_busy(f)
}
