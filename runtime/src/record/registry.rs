//! Live and finished threads, and [`capture`], which copies everything
//! recorded so far into plain data for a report.
//!
//! Live arenas are a list a starting thread joins without a lock or an
//! allocation (one compare-and-swap at its head: a thread's first marked
//! call may run in a signal handler); one lock guards leaving it, walking
//! it, and the merged data of finished threads, so a report never sees a
//! thread twice or not at all. The hot path never takes the lock: a
//! thread takes it when it finishes; the report takes it with a
//! deadline; the `fork` prepare handler takes it so that a child never
//! inherits it held.
//!
//! Memory stays bounded however many threads come and go: a finished
//! thread's arena is freed (the registry drops its reference), its tree is
//! merged into the total and into its name's row, and at most
//! `TICKPROF_THREADS_KEPT` names get a row (later ones share
//! `<other threads>`).

use super::arena::Arena;
use super::trace::ThreadEvents;
#[cfg(unix)]
use crate::fork_lock;
use crate::switches::THREADS_KEPT;
use crate::tree::Tree;
use core::sync::atomic::{AtomicU64, Ordering};
#[cfg(unix)]
use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, TryLockError};
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
    /// Guards never dropped: frames still open when their thread exited.
    pub leaked: u64,
    /// Ticks the threads' set-ups took (outside every call).
    pub setup_ticks: u64,
    /// Threads set up.
    pub setups: u64,
}

impl StackEvents {
    fn of(a: &Arena) -> StackEvents {
        StackEvents {
            resynced: a.resynced.load(Ordering::Relaxed),
            orphaned: a.orphaned.load(Ordering::Relaxed),
            reentrant: a.reentrant.load(Ordering::Relaxed),
            lost: 0,
            leaked: a.leaked.load(Ordering::Relaxed),
            // tickprof's own thread (the sampler's calibration) is not one
            // of the program's set-ups.
            setup_ticks: if a.is_tools() {
                0
            } else {
                a.setup_ticks.load(Ordering::Relaxed)
            },
            setups: u64::from(!a.is_tools()),
        }
    }

    fn add(&mut self, o: StackEvents) {
        self.resynced += o.resynced;
        self.orphaned += o.orphaned;
        self.reentrant += o.reentrant;
        self.lost += o.lost;
        self.leaked += o.leaked;
        self.setup_ticks += o.setup_ticks;
        self.setups += o.setups;
    }

    fn minus(self, earlier: StackEvents) -> StackEvents {
        StackEvents {
            resynced: self.resynced.saturating_sub(earlier.resynced),
            orphaned: self.orphaned.saturating_sub(earlier.orphaned),
            reentrant: self.reentrant.saturating_sub(earlier.reentrant),
            lost: self.lost.saturating_sub(earlier.lost),
            leaked: self.leaked.saturating_sub(earlier.leaked),
            setup_ticks: self.setup_ticks.saturating_sub(earlier.setup_ticks),
            setups: self.setups.saturating_sub(earlier.setups),
        }
    }
}

/// One thread's tree, or the merged trees of finished threads of one name.
#[derive(Clone, Debug)]
pub(crate) struct ThreadTree {
    pub name: String,
    /// The thread's number; for merged finished threads, the first one's.
    pub id: u64,
    pub finished: bool,
    /// Threads merged into this tree (1 for a live thread).
    pub count: u64,
    pub tree: Tree,
}

/// The name of the row that holds finished threads past the bound on
/// distinct names (`TICKPROF_THREADS_KEPT`).
pub(crate) const OTHER_THREADS: &str = "<other threads>";

/// The merged data of finished threads (and the right to change or walk
/// [`LIVE`] past its head).
struct Registry {
    /// Every finished thread's tree, merged.
    finished: Tree,
    /// Finished threads merged by name: at most `THREADS_KEPT` rows.
    finished_threads: Vec<ThreadTree>,
    /// Index of each name's row in `finished_threads`.
    by_name: BTreeMap<String, usize>,
    /// Finished threads whose name found no row (past the bound).
    other_threads: Option<ThreadTree>,
    finished_events: StackEvents,
    finished_traces: Vec<ThreadEvents>,
    /// Finished threads that were named late (live, they were listed as
    /// `<thread N>`): id → name, so that a difference of captures finds a
    /// thread's earlier data under its later name. At most
    /// [`RENAMED_KEPT`], the oldest forgotten first.
    renamed: BTreeMap<u64, String>,
}

/// Late-named threads [`Registry::renamed`] keeps.
const RENAMED_KEPT: usize = 4096;

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    finished: Tree::new(),
    finished_threads: Vec::new(),
    by_name: BTreeMap::new(),
    other_threads: None,
    finished_events: StackEvents {
        resynced: 0,
        orphaned: 0,
        reentrant: 0,
        lost: 0,
        leaked: 0,
        setup_ticks: 0,
        setups: 0,
    },
    finished_traces: Vec::new(),
    renamed: BTreeMap::new(),
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

/// A thread number from the arenas' counter, for a thread that has no
/// arena (hooks running while the profile is off).
pub(super) fn next_thread_id() -> u64 {
    NEXT_THREAD_ID.fetch_add(1, Ordering::Relaxed)
}

/// A copy of the thread's trace events.
fn events_of(arena: &Arena) -> ThreadEvents {
    let (events, dropped) = arena.trace.copy();
    ThreadEvents {
        thread_id: arena.thread_id,
        thread_name: arena.name().to_owned(),
        events,
        dropped,
    }
}

impl Registry {
    /// Merges a finished thread's tree into its name's row: a new row while
    /// fewer than `kept` names have one, else the `<other threads>` row.
    fn merge_finished_row(&mut self, arena: &Arena, tree: Tree, kept: usize) {
        let row = match self.by_name.get(arena.name()) {
            Some(&i) => self.finished_threads.get_mut(i),
            None if self.finished_threads.len() < kept => {
                self.by_name
                    .insert(arena.name().to_owned(), self.finished_threads.len());
                self.finished_threads.push(ThreadTree {
                    name: arena.name().to_owned(),
                    id: arena.thread_id,
                    finished: true,
                    count: 1,
                    tree,
                });
                return;
            }
            None => Some(self.other_threads.get_or_insert_with(|| ThreadTree {
                name: OTHER_THREADS.to_owned(),
                id: arena.thread_id,
                finished: true,
                count: 0,
                tree: Tree::new(),
            })),
        };
        if let Some(row) = row {
            row.count += 1;
            row.tree.merge(&tree);
        }
    }
}

/// A thread finished: its data joins the finished threads', its tree is
/// merged into its name's row, and the registry lets go of its arena.
pub(super) fn finish_thread(arena: *const Arena) {
    // SAFETY: the caller (the thread's teardown) holds its reference.
    let a = unsafe { &*arena };
    let tree = a.snapshot();
    let events = events_of(a);
    let kept = THREADS_KEPT.load(Ordering::Relaxed);
    let mut g = lock();
    if !events.events.is_empty() || events.dropped > 0 {
        g.finished_traces.push(events);
    }
    g.finished.merge(&tree);
    g.finished_events.add(StackEvents::of(a));
    g.merge_finished_row(a, tree, kept);
    if a.named_late() {
        if g.renamed.len() >= RENAMED_KEPT {
            g.renamed.pop_first();
        }
        g.renamed.insert(a.thread_id, a.name().to_owned());
    }
    unlist(&g, arena);
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
    /// Threads listed under a placeholder while live (their first marked
    /// call could not ask for their name) and under their name since they
    /// finished: id → name (see `Registry::renamed`).
    pub renamed: BTreeMap<u64, String>,
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
        renamed: BTreeMap::new(),
    };
    let Some(mut g) = try_lock(REPORT_LOCK_WAIT) else {
        return c;
    };
    super::detached::drain_into(&mut g.finished);
    c.complete = true;
    c.renamed.clone_from(&g.renamed);
    if with_traces {
        c.traces.clone_from(&g.finished_traces);
    }
    c.merged = g.finished.clone();
    c.threads.clone_from(&g.finished_threads);
    c.threads.extend(g.other_threads.clone());
    c.events.add(g.finished_events);
    let live = live(&g);
    drop(g);
    for &p in &live {
        // SAFETY: `live` took a reference to each; given back below.
        let a = unsafe { &*p };
        if a.is_tools() {
            // tickprof's own thread: its tree holds the calibration's
            // internal sites (in no report) and, under a marked global
            // allocator, the allocations of std's start of the thread,
            // which are tickprof's, not the program's.
            // SAFETY: the reference `live` took, given back once.
            unsafe { Arena::release(p) };
            continue;
        }
        let t = a.snapshot();
        c.merged.merge(&t);
        c.events.add(StackEvents::of(a));
        c.threads.push(ThreadTree {
            name: a.name().to_owned(),
            id: a.thread_id,
            finished: false,
            count: 1,
            tree: t,
        });
        if with_traces {
            c.traces.push(events_of(a));
        }
        // SAFETY: the reference `live` took, given back once.
        unsafe { Arena::release(p) };
    }
    c.threads.sort_by_key(|t| t.id);
    c.traces.sort_by_key(|t| t.thread_id);
    c
}

/// Zeroes every counter of every thread (the structure is kept).
pub(crate) fn reset_all() {
    let mut g = lock();
    for p in live(&g) {
        // SAFETY: `live` took a reference, given back once.
        unsafe {
            (*p).reset();
            Arena::release(p);
        }
    }
    super::detached::clear();
    forget_finished(&mut g);
}

/// Forgets the finished threads' data and the lost-call count.
fn forget_finished(g: &mut Registry) {
    g.finished = Tree::new();
    g.finished_threads.clear();
    g.by_name.clear();
    g.other_threads = None;
    g.finished_events = StackEvents::default();
    g.finished_traces.clear();
    g.renamed.clear();
    LOST.store(0, Ordering::Relaxed);
}

thread_local! {
    /// The registry lock, held by the forking thread from the `fork`
    /// prepare handler to the parent or child handler. (`ManuallyDrop`: the
    /// thread-local needs no destructor.)
    #[cfg(unix)]
    static HELD_FOR_FORK: fork_lock::Held<Registry> = const { Cell::new(None) };
}

/// Before `fork`: takes the registry lock, so that no other thread holds
/// it when the process is copied.
#[cfg(unix)]
pub(super) fn fork_prepare() {
    fork_lock::hold(&HELD_FOR_FORK, lock());
}

/// After `fork`, in the parent: releases the lock.
#[cfg(unix)]
pub(super) fn fork_parent() {
    drop(fork_lock::take(&HELD_FOR_FORK));
}

/// After `fork`, in the child: forgets everything recorded before the fork
/// (the parent's finished threads, and the live threads that do not exist
/// in the child) but `keep`, the forking thread's arena; then releases the
/// lock.
#[cfg(unix)]
pub(super) fn fork_child(keep: Option<*const Arena>) {
    let Some(mut g) = fork_lock::take(&HELD_FOR_FORK) else {
        return;
    };
    // The other threads' own references keep their arenas allocated: the
    // child never frees memory that the threads it lacks were using. Only
    // the forking thread's stays listed.
    // Raw pointers are `Default` from Rust 1.88 only (rust-version: 1.80).
    #[allow(clippy::unwrap_or_default)]
    let kept = keep.unwrap_or(core::ptr::null());
    #[cfg(all(feature = "inlined", target_os = "linux"))]
    {
        // The other threads' perf events' descriptors were inherited:
        // closed here, in the child only (no allocation: the list walked).
        let mut p = LIVE.load(Ordering::Acquire).cast_const();
        // SAFETY: listed arenas stay allocated (their threads' references
        // in the parent's memory, copied); the lock is held.
        while let Some(a) = unsafe { p.as_ref() } {
            if !core::ptr::eq(p, kept) {
                if let Some(pcs) = a.pcs() {
                    super::pcs::forget_in_child(pcs);
                }
            }
            p = a.next.load(Ordering::Acquire);
        }
    }
    if let Some(a) = {
        // SAFETY: the forking thread's own arena, alive.
        unsafe { kept.as_ref() }
    } {
        a.next.store(core::ptr::null_mut(), Ordering::Relaxed);
    }
    LIVE.store(kept.cast_mut(), Ordering::Release);
    super::detached::clear();
    forget_finished(&mut g);
}

mod diff;
mod live;
#[cfg(all(feature = "inlined", target_os = "linux"))]
mod signal;
pub(super) use live::new_thread;
#[cfg(unix)]
use live::LIVE;
use live::{live, unlist};
#[cfg(all(feature = "inlined", target_os = "linux"))]
pub(in crate::record) use signal::check_pc_signal;

#[cfg(test)]
mod tests;
