//! Entry/exit hooks: the [`Hook`] trait, the [`Enter`] and [`Exit`] events
//! and [`SetHookError`]. `set_hook` is in the crate root; the dispatch (cold
//! path) is `record::hook`.
//!
//! A hook sees every marked call's entry and exit on every thread, as it
//! happens: the building block for tools (the trace log, `TICKPROF_LOG`,
//! is one). With no hook installed, marked calls pay nothing for this.

use crate::site::CallSite;

/// A tool called at every marked call's entry and exit.
///
/// Installed once with [`set_hook`](crate::set_hook); several tools are composed as a
/// tuple, which is a hook that calls its members in order:
/// `set_hook(Box::leak(Box::new((Counter::default(), Logger))))`.
///
/// # What a hook sees
///
/// - Every marked function, scope and guard, on every thread, also while
///   the profile is off (`TICKPROF=off`: a hook installed in code runs
///   whatever the environment says). Not with the `enabled` feature off
///   (then nothing is marked).
/// - One [`Enter`] and one [`Exit`] per call, or per *poll* for an
///   `async fn` (then [`Enter::poll`] is true and [`Exit::completed`] says
///   whether the future finished in that poll).
/// - Exits that unwind ([`Exit::unwinding`]) and exits out of order
///   ([`Exit::out_of_order`], a guard dropped while a later one is open).
///
/// # Re-entrancy and panics
///
/// Marked calls made *inside* a hook (including by a marked global
/// allocator) are neither seen by hooks nor recorded in the profile: the
/// hook cannot recurse, and its cost is charged to the caller of the
/// hooked call. A hook that panics is caught (also during an unwinding
/// exit), a single warning line is printed, and that hook is not called
/// again; the program continues with its exit code unchanged.
///
/// # Cost
///
/// A hooked call runs tickprof's cold path: a few tens of nanoseconds plus
/// the hooks' own work, which is not included in the hooked call's time.
///
/// # Examples
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// struct Calls(AtomicU64);
///
/// impl tickprof_runtime::Hook for Calls {
///     fn on_exit(&self, call: &tickprof_runtime::Exit<'_>) {
///         if call.completed {
///             self.0.fetch_add(1, Ordering::Relaxed);
///         }
///     }
/// }
///
/// static CALLS: Calls = Calls(AtomicU64::new(0));
/// tickprof_runtime::set_hook(&CALLS).unwrap();
/// ```
pub trait Hook: Send + Sync + 'static {
    /// A marked call (or poll) starts.
    fn on_enter(&self, call: &Enter<'_>) {
        let _ = call;
    }

    /// A marked call (or poll) ends, normally or by unwinding.
    fn on_exit(&self, call: &Exit<'_>) {
        let _ = call;
    }
}

/// A marked call starting, as a [`Hook`] sees it.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Enter<'a> {
    /// The mark: its name, path, file and line.
    pub site: &'static CallSite,
    /// tickprof's number for the calling thread: the `id` of its
    /// per-thread row and `tid` of its `.trace.json` timeline.
    pub thread_id: u64,
    /// The calling thread's name (its `ThreadId` if unnamed).
    pub thread_name: &'a str,
    /// Marked calls open on this thread, this one included (1 = no marked
    /// caller).
    pub depth: usize,
    /// The clock (in ticks) when the entry was seen.
    pub ticks: u64,
    /// Whether this is one poll of an `async fn`.
    pub poll: bool,
}

/// A marked call ending, as a [`Hook`] sees it.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Exit<'a> {
    /// The mark: its name, path, file and line.
    pub site: &'static CallSite,
    /// As [`Enter::thread_id`].
    pub thread_id: u64,
    /// As [`Enter::thread_name`].
    pub thread_name: &'a str,
    /// As the matching [`Enter::depth`].
    pub depth: usize,
    /// The clock (in ticks) when the call's timing started (after the entry
    /// hooks ran).
    pub start_ticks: u64,
    /// The clock (in ticks) when the call ended.
    pub end_ticks: u64,
    /// The call's duration in nanoseconds (raw: instrumentation included),
    /// converted with a first estimate of the clock frequency (within about
    /// 1%).
    pub duration_ns: f64,
    /// Whether the call ended by unwinding (a panic passing through it).
    pub unwinding: bool,
    /// Whether its guard was dropped while a later call on this thread was
    /// still open (a moved or leaked guard).
    pub out_of_order: bool,
    /// Whether this is one poll of an `async fn`.
    pub poll: bool,
    /// For a poll: whether the future completed in it. For any other call:
    /// true. (Counting exits with `completed` gives the report's calls.)
    pub completed: bool,
}

/// [`set_hook`](crate::set_hook) was called when a hook was installed already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetHookError(());

impl SetHookError {
    #[cfg_attr(not(feature = "enabled"), allow(dead_code))]
    pub(crate) const fn new() -> Self {
        SetHookError(())
    }
}

impl core::fmt::Display for SetHookError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("a tickprof hook is installed already (compose several as a tuple)")
    }
}

impl std::error::Error for SetHookError {}

macro_rules! tuple_hook {
    ($($t:ident $i:tt),+) => {
        /// Calls each member in order.
        impl<$($t: Hook),+> Hook for ($($t,)+) {
            fn on_enter(&self, call: &Enter<'_>) {
                $(self.$i.on_enter(call);)+
            }
            fn on_exit(&self, call: &Exit<'_>) {
                $(self.$i.on_exit(call);)+
            }
        }
    };
}

tuple_hook!(A 0, B 1);
tuple_hook!(A 0, B 1, C 2);
tuple_hook!(A 0, B 1, C 2, D 3);

/// A shared hook is a hook (so a `static` can be a tuple's member).
impl<H: Hook + ?Sized> Hook for &'static H {
    fn on_enter(&self, call: &Enter<'_>) {
        (**self).on_enter(call);
    }
    fn on_exit(&self, call: &Exit<'_>) {
        (**self).on_exit(call);
    }
}
