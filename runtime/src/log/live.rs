//! The live trace log (`TICKPROF_LOG`): a built-in hook that renders each
//! thread's calls into that thread's buffer, and writes a batch to the sink
//! when the buffer is full, when the thread exits, and at process exit.

use super::render::Thread;
use super::{LogOptions, Match};
#[cfg(unix)]
use crate::fork_lock;
use crate::hook::{Enter, Exit, Hook};
use crate::record::fasthash::FastMap;
use crate::site::CallSite;
#[cfg(unix)]
use std::cell::Cell;
use std::cell::OnceCell;

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock, TryLockError, Weak};

/// Bytes of finished lines a thread keeps before writing them in one batch.
const BATCH: usize = 64 * 1024;

/// Where the log goes.
pub(crate) enum Sink {
    /// File descriptor 2.
    Stderr,
    /// A file opened at start-up.
    File(std::fs::File),
}

impl Sink {
    fn write(&mut self, bytes: &[u8]) {
        let _ = match self {
            // No `SIGPIPE` from tickprof's write (`crate::nopipe`).
            #[cfg(all(feature = "enabled", unix))]
            Sink::Stderr => crate::nopipe::write_all(2, bytes),
            #[cfg(not(all(feature = "enabled", unix)))]
            Sink::Stderr => std::io::stderr().write_all(bytes),
            Sink::File(f) => f.write_all(bytes),
        };
    }
}

struct Log {
    opts: LogOptions,
    sink: Mutex<Sink>,
    threads: Mutex<Vec<Weak<Mutex<ThreadLog>>>>,
}

static LOG: OnceLock<Log> = OnceLock::new();

/// One thread's log and its per-site cache of names and filter matches.
struct ThreadLog {
    render: Thread,
    sites: FastMap<usize, (Arc<str>, Match)>,
}

/// Owned by the thread's thread-local: flushes the thread's log at its
/// exit.
struct Local(Arc<Mutex<ThreadLog>>);

impl Drop for Local {
    fn drop(&mut self) {
        flush_one(&self.0, true);
    }
}

thread_local! {
    static LOCAL: OnceCell<Option<Local>> = const { OnceCell::new() };
}

/// The hook itself.
struct LogHook;

static HOOK: LogHook = LogHook;

/// Starts the log (once): from the constructor, when `TICKPROF_LOG` is set.
pub(crate) fn install(sink: Sink, opts: LogOptions) {
    let log = Log {
        opts,
        sink: Mutex::new(sink),
        threads: Mutex::new(Vec::new()),
    };
    if LOG.set(log).is_ok() {
        crate::record::hook::set_log(&HOOK);
    }
}

/// Runs `f` on the calling thread's log, created on first use (`None`: the
/// thread is not shown, its log is busy, or it is exiting).
fn with_thread(tid: u64, name: &str, f: impl FnOnce(&LogOptions, &mut ThreadLog)) {
    let Some(log) = LOG.get() else {
        return;
    };
    let _ = LOCAL.try_with(|local| {
        let local = local.get_or_init(|| {
            if !log.opts.shows_thread(tid) {
                return None;
            }
            let t = Arc::new(Mutex::new(ThreadLog {
                render: Thread::new(tid, name),
                sites: FastMap::default(),
            }));
            if let Ok(mut all) = log.threads.lock() {
                all.retain(|w| w.strong_count() > 0);
                all.push(Arc::downgrade(&t));
            }
            Some(Local(t))
        });
        let Some(Local(t)) = local else {
            return;
        };
        // Never wait: the lock is only contended by the exit flush.
        let mut g = match t.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => return,
        };
        f(&log.opts, &mut g);
        if g.render.out.len() >= BATCH {
            let batch = core::mem::take(&mut g.render.out);
            drop(g);
            write(log, batch.as_bytes());
        }
    });
}

fn write(log: &Log, bytes: &[u8]) {
    let mut sink = log
        .sink
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    sink.write(bytes);
}

/// As [`write`], waiting for the sink only briefly (thread and process
/// exit: whatever another thread is doing, the exit never blocks).
fn write_bounded(log: &Log, bytes: &[u8]) {
    for _ in 0..1000 {
        match log.sink.try_lock() {
            Ok(mut sink) => return sink.write(bytes),
            Err(TryLockError::Poisoned(e)) => return e.into_inner().write(bytes),
            Err(TryLockError::WouldBlock) => std::thread::yield_now(),
        }
    }
}

impl ThreadLog {
    fn site(&mut self, opts: &LogOptions, site: &'static CallSite) -> (Arc<str>, Match) {
        let key = site as *const CallSite as usize;
        self.sites
            .entry(key)
            .or_insert_with(|| {
                let name = site.name();
                let m = opts.matches(&name);
                (Arc::from(name), m)
            })
            .clone()
    }
}

impl Hook for LogHook {
    fn on_enter(&self, call: &Enter<'_>) {
        with_thread(call.thread_id, call.thread_name, |opts, t| {
            let (name, m) = t.site(opts, call.site);
            let key = (call.site as *const CallSite as usize, call.depth);
            t.render.enter(opts, key, &name, m);
        });
    }

    fn on_exit(&self, call: &Exit<'_>) {
        with_thread(call.thread_id, call.thread_name, |opts, t| {
            let (name, _) = t.site(opts, call.site);
            let key = (call.site as *const CallSite as usize, call.depth);
            t.render
                .exit(opts, key, &name, call.duration_ns, call.unwinding);
        });
    }
}

/// Writes out one thread's log; `finish` also closes it (thread or process
/// exit). Waits for the thread's lock only briefly.
fn flush_one(t: &Mutex<ThreadLog>, finish: bool) {
    let Some(log) = LOG.get() else {
        return;
    };
    let mut g = None;
    for _ in 0..100 {
        match t.try_lock() {
            Ok(x) => g = Some(x),
            Err(TryLockError::Poisoned(e)) => g = Some(e.into_inner()),
            Err(TryLockError::WouldBlock) => {
                std::thread::yield_now();
                continue;
            }
        }
        break;
    }
    let Some(mut g) = g else {
        return;
    };
    if finish {
        g.render.finish();
    }
    let batch = core::mem::take(&mut g.render.out);
    drop(g);
    if !batch.is_empty() {
        write_bounded(log, batch.as_bytes());
    }
}

/// At process exit: writes out every thread's log, open calls included.
/// Bounded waits only; never panics.
pub(crate) fn flush_all() {
    let Some(log) = LOG.get() else {
        return;
    };
    let threads: Vec<Arc<Mutex<ThreadLog>>> = match log.threads.try_lock() {
        Ok(all) => all.iter().filter_map(Weak::upgrade).collect(),
        Err(_) => return,
    };
    for t in &threads {
        flush_one(t, true);
    }
    if let Ok(mut sink) = log.sink.try_lock() {
        if let Sink::File(f) = &mut *sink {
            let _ = f.flush();
        }
    }
}

thread_local! {
    /// The sink's lock, held by the forking thread across a `fork`.
    #[cfg(unix)]
    static HELD_FOR_FORK: fork_lock::Held<Sink> = const { Cell::new(None) };
}

/// Before `fork`: takes the sink's lock, so that the child does not inherit
/// it held by a thread it does not have.
#[cfg(unix)]
pub(crate) fn fork_prepare() {
    if let Some(log) = LOG.get() {
        let g = log
            .sink
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        fork_lock::hold(&HELD_FOR_FORK, g);
    }
}

/// After `fork`, in the parent: releases the sink.
#[cfg(unix)]
pub(crate) fn fork_parent() {
    drop(fork_lock::take(&HELD_FOR_FORK));
}

/// After `fork`, in the child: releases the sink and forgets the lines the
/// parent will write itself, so that the child's log has only its own
/// calls (the forking thread's open calls stay open).
#[cfg(unix)]
pub(crate) fn fork_child() {
    fork_parent();
    let Some(log) = LOG.get() else {
        return;
    };
    if let Ok(all) = log.threads.try_lock() {
        for t in all.iter().filter_map(Weak::upgrade) {
            if let Ok(mut g) = t.try_lock() {
                g.render.forget_output();
            }
        }
    }
}
