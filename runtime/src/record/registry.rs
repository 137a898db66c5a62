//! Live and finished threads, and [`capture`], which copies everything
//! recorded so far into plain data for a report.
//!
//! One lock guards the list of live arenas and the merged data of finished
//! threads, so a report never sees a thread twice or not at all. The hot
//! path never takes it: a thread takes it when it starts recording and
//! when it finishes; the report takes it with a deadline.

use super::arena::Arena;
use super::trace::ThreadEvents;
use crate::tree::Tree;
use core::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

/// Stack events of one thread or summed over threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct StackEvents {
    /// Frames popped by a resynchronisation (their guards were leaked,
    /// moved or dropped late).
    pub resynced: u64,
    /// Guards dropped after their frame was popped.
    pub orphaned: u64,
    /// Calls from inside tickprof's own bookkeeping: not recorded.
    pub reentrant: u64,
    /// Calls that ended after their thread's state was torn down.
    pub lost: u64,
}

impl StackEvents {
    fn of(a: &Arena) -> StackEvents {
        StackEvents {
            resynced: a.resynced.load(Ordering::Relaxed),
            orphaned: a.orphaned.load(Ordering::Relaxed),
            reentrant: a.reentrant.load(Ordering::Relaxed),
            lost: 0,
        }
    }

    fn add(&mut self, o: StackEvents) {
        self.resynced += o.resynced;
        self.orphaned += o.orphaned;
        self.reentrant += o.reentrant;
        self.lost += o.lost;
    }

    fn minus(self, earlier: StackEvents) -> StackEvents {
        StackEvents {
            resynced: self.resynced.saturating_sub(earlier.resynced),
            orphaned: self.orphaned.saturating_sub(earlier.orphaned),
            reentrant: self.reentrant.saturating_sub(earlier.reentrant),
            lost: self.lost.saturating_sub(earlier.lost),
        }
    }
}

/// One thread's tree.
#[derive(Clone, Debug)]
pub(crate) struct ThreadTree {
    pub name: String,
    pub id: u64,
    pub finished: bool,
    pub tree: Tree,
}

/// Live arenas and the merged data of finished threads.
struct Registry {
    live: Vec<Arc<Arena>>,
    /// Every finished thread's tree, merged.
    finished: Tree,
    finished_threads: Vec<ThreadTree>,
    finished_events: StackEvents,
    finished_traces: Vec<ThreadEvents>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    live: Vec::new(),
    finished: Tree::new(),
    finished_threads: Vec::new(),
    finished_events: StackEvents {
        resynced: 0,
        orphaned: 0,
        reentrant: 0,
        lost: 0,
    },
    finished_traces: Vec::new(),
});

/// Guards that ended after their thread's profiler state was torn down.
static LOST: AtomicU64 = AtomicU64::new(0);
static NEXT_THREAD_ID: AtomicU64 = AtomicU64::new(1);

/// How long a report waits for a finishing thread to release the lock.
const REPORT_LOCK_WAIT: Duration = Duration::from_millis(200);

/// Blocking lock, for threads starting or finishing.
fn lock() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Lock with a deadline: never waits on a lock another thread may hold
/// forever.
fn try_lock(wait: Duration) -> Option<MutexGuard<'static, Registry>> {
    let start = Instant::now();
    loop {
        match REGISTRY.try_lock() {
            Ok(g) => return Some(g),
            Err(TryLockError::Poisoned(e)) => return Some(e.into_inner()),
            Err(TryLockError::WouldBlock) => {
                if start.elapsed() >= wait {
                    return None;
                }
                std::thread::yield_now();
            }
        }
    }
}

/// A new arena for the calling thread, listed as live.
pub(super) fn new_thread(name: String) -> Arc<Arena> {
    let id = NEXT_THREAD_ID.fetch_add(1, Ordering::Relaxed);
    let arena = Arc::new(Arena::new(name, id));
    lock().live.push(Arc::clone(&arena));
    arena
}

/// A copy of the thread's trace events.
fn events_of(arena: &Arena) -> ThreadEvents {
    let (events, dropped) = arena.trace.copy();
    ThreadEvents {
        thread_id: arena.thread_id,
        thread_name: arena.thread_name.clone(),
        events,
        dropped,
    }
}

/// A thread finished: its data joins the finished threads'.
pub(super) fn finish_thread(arena: &Arc<Arena>) {
    let tree = arena.snapshot();
    let events = events_of(arena);
    let mut g = lock();
    if !events.events.is_empty() || events.dropped > 0 {
        g.finished_traces.push(events);
    }
    g.finished.merge(&tree);
    g.finished_events.add(StackEvents::of(arena));
    g.finished_threads.push(ThreadTree {
        name: arena.thread_name.clone(),
        id: arena.thread_id,
        finished: true,
        tree,
    });
    g.live.retain(|a| !Arc::ptr_eq(a, arena));
}

/// Adds a call made with no thread state (after the thread's teardown) to
/// the finished threads' tree; counts it as lost if the lock cannot be had
/// promptly.
pub(super) fn add_detached(tree: &Tree) {
    match try_lock(Duration::from_millis(100)) {
        Some(mut g) => g.finished.merge(tree),
        None => note_lost(),
    }
}

/// Counts a call that could not be recorded.
pub(super) fn note_lost() {
    LOST.fetch_add(1, Ordering::Relaxed);
}

/// Everything recorded so far, as plain data: the input of a report.
#[derive(Clone)]
pub(crate) struct Capture {
    /// Every thread's tree, merged.
    pub merged: Tree,
    /// Each thread's tree, in order of first marked call.
    pub threads: Vec<ThreadTree>,
    pub events: StackEvents,
    /// False when a finishing thread held the lock past the deadline.
    pub complete: bool,
    pub at: Instant,
    /// Per-thread trace events, when tracing is on.
    pub traces: Vec<ThreadEvents>,
}

/// Copies every live thread's tree and the finished threads' data.
/// `with_traces`: copy the trace buffers too.
pub(crate) fn capture(with_traces: bool) -> Capture {
    let at = Instant::now();
    let lost = LOST.load(Ordering::Relaxed);
    let mut c = Capture {
        merged: Tree::new(),
        threads: Vec::new(),
        events: StackEvents {
            lost,
            ..StackEvents::default()
        },
        complete: false,
        at,
        traces: Vec::new(),
    };
    let Some(g) = try_lock(REPORT_LOCK_WAIT) else {
        return c;
    };
    c.complete = true;
    if with_traces {
        c.traces.clone_from(&g.finished_traces);
    }
    c.merged = g.finished.clone();
    c.threads.clone_from(&g.finished_threads);
    c.events.add(g.finished_events);
    let live = g.live.clone();
    drop(g);
    for a in &live {
        let t = a.snapshot();
        c.merged.merge(&t);
        c.events.add(StackEvents::of(a));
        c.threads.push(ThreadTree {
            name: a.thread_name.clone(),
            id: a.thread_id,
            finished: false,
            tree: t,
        });
        if with_traces {
            c.traces.push(events_of(a));
        }
    }
    c.threads.sort_by_key(|t| t.id);
    c.traces.sort_by_key(|t| t.thread_id);
    c
}

impl Capture {
    /// What was recorded between `earlier` and `self`, node by node.
    pub(crate) fn minus(&self, earlier: &Capture) -> Capture {
        Capture {
            merged: self.merged.minus(&earlier.merged),
            threads: self
                .threads
                .iter()
                .map(|t| {
                    let before = earlier.threads.iter().find(|p| p.id == t.id);
                    ThreadTree {
                        name: t.name.clone(),
                        id: t.id,
                        finished: t.finished,
                        tree: before.map_or_else(|| t.tree.clone(), |b| t.tree.minus(&b.tree)),
                    }
                })
                .collect(),
            events: self.events.minus(earlier.events),
            complete: self.complete && earlier.complete,
            at: self.at,
            traces: Vec::new(),
        }
    }
}

/// Zeroes every counter of every thread (the structure is kept).
pub(crate) fn reset_all() {
    let mut g = lock();
    for a in &g.live {
        a.reset();
    }
    g.finished = Tree::new();
    g.finished_threads.clear();
    g.finished_events = StackEvents::default();
    g.finished_traces.clear();
    LOST.store(0, Ordering::Relaxed);
}
