//! A counted call inline in the marked function ([`Counted`]): when the
//! parent's child cache (its one-entry cache, then, for `always` marks,
//! its two extra entries and the thread's table of recent lookups) holds
//! the site as counted, the call is counted (one add) and its node is the
//! thread's top while its body runs; nothing else. Anything else takes
//! [`super::guard::Guard`]'s path.

use super::node::{Kind, Node, KIND_BITS};
use super::stack::{current, ENTRY};
use super::timing;
use crate::site::CallSite;
use core::marker::PhantomData;
use core::sync::atomic::{AtomicPtr, Ordering};

/// Where a node's extra child cache entries begin, and the size of one.
const WAYS: usize = core::mem::offset_of!(Node, ways);
const WAY: usize = core::mem::size_of::<super::node::Way>();

/// A counted call of a marked function, in progress: its node is the top
/// of the thread, and its parent goes back on top at its end.
///
/// Its entry opens the instrumentation's window as a timed call's does
/// (the top tagged `ENTRY`: its lookup and its count are found as the
/// instrumentation of a call the parent makes), and making its node the
/// top closes it; its exit is one store.
#[must_use = "the counted call ends when this is dropped"]
pub struct Counted {
    node: *const Node,
    parent: *const Node,
    _not_send: PhantomData<*const ()>,
}

impl Counted {
    /// Counts one call of `site` (the marked function read the mode:
    /// recording plainly) when the node on top caches `site` as counted
    /// in its one-entry cache: its node becomes the top; else `None` (the
    /// guard's path). What `#[profile]` calls: a timed call pays one
    /// compare for it (71 instructions, `scripts/callgrind_overhead.sh`).
    #[inline(always)]
    pub fn enter(site: &'static CallSite) -> Option<Counted> {
        Counted::enter_with(site, false)
    }

    /// [`Counted::enter`], finding `site` in any entry of the child cache
    /// (the one-entry cache, then the two extra entries), then in the
    /// thread's table of recent lookups (inline, in the function's cold
    /// part): what `#[profile(always)]` calls (the marks `cargo tickprof`
    /// places on every function the optimiser keeps, where a parent
    /// alternates between small counted children). A counted call found
    /// in an extra entry: 24 instructions instead of 53 through `timed`'s
    /// guard; one found in the table runs its body here too, not in
    /// `timed`'s closure (pulldown-cmark's workload, whose `Parser::next`
    /// calls a dozen: 0.84 times the marked run's time before). A timed
    /// call pays the compares (80 instructions instead of 71,
    /// `scripts/callgrind_overhead.sh`).
    #[inline(always)]
    pub fn enter_any(site: &'static CallSite) -> Option<Counted> {
        Counted::enter_with(site, true)
    }

    #[inline(always)]
    fn enter_with(site: &'static CallSite, ways: bool) -> Option<Counted> {
        let s = current();
        // The top as it is: a node, or a node tagged (a marked call in a
        // signal handler that interrupted an instrumentation window). Not
        // untagged: its first word is read unaligned instead, which for a
        // tagged node gives bytes 1 to 8 of its cache entry — a value
        // above the address space's 48 bits unless its top byte is 0,
        // and then the cached site shifted right by 8, never a site: such
        // a call takes the guard's path, which untags. At the exit the
        // word goes back as it was.
        let parent = s.top_word();
        s.set_top_tagged(parent, ENTRY);
        let key = site as *const CallSite as usize + Kind::Counted as usize;
        // SAFETY: the top word is a sentinel's or a node's address, maybe
        // plus a tag below 64: the 8 bytes read lie inside that node (a
        // node is 256 bytes, 64-aligned), written only by this thread
        // (its child cache: no other thread touches it, so no race).
        let cached = unsafe { core::ptr::read_unaligned(parent.cast::<usize>()) };
        let node = if cached == key {
            // SAFETY: the cache matched: `parent` is an untagged node of
            // this thread's arena, which outlives the state.
            unsafe { &*parent }.mru_child.load(Ordering::Relaxed)
        } else if ways {
            // `Acquire` orders nothing here (this thread wrote the entry;
            // on x86_64 it is the same `mov`): it keeps the compiler from
            // merging this load with the one above, which put an extra
            // instruction on the one-entry cache's hit (21 instead of 20
            // when `#[profile]` read the extra entries too,
            // `scripts/callgrind_overhead.sh`).
            match way_hit(parent, key) {
                Some(child) => child.load(Ordering::Acquire),
                // A parent calling more than three children in turn
                // (pulldown-cmark's `Parser::next`): the thread's table of
                // recent lookups, inline, so that the body still runs
                // here, not in `timed`'s closure behind the guard.
                None => recent_hit(s, parent, site, cached ^ key <= KIND_BITS)?.cast_mut(),
            }
        } else {
            return None;
        }
        .cast_const();
        // SAFETY: a cached child is a node of this thread's arena.
        timing::count(unsafe { &*node });
        s.set_top(node);
        Some(Counted {
            node,
            parent,
            _not_send: PhantomData,
        })
    }

    /// Ends a call that returned: its parent back on top (whatever is on
    /// top: guards opened beneath and never dropped are closed with it).
    #[inline(always)]
    pub fn exit(self) {
        let c = core::mem::ManuallyDrop::new(self);
        current().set_top(c.parent);
    }
}

impl Drop for Counted {
    /// An early return (`return`, `?`) or a panic: as [`Counted::exit`],
    /// and a call that unwinds is counted as unwound.
    #[inline(always)]
    fn drop(&mut self) {
        current().set_top(self.parent);
        if std::thread::panicking() {
            super::cold::unwound(self.node);
        }
    }
}

/// [`ThreadState::recent_counted_inline`], in the cold part of the marked
/// function.
#[cold]
#[inline(always)]
fn recent_hit(
    s: &super::stack::ThreadState,
    parent: *const Node,
    site: &'static CallSite,
    held: bool,
) -> Option<*const Node> {
    if held {
        // The one-entry cache holds the site, not counted (a timed call):
        // the guard's path, which finds it there.
        return None;
    }
    s.recent_counted_inline(parent, site)
}

/// The entry holding the node of the counted child `key` (its site plus
/// [`Kind::Counted`]) in `parent`'s extra child cache, if any: read as the
/// one-entry cache is (`parent` maybe tagged). A parent whose calls
/// alternate between up to three counted children finds each here,
/// inline ([`Counted::enter_any`]). Cold: a hint for the block layout
/// (the one-entry cache's hit still takes one jump more than without the
/// extra entries: 25 instructions for `probe_always` against 24).
#[cold]
#[inline(always)]
fn way_hit<'a>(parent: *const Node, key: usize) -> Option<&'a AtomicPtr<Node>> {
    let ways = parent.wrapping_byte_add(WAYS);
    // SAFETY: as [`Counted::enter`]'s read of the one-entry cache: 8
    // bytes inside the node (its entries end at byte 256 of the node, and
    // a tag adds less than 8 to its address), written only by this
    // thread.
    let first = unsafe { core::ptr::read_unaligned(ways.cast::<usize>()) };
    // SAFETY: the same, 16 bytes on.
    let second = unsafe { core::ptr::read_unaligned(ways.wrapping_byte_add(WAY).cast::<usize>()) };
    if first == key {
        // SAFETY: a match: `parent` is an untagged node of this thread's
        // arena (a tagged read never matches a site: see
        // `Counted::enter`), which outlives the thread's calls.
        return Some(&unsafe { &*parent }.ways[0].child);
    }
    if second == key {
        // SAFETY: as above.
        return Some(&unsafe { &*parent }.ways[1].child);
    }
    None
}
