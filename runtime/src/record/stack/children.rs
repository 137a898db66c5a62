//! Finding a call's tree node when the parent's one-entry cache holds
//! another site: a thread's table of recent lookups, then its hash map,
//! which creates the node (or, past `TICKPROF_MAX_NODES`, picks the site's
//! overflow node).

use super::{Frame, ThreadState};
use crate::record::node::{Kind, Node, KIND_BITS};
use crate::record::pagemap::PageMap;
use crate::record::sigmask;
use crate::site::CallSite;
use crate::switches::{MAX_NODES, RECORDED_ANY};
use crate::tree::{OVERFLOW_NESTED, OVERFLOW_OUTER};
use core::sync::atomic::Ordering;

/// Frames `site_on_stack` looks at, from the top, to decide whether a call
/// past the node cap is nested in another of its site.
const NESTING_SCAN: usize = 1 << 16;

/// Off the hot path (new tree nodes only): notes that the program made a
/// marked call, so the exit report is due.
fn note_recorded(site: &'static CallSite) {
    if !site.is_internal() {
        RECORDED_ANY.store(true, Ordering::Relaxed);
    }
}

/// Owner-thread-only lookup tables, off the hot path (in pages: a new
/// path's lookup may run in a signal handler).
pub(super) struct Maps {
    /// (parent index, site) → child node.
    children: PageMap,
    /// (site, nested) → the site's overflow node.
    overflow: PageMap,
}

/// Slots of a thread's table of recent child lookups ([`Recent`]).
const RECENT_SLOTS: usize = 256;

/// A thread's direct-mapped table of recent child lookups, consulted when
/// the parent's one-entry cache holds another site (a parent alternating
/// between children: parse, validate, parse, …) before the hash map. A slot
/// holds a child node only, one word, so a signal handler's marked call
/// that overwrites it mid-read leaves either node; a hit is checked against
/// the node's own (immutable) site and parent, so a slot shared by two
/// (parent, site) pairs only misses. 2 KiB per recording thread.
pub(super) struct Recent([core::sync::atomic::AtomicPtr<Node>; RECENT_SLOTS]);

/// The slot of (parent, site) in [`Recent`].
#[inline(always)]
fn recent_index(parent: *const Node, site: *const CallSite) -> usize {
    let key = (parent as usize as u64) ^ (site as usize as u64).rotate_left(29);
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize
}

/// `site`'s child of `parent` held in `slot`; `None` when the slot holds
/// another (parent, site)'s child, or nothing.
#[inline(always)]
pub(super) fn recent_child(
    slot: &core::sync::atomic::AtomicPtr<Node>,
    parent: &Node,
    site: &'static CallSite,
) -> Option<*const Node> {
    let cached = slot.load(Ordering::Relaxed);
    // SAFETY: a slot holds null or a node of this thread's arena, which
    // outlives the state.
    let child = unsafe { cached.cast_const().as_ref() }?;
    let site_ptr = (site as *const CallSite).cast_mut();
    if child.site.load(Ordering::Relaxed) != site_ptr
        || child.parent.load(Ordering::Relaxed) != parent.index.load(Ordering::Relaxed)
    {
        return None;
    }
    Some(cached)
}

impl Maps {
    /// Empty tables, for a thread's set-up.
    pub(super) const fn new() -> Maps {
        Maps {
            children: PageMap::new(),
            overflow: PageMap::new(),
        }
    }
}

impl Recent {
    /// An empty table, for a thread's set-up.
    pub(super) fn new() -> Recent {
        Recent(core::array::from_fn(|_| {
            core::sync::atomic::AtomicPtr::new(core::ptr::null_mut())
        }))
    }
}

impl Recent {
    /// Empties the table (a `fork`'s child).
    #[cfg(unix)]
    pub(super) fn clear(&self) {
        for slot in &self.0 {
            slot.store(core::ptr::null_mut(), Ordering::Relaxed);
        }
    }

    /// The slot of (`parent`, `site`).
    #[inline(always)]
    pub(super) fn slot(
        &self,
        parent: &Node,
        site: &'static CallSite,
    ) -> &core::sync::atomic::AtomicPtr<Node> {
        &self.0[recent_index(parent, site)]
    }
}

impl ThreadState {
    /// In a `fork`'s child: empties the child caches of this thread's
    /// nodes and its table of recent lookups, so that the child's next
    /// call of each path takes the cold path of a lookup, which starts
    /// the child's sampler (a child running only paths its parent ran
    /// would otherwise hit the caches and never start one: its report
    /// came out unsampled and raw).
    #[cfg(unix)]
    pub(in crate::record) fn forget_children(&self) {
        if let Some(arena) = self.arena() {
            arena.forget_children();
        }
        // SAFETY: null until set up, freed by the teardown after it is
        // nulled; this thread's own.
        if let Some(recent) = unsafe { self.recent.get().as_ref() } {
            recent.clear();
        }
    }

    /// A pseudo-random bit (xorshift), for the child cache's replacement.
    pub(super) fn coin(&self) -> bool {
        let mut x = self.coin.get();
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.coin.set(x);
        x & 1 != 0
    }

    /// A push whose parent's caches do not hold `site` (`parent`: the
    /// node on top, untagged, never a sentinel: [`ThreadState::push`]
    /// turns those away): a lookup, then the node cached in the parent's
    /// one-entry cache and made the top.
    #[cold]
    #[inline(never)]
    pub(in crate::record) fn push_miss(
        &self,
        site: &'static CallSite,
        parent: *const Node,
    ) -> Frame {
        // SAFETY: a top that is no sentinel is a node of this thread's arena.
        let p = unsafe { &*parent };
        let slot = self.recent_slot(p, site);
        let node = match slot.and_then(|slot| recent_child(slot, p, site)) {
            Some(node) => node,
            None => match self.lookup(p, site) {
                Some(node) => {
                    // Only a node whose parent link is this parent goes in the
                    // table: an overflow node's link is 0, the root's index,
                    // so cached for another parent it would be taken for the
                    // root's child of `site` when the root's lookup lands on
                    // the same slot (found by tests/recorder_model.rs).
                    // SAFETY: `lookup` returns nodes of this thread's arena.
                    let linked = unsafe { &*node }.parent.load(Ordering::Relaxed)
                        == p.index.load(Ordering::Relaxed);
                    if let (Some(slot), true) = (slot, linked) {
                        slot.store(node.cast_mut(), Ordering::Relaxed);
                    }
                    node
                }
                None => return self.no_frame(site),
            },
        };
        // SAFETY: `node` is a node of this thread's arena (found above).
        let kind = crate::record::timing::kind(unsafe { &*node });
        p.cache_child(
            (site as *const CallSite).cast_mut(),
            node.cast_mut(),
            kind,
            self.coin(),
        );
        self.set_top(node);
        (node, parent as usize)
    }

    /// The node of a counted call of `site` from `parent` (the top word
    /// as it is, maybe tagged) in the thread's table of recent lookups,
    /// for [`crate::record::counted::Counted::enter_any`] past its
    /// parent's child cache: inline, no call (a call on the way to the
    /// marked function's body makes every call of it save registers),
    /// nothing cached. `None`: a tagged top, a sentinel or the root
    /// (index 0: a sentinel's is the root's, so a root's child in the
    /// table would be taken for the sentinel's), tickprof's own work, an
    /// overflow parent, no entry, a child not (or not yet) counted.
    #[inline(always)]
    pub(in crate::record) fn recent_counted_inline(
        &self,
        parent: *const Node,
        site: &'static CallSite,
    ) -> Option<*const Node> {
        let recent = self.recent.get();
        if parent as usize % core::mem::align_of::<Node>() != 0
            || recent.is_null()
            || self.busy.get()
        {
            return None;
        }
        // SAFETY: an untagged top is a sentinel or a node of this thread's
        // arena, which outlives the state; a sentinel's index is 0.
        let p = unsafe { &*parent };
        if p.index.load(Ordering::Relaxed) == 0 || p.is_overflow() {
            return None;
        }
        // SAFETY: not null: set up, freed by the teardown after it is
        // nulled; this thread's own.
        let node = recent_child(unsafe { &*recent }.slot(p, site), p, site)?;
        // SAFETY: the table's nodes are nodes of this thread's arena.
        if crate::record::timing::kind(unsafe { &*node }) != Kind::Counted {
            return None;
        }
        Some(node)
    }

    /// A counted call's node that its parent's child cache does not hold
    /// under any kind but the thread's table of recent lookups does (a
    /// parent calling more than three children in turn), for the guard's
    /// cold entry to count at once, without the set-up checks and the
    /// push; cached in the parent's caches as [`ThreadState::push_miss`]
    /// caches it. `None` sends the call on to the push: the site held in
    /// the parent's caches (under another kind), and whatever
    /// [`ThreadState::recent_counted_inline`] turns away.
    pub(in crate::record) fn recent_counted(
        &self,
        parent: *const Node,
        site: &'static CallSite,
    ) -> Option<*const Node> {
        let node = self.recent_counted_inline(parent, site)?;
        // SAFETY: a parent `recent_counted_inline` accepts is a node of
        // this thread's arena.
        let p = unsafe { &*parent };
        let site_ptr = (site as *const CallSite).cast_mut();
        if p.mru_site.load(Ordering::Relaxed) as usize ^ site_ptr as usize <= KIND_BITS
            || !p.way_child(site_ptr).is_null()
        {
            return None;
        }
        p.cache_child(site_ptr, node.cast_mut(), Kind::Counted, self.coin());
        Some(node)
    }

    /// The slot of (`parent`, `site`) in this thread's table of recent
    /// lookups; `None` inside tickprof's own bookkeeping (`lookup` turns
    /// such calls away).
    #[inline]
    fn recent_slot(
        &self,
        parent: &Node,
        site: &'static CallSite,
    ) -> Option<&core::sync::atomic::AtomicPtr<Node>> {
        if self.busy.get() {
            return None;
        }
        // SAFETY: null until set up, freed by the teardown after it is
        // nulled; this thread's own.
        Some(unsafe { self.recent.get().as_ref() }?.slot(parent, site))
    }

    /// Finds or creates the child of `parent` for `site`.
    #[cold]
    #[inline(never)]
    fn lookup(&self, parent: &Node, site: &'static CallSite) -> Option<*const Node> {
        if self.busy.get() {
            self.note_reentrant();
            return None;
        }
        self.busy.set(true);
        let node = self.lookup_inner(parent, site);
        self.busy.set(false);
        node
    }

    fn lookup_inner(&self, parent: &Node, site: &'static CallSite) -> Option<*const Node> {
        // SAFETY: set up before any frame can exist; owned by this state and
        // only touched here while `busy` excludes re-entry.
        let maps = unsafe { &mut *self.maps.get() };
        // SAFETY: as in `note_reentrant`.
        let arena = unsafe { &*self.arena.get() };
        if self.name_pending.get() {
            let tries = self.name_tries.get().wrapping_add(1);
            self.name_tries.set(tries);
            if tries.is_power_of_two() && !sigmask::any_blocked() {
                self.name_pending.set(false);
                arena.set_late_name(&sigmask::std_thread_name());
            }
        }
        let site_ptr = (site as *const CallSite).cast_mut();
        let parent_index = parent.index.load(Ordering::Relaxed);
        let is_overflow_parent = parent.flags.load(Ordering::Relaxed) != 0;
        // Children are cached for overflow parents too: without it, every
        // call beneath an overflow node (deep recursion, leaked guards past
        // the node cap) would scan the whole stack.
        let key = (u64::from(parent_index), site_ptr as u64);
        if let Some(node) = maps.children.get(key.0, key.1) {
            return Some(node as *const Node);
        }
        let depth = parent.depth.load(Ordering::Relaxed).saturating_add(1);
        if !is_overflow_parent && arena.len() < MAX_NODES.load(Ordering::Relaxed) {
            note_recorded(site);
            let node = arena.push(Some(site), parent_index, 0)?;
            // SAFETY: `push` returns a node of this thread's arena.
            let n = unsafe { &*node };
            n.depth.store(depth, Ordering::Relaxed);
            crate::record::timing::start(n, site);
            // Not indexed (no memory): found again by the next miss, which
            // would push a second node; give up the call instead.
            if !maps.children.insert(key.0, key.1, node as usize) {
                return None;
            }
            return Some(node);
        }
        // The tree is full (or the parent is an overflow node, whose path is
        // unknown): use the per-site overflow node, outer or nested.
        let nested = self.site_on_stack(site_ptr);
        let node = match maps.overflow.get(site_ptr as u64, u64::from(nested)) {
            Some(n) => n as *const Node,
            None => {
                note_recorded(site);
                let flags = if nested {
                    OVERFLOW_NESTED
                } else {
                    OVERFLOW_OUTER
                };
                let n = arena.push(Some(site), 0, flags)?;
                // SAFETY: `push` returns a node of this thread's arena.
                unsafe { &*n }.depth.store(depth, Ordering::Relaxed);
                if !maps
                    .overflow
                    .insert(site_ptr as u64, u64::from(nested), n as usize)
                {
                    return None;
                }
                n
            }
        };
        // Beneath an overflow parent the path is unknown, so whether `site`
        // is nested is decided here, once per (overflow parent, site).
        if !maps.children.insert(key.0, key.1, node as usize) {
            return None;
        }
        Some(node)
    }

    /// Whether an activation of `site` is open on this thread: among its
    /// open calls on overflow nodes, or on the chain of nodes from the one
    /// under them (or the top) up to the root. (Only the `NESTING_SCAN`
    /// nearest are looked at: an activation farther up is taken as not
    /// open.)
    fn site_on_stack(&self, site: *mut CallSite) -> bool {
        let Some(arena) = self.arena() else {
            return false;
        };
        let opens = self.overflow();
        // SAFETY: open calls' nodes are nodes of this thread's arena.
        let on = |n: *const Node| unsafe { &*n }.site.load(Ordering::Relaxed) == site;
        if opens.nodes().take(NESTING_SCAN).any(on) {
            return true;
        }
        let mut n = opens.base().unwrap_or_else(|| self.top());
        for _ in 0..NESTING_SCAN {
            if on(n) {
                return true;
            }
            // SAFETY: as above (a sentinel has no site and no parent).
            let node = unsafe { &*n };
            match arena.get(node.parent.load(Ordering::Relaxed) as usize) {
                Some(p) if node.site().is_some() => n = p,
                _ => return false,
            }
        }
        false
    }
}
