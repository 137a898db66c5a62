//! The hooks' cold path: the installed hooks (the trace log's and the
//! user's), the per-thread "inside a hook" flag, and the dispatch of
//! [`Enter`] and [`Exit`] events with panics caught.
//!
//! Reached only from the cold entry and exit paths (`record::cold`) and
//! the async poll's exit, when a [`HOOK`] or [`LOG`] bit is set in the
//! mode: the fast path (mode exactly `RECORD`) never looks here.

use super::registry;
use super::stack::STATE;
use crate::hook::{Enter, Exit, Hook, SetHookError};
use crate::site::CallSite;
use crate::switches::{set_bit, HOOK, LOG};
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::cell::{Cell, OnceCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

/// One installed hook, disabled for good if it panics.
struct Slot {
    hook: OnceLock<&'static dyn Hook>,
    disabled: AtomicBool,
    bit: u8,
    what: &'static str,
}

impl Slot {
    const fn new(bit: u8, what: &'static str) -> Slot {
        Slot {
            hook: OnceLock::new(),
            disabled: AtomicBool::new(false),
            bit,
            what,
        }
    }

    fn call(&self, f: &dyn Fn(&dyn Hook)) {
        let Some(&hook) = self.hook.get() else {
            return;
        };
        if self.disabled.load(Ordering::Relaxed) {
            return;
        }
        if catch_unwind(AssertUnwindSafe(|| f(hook))).is_err()
            && !self.disabled.swap(true, Ordering::Relaxed)
        {
            set_bit(self.bit, false);
            warn(&format!(
                "tickprof: warning: the {} panicked; it is disabled for the rest of the run\n",
                self.what
            ));
        }
    }
}

/// The trace log (`TICKPROF_LOG`), called first.
static LOG_SLOT: Slot = Slot::new(LOG, "trace log (TICKPROF_LOG)");
/// The hook installed with `set_hook`.
static USER_SLOT: Slot = Slot::new(HOOK, "hook installed with tickprof::set_hook");

/// One fallible line on stderr (the hook module cannot use `exit`'s writer).
fn warn(line: &str) {
    use std::io::Write as _;
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// `set_hook`: installs the user's hook and turns the [`HOOK`] bit on.
pub(crate) fn set_user(hook: &'static dyn Hook) -> Result<(), SetHookError> {
    USER_SLOT.hook.set(hook).map_err(|_| SetHookError::new())?;
    set_bit(HOOK, true);
    Ok(())
}

/// Installs the trace log's hook and turns the [`LOG`] bit on (once).
pub(crate) fn set_log(hook: &'static dyn Hook) {
    if LOG_SLOT.hook.set(hook).is_ok() {
        hz();
        set_bit(LOG, true);
    }
}

thread_local! {
    /// Set while this thread runs hooks: marked calls made then are inert.
    static IN_HOOK: Cell<bool> = const { Cell::new(false) };
    /// Open hooked calls that are not recorded (profile off): their depth.
    static UNRECORDED: Cell<usize> = const { Cell::new(0) };
    /// This thread's number (0: not yet given) …
    static NUMBER: Cell<u64> = const { Cell::new(0) };
    /// … and its name.
    static NAME: OnceCell<Box<str>> = const { OnceCell::new() };
}

/// Whether the calling thread is running a hook.
pub(crate) fn in_hook() -> bool {
    IN_HOOK.with(Cell::get)
}

/// A depth for a hooked call that is not recorded (the profile is off).
pub(super) fn unrecorded_enter() -> usize {
    UNRECORDED.with(|d| {
        let depth = d.get() + 1;
        d.set(depth);
        depth
    })
}

/// Ends a not-recorded hooked call at `depth`; returns whether it was out
/// of order.
pub(super) fn unrecorded_exit(depth: usize) -> bool {
    UNRECORDED.with(|d| {
        let top = d.replace(depth.saturating_sub(1));
        top != depth
    })
}

/// tickprof's number for this thread: its arena's when it records, else
/// one taken from the same counter.
fn thread_number() -> u64 {
    NUMBER.with(|n| {
        if n.get() == 0 {
            let id = STATE
                .with(|s| s.arena().map(|a| a.thread_id))
                .unwrap_or_else(registry::next_thread_id);
            n.set(id);
        }
        n.get()
    })
}

/// Calls `f` with this thread's number and name (`"?"` once the name is
/// gone at thread exit).
fn with_thread(f: impl FnOnce(u64, &str)) {
    let id = thread_number();
    let mut f = Some(f);
    let _ = NAME.try_with(|name| {
        let name = name.get_or_init(|| {
            let t = std::thread::current();
            t.name()
                .map_or_else(|| format!("{:?}", t.id()), str::to_owned)
                .into_boxed_str()
        });
        if let Some(f) = f.take() {
            f(id, name);
        }
    });
    if let Some(f) = f.take() {
        f(id, "?");
    }
}

/// This thread's hooks' cold path under way: [`IN_HOOK`] set from before
/// the thread's name is looked up (a `OnceCell`) until the hooks return,
/// so that a signal handler interrupting it, whose marked call comes here
/// again, is turned away instead of re-entering the name's initialisation
/// or a hook's own state (issue 54: "reentrant init" panics, a double
/// free, a hook's lock taken twice).
struct Busy;

impl Busy {
    /// `None` when this thread is in its hooks' cold path already.
    fn take() -> Option<Busy> {
        (!IN_HOOK.with(|h| h.replace(true))).then_some(Busy)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        IN_HOOK.with(|h| h.set(false));
    }
}

/// Runs every installed hook with marked calls turned away.
fn dispatch(f: &dyn Fn(&dyn Hook)) {
    let was = IN_HOOK.with(|h| h.replace(true));
    // Marked calls the hooks make (a marked allocator's, say) are inert,
    // and so are tickprof's own in the record module.
    super::quietly(|| {
        LOG_SLOT.call(f);
        USER_SLOT.call(f);
    });
    IN_HOOK.with(|h| h.set(was));
}

/// Frequency for converting ticks to nanoseconds, once.
fn hz() -> f64 {
    static HZ: AtomicU64 = AtomicU64::new(0);
    let bits = HZ.load(Ordering::Relaxed);
    if bits != 0 {
        return f64::from_bits(bits);
    }
    let hz = crate::clock::rough_hz();
    HZ.store(hz.to_bits(), Ordering::Relaxed);
    hz
}

/// Calls the hooks' `on_enter`.
#[cold]
#[inline(never)]
pub(super) fn enter(site: &'static CallSite, depth: usize, ticks: u64, poll: bool) {
    let Some(_busy) = Busy::take() else {
        return;
    };
    with_thread(|thread_id, thread_name| {
        let e = Enter {
            site,
            thread_id,
            thread_name,
            depth,
            ticks,
            poll,
        };
        dispatch(&|h| h.on_enter(&e));
    });
}

/// What ended, for [`exit`].
pub(super) struct Ended {
    pub site: &'static CallSite,
    pub depth: usize,
    pub start: u64,
    pub end: u64,
    pub out_of_order: bool,
    pub poll: bool,
    pub completed: bool,
    /// Known to have returned (the explicit exit of a `#[profile]`
    /// function): not unwinding, whatever `std::thread::panicking()` says.
    pub returned: bool,
}

impl Ended {
    /// A call (not a poll) that ended.
    pub(super) fn call(
        site: &'static CallSite,
        depth: usize,
        (start, end): (u64, u64),
        out_of_order: bool,
        returned: bool,
    ) -> Ended {
        Ended {
            site,
            depth,
            start,
            end,
            out_of_order,
            poll: false,
            completed: true,
            returned,
        }
    }
}

/// Calls the hooks' `on_exit`.
#[cold]
#[inline(never)]
pub(super) fn exit(x: &Ended) {
    let ticks = x.end.wrapping_sub(x.start);
    let duration_ns = ticks as f64 * 1e9 / hz();
    let unwinding = !x.returned && std::thread::panicking();
    let Some(_busy) = Busy::take() else {
        return;
    };
    with_thread(|thread_id, thread_name| {
        let e = Exit {
            site: x.site,
            thread_id,
            thread_name,
            depth: x.depth,
            start_ticks: x.start,
            end_ticks: x.end,
            duration_ns,
            unwinding,
            out_of_order: x.out_of_order,
            poll: x.poll,
            completed: x.completed,
        };
        dispatch(&|h| h.on_exit(&e));
    });
}
