//! Guards: what a marked function or scope holds from entry to exit
//! ([`Guard`]). The whole per-call path reads top to bottom here: the
//! entry (mode test, the child cache, the clock read or the count), the
//! exit (the clock read, the check that the call is on top, the
//! recording); everything else leaves for [`super::cold`].

use super::cold;
use super::frame::{Frame, COUNTED_TAG};
use super::node::{Kind, Node, KIND_BITS};
use super::stack::{current, ThreadState, ENTRY, EXIT};
use super::timing;
use crate::clock::ticks;
use crate::site::CallSite;
use crate::switches::{mode, recording, OFF, RECORD};
use core::marker::PhantomData;
use core::sync::atomic::Ordering;

/// Times one activation of a call site, from [`Guard::enter`] to drop.
///
/// Created by the code `#[profile]` and `prof_scope!` generate. Not `Send`:
/// a guard belongs to the thread whose tree it records into.
#[must_use = "the guard times until it is dropped"]
pub struct Guard {
    /// The clock at entry; 0 for a counted call (and an inert guard).
    pub(super) start: u64,
    /// The call's node (null: inert), tagged for a traced or hooked call
    /// (see `frame`).
    pub(super) node: *const Node,
    /// The parent's word: the node to put back on top at exit (see
    /// `frame`).
    pub(super) parent: usize,
    _not_send: PhantomData<*const ()>,
}

impl Guard {
    /// Starts one activation of `site`.
    ///
    /// Recording plainly, the entry opens its window (the word tagged `ENTRY`: the
    /// sampler counts what it finds now as the caller's instrumentation),
    /// asks the parent's child cache, and, on a hit, reads the clock (a
    /// timed node) or counts the call (a counted one: one add) and makes
    /// the node the top, which closes the window. Anything else — another
    /// mode, a cache miss, a learning node, a thread not set up — takes
    /// the cold path, which returns only the frame (sixteen bytes, in
    /// registers): a cold path that returned a whole guard would return
    /// it through memory, and the guard of every call would then live on
    /// the stack.
    #[inline(always)]
    pub fn enter(site: &'static CallSite) -> Guard {
        Guard::enter_in(site, mode())
    }

    /// [`Guard::enter`] with the mode read by the caller (the marked
    /// function, for its off test).
    #[inline(always)]
    pub fn enter_in(site: &'static CallSite, mode: u8) -> Guard {
        if mode != RECORD {
            if mode == OFF {
                return Guard::inert();
            }
            return Guard::timed_from(cold::enter(site, mode, false));
        }
        let s = current();
        let parent = s.top();
        s.set_top_tagged(parent, ENTRY);
        // SAFETY: the top is a sentinel (an empty cache) or a node of this
        // thread's arena, which outlives the state.
        let p = unsafe { &*parent };
        let site_ptr = site as *const CallSite as usize;
        let cached = p.mru_site.load(Ordering::Relaxed) as usize;
        if cached == site_ptr {
            let node = p.mru_child.load(Ordering::Relaxed).cast_const();
            let start = start_stamp();
            s.set_top(node);
            return Guard::timed(node, parent as usize, start);
        }
        if cached == site_ptr + Kind::Counted as usize {
            let node = p.mru_child.load(Ordering::Relaxed).cast_const();
            // SAFETY: a cached child is a node of this thread's arena.
            timing::count(unsafe { &*node });
            s.set_top(node);
            return Guard::counted(node, parent as usize);
        }
        Guard::from_slow(enter_other(s, p, site))
    }

    /// The guard of a frame a slow path returned: counted when its node
    /// is tagged [`COUNTED_TAG`], inert when nothing was pushed, else
    /// timed (the clock read now).
    #[inline(always)]
    pub(super) fn from_slow((node, parent): Frame) -> Guard {
        if node as usize & COUNTED_TAG != 0 {
            Guard::counted(node.wrapping_byte_sub(COUNTED_TAG), parent)
        } else {
            Guard::timed_from((node, parent))
        }
    }

    /// A timed guard of `frame`, or an inert one when nothing was pushed.
    #[inline(always)]
    pub(super) fn timed_from((node, parent): Frame) -> Guard {
        if node.is_null() {
            return Guard::inert();
        }
        Guard::timed(node, parent, start_stamp())
    }

    #[inline(always)]
    pub(super) fn timed(node: *const Node, parent: usize, start: u64) -> Guard {
        Guard {
            start,
            node,
            parent,
            _not_send: PhantomData,
        }
    }

    /// A counted call's guard: `start` 0 and a node (the call was counted
    /// on entry).
    #[inline(always)]
    pub(super) fn counted(node: *const Node, parent: usize) -> Guard {
        Guard::timed(node, parent, 0)
    }

    /// A guard that does nothing: profiling is off.
    #[inline(always)]
    pub(super) fn inert() -> Guard {
        Guard::timed(core::ptr::null(), 0, 0)
    }

    /// Ends the activation of a call that returned: the code `#[profile]`
    /// generates calls it after the body has produced its value. The call
    /// did not unwind, so the drop's unwinding check
    /// (`std::thread::panicking()`) is skipped. Early returns (`return`,
    /// `?`) and panics leave through the drop, which checks.
    ///
    /// Inlined always in optimised builds (the hot path); in builds with
    /// debug assertions a plain `#[inline]`, so that an unoptimised crate
    /// calls one copy instead of carrying a second inlined exit (after the
    /// drop's) in every marked function.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn exit(self) {
        core::mem::ManuallyDrop::new(self).end(false);
    }

    /// [`Guard::exit`] of a call that returned `value`, handed back after
    /// an opaque pass on a timed call's path (before its exit's clock
    /// read: the compiler may otherwise compute a pure body after it); a
    /// counted call reads no clock, and its value stays where the compiler
    /// keeps it.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn exit_with<T>(self, value: T) -> T {
        let g = core::mem::ManuallyDrop::new(self);
        let value = if g.start != 0 {
            core::hint::black_box(value)
        } else {
            value
        };
        g.end(false);
        value
    }

    /// Ends the call (`check`: whether it may be unwinding). A timed
    /// call: the clock read, then, its node on top, its window opened
    /// ([`EXIT`]), the call recorded, its parent made the top; a counted
    /// one: its parent made the top; an inert one: nothing.
    #[inline(always)]
    pub(super) fn end(&self, check: bool) {
        if self.start == 0 {
            if !self.node.is_null() {
                pop_counted(current(), self.node, self.parent, check);
            }
            return;
        }
        let end = ticks();
        let s = current();
        if !s.is_top(self.node) {
            return cold::exit(s, (self.node, self.parent), (self.start, end), check);
        }
        let parent = self.parent as *const Node;
        s.set_top_tagged(parent, EXIT);
        // SAFETY: the node on top of this thread is a node of its arena,
        // which outlives the state.
        unsafe { &*self.node }.record_then(end.wrapping_sub(self.start), check, move || {
            s.set_top(parent)
        });
    }

    /// Whether the guard does nothing (profiling off, or nothing pushed).
    #[inline(always)]
    pub(super) fn is_inert(&self) -> bool {
        self.node.is_null()
    }
}

impl Drop for Guard {
    #[inline(always)]
    fn drop(&mut self) {
        self.end(true);
    }
}

/// Ends a counted call: its parent back on top. A counted call that
/// unwinds is counted as unwound.
#[inline(always)]
pub(super) fn pop_counted(s: &ThreadState, node: *const Node, parent: usize, check: bool) {
    if !s.is_top(node) {
        return cold::exit_counted(s, (node, parent), check);
    }
    s.set_top(parent as *const Node);
    if check && std::thread::panicking() {
        cold::unwound(node);
    }
}

/// A guard's entry that the one-entry cache did not hold: the parent's
/// two extra entries, then [`enter_slow`]. A parent whose calls alternate
/// between children finds a timed one here (a counted one is found
/// inline, by `Counted::enter`; semver's parsers: 7 M of 18.5 M marked
/// calls a run missed the one-entry cache, and the cold path cost 79
/// instructions a call before the timing or the count). Out of line and
/// cold, as the cold path: the fast path's code stays as it was.
#[cold]
#[inline(never)]
pub(super) fn enter_other(s: &ThreadState, p: &Node, site: &'static CallSite) -> Frame {
    let way = p.way_child((site as *const CallSite).cast_mut());
    let kind = way as usize & KIND_BITS;
    let node = way.wrapping_byte_sub(kind).cast_const();
    let parent = p as *const Node as usize;
    if kind == Kind::Counted as usize {
        // SAFETY: a cached child is a node of this thread's arena.
        timing::count(unsafe { &*node });
        s.set_top(node);
        return (node.wrapping_byte_add(COUNTED_TAG), parent);
    }
    if kind == Kind::Timed as usize && !node.is_null() {
        s.set_top(node);
        return (node, parent);
    }
    enter_slow(s, site)
}

/// A guard's entry that the child cache could not answer plainly:
/// [`cold::enter_recording`] (the extra entries and the table of recent
/// lookups, a miss, a thread not set up); then the node's kind as on the
/// fast path (an overflow node's call is timed, its frame tagged so that
/// its exit is cold too). A counted call's frame comes back with its node tagged
/// [`COUNTED_TAG`]; the top is the node (none pushed: as it was,
/// untagged). Out of line: no value of the marked function lives across
/// it.
#[cold]
#[inline(never)]
pub(super) fn enter_slow(s: &ThreadState, site: &'static CallSite) -> Frame {
    // A counted child its parent's child cache does not hold (a parent
    // calling more than three children in turn: pulldown-cmark's
    // `Parser::next`) found in the thread's table of recent lookups:
    // counted at once, without the set-up checks and the push below.
    if !super::sampler::idle() {
        let parent = s.top();
        if let Some(node) = s.recent_counted(parent, site) {
            // SAFETY: `recent_counted` returns nodes of this thread's arena.
            timing::count(unsafe { &*node });
            s.set_top(node);
            return (node.wrapping_byte_add(COUNTED_TAG), parent as usize);
        }
    }
    let (node, word) = cold::enter_recording(s, site);
    if node.is_null() || word == super::frame::DETACHED {
        return (node, word);
    }
    // SAFETY: a pushed frame's node is a node of this thread's arena.
    let n = unsafe { &*node };
    if n.is_overflow() {
        // Tagged: its exit takes the cold path too (see `overflow_open`).
        return (node.wrapping_byte_add(super::frame::TAG), word);
    }
    match timing::kind(n) {
        Kind::Timed => (node, word),
        Kind::Counted => {
            timing::count(n);
            (node.wrapping_byte_add(COUNTED_TAG), word)
        }
        Kind::Settle => {
            // SAFETY: the parent of a pushed frame is a node of this
            // thread's arena.
            timing::settle(unsafe { &*(word as *const Node) }, n);
            (node, word)
        }
    }
}

/// The clock's reading at a timed call's entry, never 0 (0 marks a
/// counted or inert guard): the time-stamp counter is far from 0 once the
/// machine runs; the monotonic fallback counts from its first read.
#[inline(always)]
pub(super) fn start_stamp() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        ticks()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        ticks().max(1)
    }
}

/// Records a raw delta against `site` as one finished call on this thread,
/// exactly as a guard's drop would (rejection included). For tests of the
/// accumulation and rejection rules without a real clock.
pub fn record_raw(site: &'static CallSite, delta: u64) {
    if !recording() {
        return;
    }
    let s = current();
    let (node, parent) = cold::enter_recording(s, site);
    if !node.is_null() && parent != super::frame::DETACHED && s.pop_frame(node, parent) {
        // SAFETY: a frame just popped from this thread's live tree.
        unsafe { &*node }.record(delta, true);
    }
}
