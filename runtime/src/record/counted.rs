//! A counted call inline in the marked function ([`Counted`]): when the
//! parent's one-entry cache holds the site as counted, the call is counted
//! (one add) and its node is the thread's top while its body runs; nothing
//! else. Anything else takes [`super::guard::Guard`]'s path.

use super::node::{Kind, Node};
use super::stack::{current, ENTRY};
use super::timing;
use crate::site::CallSite;
use core::marker::PhantomData;
use core::sync::atomic::Ordering;

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
    /// recording plainly) when the node on top caches `site` as counted:
    /// its node becomes the top; else `None` (the guard's path).
    #[inline(always)]
    pub fn enter(site: &'static CallSite) -> Option<Counted> {
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
        // SAFETY: the top word is a sentinel's or a node's address, maybe
        // plus a tag below 64: the 8 bytes read lie inside that node (a
        // node is 256 bytes, 64-aligned), written only by this thread
        // (its child cache: no other thread touches it, so no race).
        let cached = unsafe { core::ptr::read_unaligned(parent.cast::<usize>()) };
        if cached != site as *const CallSite as usize + Kind::Counted as usize {
            return None;
        }
        // SAFETY: the cache matched: `parent` is an untagged node of this
        // thread's arena, which outlives the state.
        let node = unsafe { &*parent }
            .mru_child
            .load(Ordering::Relaxed)
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
