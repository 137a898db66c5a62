//! The armed failpoints as marked calls read them: the table of
//! `TICKPROF_FAIL` (every thread, resolved to site addresses), the tables
//! set through the API (per thread), the seeded random stream, the counts
//! of faults injected, and the evaluation at a marked call's entry.
//!
//! A leaf below the recorder: it imports the switches, the call sites and
//! the action parser only. Names are resolved and tables armed in
//! [`super::state`].

use super::parse::{Action, Task};
use super::Injected;
use crate::site::CallSite;
use crate::switches::{self, FAIL};
use core::cell::{Cell, RefCell};
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// One configured failpoint: its chain of actions, shared by every site
/// its name matched (counts are per entry, as in the `fail` crate).
pub(crate) struct Point {
    pub(super) actions: Vec<Action>,
}

/// (site address, its failpoint), sorted by address: names are resolved
/// once, when a table is armed, so a call looks its site up by address
/// (a binary search), never by name.
pub(super) type Resolved = Vec<(usize, Arc<Point>)>;

/// One entry of a thread's API table: the name as given, the sites it
/// matched, the failpoint.
pub(crate) type LocalEntry = (String, Vec<usize>, Arc<Point>);

/// The `TICKPROF_FAIL` table, for every thread.
pub(super) static GLOBAL: Mutex<Option<Arc<Resolved>>> = Mutex::new(None);
/// Bumped when [`GLOBAL`] changes, so threads refresh their copy.
pub(super) static GENERATION: AtomicU64 = AtomicU64::new(0);
/// Threads whose API table is not empty.
static LOCAL_TABLES: AtomicUsize = AtomicUsize::new(0);
/// Serialises the updates of the `FAIL` bit.
static BIT: Mutex<()> = Mutex::new(());
/// Whether any table was ever armed (the report then has a faults part).
pub(super) static ARMED_EVER: AtomicBool = AtomicBool::new(false);
/// The seed of the probabilities (before `TICKPROF_FAIL_SEED` or
/// `tickprof::fail::seed` sets one, the settings' default), and the draws
/// made since it was set.
pub(super) static SEED: AtomicU64 = AtomicU64::new(crate::defaults::DEFAULT_FAIL_SEED);
static DRAWS: AtomicU64 = AtomicU64::new(0);
/// Faults injected per site (address, site, count); locked only when one
/// fires.
pub(super) static INJECTED: Mutex<Vec<(usize, &'static CallSite, u64)>> = Mutex::new(Vec::new());

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A thread's failpoint state.
struct Local {
    /// The API table (`tickprof::fail::cfg`): this thread only.
    table: RefCell<Vec<LocalEntry>>,
    /// This thread's copy of [`GLOBAL`] and its generation.
    global: RefCell<(u64, Option<Arc<Resolved>>)>,
    /// Inside an evaluation: a marked call made from it (a marked
    /// allocator, say) is not a failpoint.
    busy: Cell<bool>,
    /// A `return` fired at this site: its `#[profile(fail)]` check takes it.
    pending: RefCell<Option<(usize, Option<String>)>>,
}

impl Drop for Local {
    fn drop(&mut self) {
        if !self.table.get_mut().is_empty() {
            LOCAL_TABLES.fetch_sub(1, Ordering::Relaxed);
            update_bit();
        }
    }
}

thread_local! {
    static LOCAL: Local = const {
        Local {
            table: RefCell::new(Vec::new()),
            global: RefCell::new((u64::MAX, None)),
            busy: Cell::new(false),
            pending: RefCell::new(None),
        }
    };
}

/// Sets the `FAIL` bit when any table is armed, clears it otherwise.
pub(super) fn update_bit() {
    let _g = lock(&BIT);
    let on = lock(&GLOBAL).is_some() || LOCAL_TABLES.load(Ordering::Relaxed) > 0;
    if on {
        ARMED_EVER.store(true, Ordering::Relaxed);
    }
    switches::set_bit(FAIL, on);
}

pub(super) fn key(site: &CallSite) -> usize {
    site as *const CallSite as usize
}

/// Restarts the random stream of the probabilities from `seed`.
pub(crate) fn set_seed(seed: u64) {
    SEED.store(seed, Ordering::Relaxed);
    DRAWS.store(0, Ordering::Relaxed);
}

/// A uniform draw in [0, 1) from the seeded stream (splitmix64).
fn draw() -> f64 {
    let n = DRAWS.fetch_add(1, Ordering::Relaxed);
    let mut z = SEED
        .load(Ordering::Relaxed)
        .wrapping_add(n.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// The task of the first action of the chain that fires, as the `fail`
/// crate decides it: a spent count skips the action, then the
/// probability, then the count is taken.
fn task(point: &Point) -> Option<Task> {
    point.actions.iter().find_map(|a| {
        if a.count
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Acquire) == 0)
        {
            return None;
        }
        if a.freq < 1.0 && draw() >= f64::from(a.freq) {
            return None;
        }
        if let Some(c) = &a.count {
            c.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
                .ok()?;
        }
        Some(a.task.clone())
    })
}

/// The task that fires at `site` on this thread, if any: its API table
/// first, then the `TICKPROF_FAIL` table.
fn fired(l: &Local, site: usize) -> Option<Task> {
    if let Some(e) = l.table.borrow().iter().find(|e| e.1.contains(&site)) {
        return task(&e.2);
    }
    let generation = GENERATION.load(Ordering::Relaxed);
    let mut g = l.global.borrow_mut();
    if g.0 != generation {
        *g = (generation, lock(&GLOBAL).clone());
    }
    let table = g.1.as_ref()?;
    let i = table.binary_search_by_key(&site, |e| e.0).ok()?;
    task(&table[i].1)
}

/// Counts a fault at `site`. The lock is never held across a marked
/// call: a marked allocator's calls made while pushing see `busy` and are
/// not failpoints.
fn count(site: &'static CallSite) {
    let _ = LOCAL.try_with(|l| {
        let was = l.busy.replace(true);
        let _restore = Busy(&l.busy, was);
        let mut v = lock(&INJECTED);
        match v.iter_mut().find(|e| e.0 == key(site)) {
            Some(e) => e.2 += 1,
            None => v.push((key(site), site, 1)),
        }
    });
}

/// Restores a thread's `busy` flag when dropped (also when a `panic`
/// action unwinds).
struct Busy<'a>(&'a Cell<bool>, bool);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.set(self.1);
    }
}

/// Evaluates `site`'s failpoint at a marked call's entry (the `FAIL` bit
/// is set): sleeps, delays, prints or panics here; a `return` is left for
/// the `#[profile(fail)]` check ([`take_injected`]). Marked calls made
/// meanwhile (a marked allocator's) are not failpoints.
#[cold]
#[inline(never)]
pub(crate) fn at_entry(site: &'static CallSite) {
    let _ = LOCAL.try_with(|l| {
        if l.busy.replace(true) {
            return;
        }
        let _restore = Busy(&l.busy, false);
        let Some(task) = fired(l, key(site)) else {
            return;
        };
        run(site, l, task);
    });
}

/// Carries out a fired task.
fn run(site: &'static CallSite, l: &Local, task: Task) {
    match task {
        Task::Off => return,
        Task::Return(msg) => {
            *l.pending.borrow_mut() = Some((key(site), msg));
            return;
        }
        _ => count(site),
    }
    match task {
        Task::Sleep(ms) => std::thread::sleep(Duration::from_millis(ms)),
        Task::Delay(ms) => {
            let t = Instant::now();
            let d = Duration::from_millis(ms);
            while t.elapsed() < d {
                core::hint::spin_loop();
            }
        }
        Task::Yield => std::thread::yield_now(),
        Task::Print(msg) => {
            let line = msg.unwrap_or_else(|| format!("failpoint {} executed.", site.name()));
            let _ = writeln!(std::io::stderr(), "{line}");
        }
        Task::Panic(Some(msg)) => panic!("{msg}"),
        Task::Panic(None) => panic!("failpoint {} panic", site.name()),
        Task::Off | Task::Return(_) => {}
    }
}

/// The error a `return` left for `site` on this thread, if any (counted
/// as injected).
#[cold]
#[inline(never)]
pub(crate) fn take_injected(site: &'static CallSite) -> Option<Injected> {
    let msg = LOCAL
        .try_with(|l| {
            let mut p = l.pending.borrow_mut();
            match p.as_ref() {
                Some((k, _)) if *k == key(site) => p.take().map(|(_, m)| m),
                _ => None,
            }
        })
        .ok()
        .flatten()?;
    count(site);
    Some(Injected {
        failpoint: site.name(),
        message: msg,
    })
}

/// Removes `name` from this thread's table.
pub(crate) fn remove(name: &str) {
    with_table(|t| t.retain(|e| e.0 != name));
}

/// Replaces this thread's table, returning the old one.
pub(crate) fn replace(new: Vec<LocalEntry>) -> Vec<LocalEntry> {
    let mut old = Vec::new();
    with_table(|t| old = core::mem::replace(t, new));
    old
}

/// Edits this thread's table, keeping [`LOCAL_TABLES`] and the bit right.
pub(super) fn with_table(f: impl FnOnce(&mut Vec<LocalEntry>)) {
    let _ = LOCAL.try_with(|l| {
        let mut t = l.table.borrow_mut();
        let before = !t.is_empty();
        f(&mut t);
        let after = !t.is_empty();
        match (before, after) {
            (false, true) => LOCAL_TABLES.fetch_add(1, Ordering::Relaxed),
            (true, false) => LOCAL_TABLES.fetch_sub(1, Ordering::Relaxed),
            _ => return,
        };
        drop(t);
        update_bit();
    });
}

/// Forgets the faults counted so far (`tickprof::reset`).
pub(crate) fn reset_counts() {
    lock(&INJECTED).clear();
}

#[cfg(test)]
mod tests;
