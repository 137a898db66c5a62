//! The thread's state on its own, each test on a fresh thread (so its state
//! starts never set up): set-up, the push and pop, the child caches,
//! resynchronisation, re-entry, what the sampler sees.

use super::*;
use crate::record::frame;
use crate::record::node::Kind;

fn a() {}
fn b() {}
// Internal sites: a test binary that records them prints no exit report.
static A: CallSite = CallSite::internal(crate::site::path_of(a), "s.rs", 1);
static B: CallSite = CallSite::internal(crate::site::path_of(b), "s.rs", 2);

/// Runs `f` on a new thread, whose state was never set up.
fn on_fresh_thread(f: impl FnOnce(&'static ThreadState) + Send + 'static) {
    std::thread::spawn(move || f(current())).join().unwrap();
}

/// The node a frame points at.
fn node(n: *const Node) -> &'static Node {
    // SAFETY: the tests pass nodes handed out by the calling thread's
    // arena, which lives until the thread exits.
    unsafe { &*n }
}

/// A marked call's entry as the cold path makes it (the thread set up on
/// its first).
fn push(s: &ThreadState, site: &'static CallSite) -> Frame {
    crate::record::cold::enter_recording(s, site)
}

/// A marked call's exit: the frame popped, and, when it is to be
/// recorded, one call of `delta` ticks on its node.
fn pop(s: &ThreadState, (n, parent): Frame, delta: u64) -> bool {
    let recorded = s.pop_frame(n, parent);
    if recorded {
        node(n).record(delta, true);
    }
    recorded
}

#[test]
fn the_first_push_sets_up_and_a_pop_on_top_records() {
    on_fresh_thread(|s| {
        assert!(s.arena().is_none());
        assert!(s.needs_setup());
        let f = push(s, &A);
        assert!(s.arena().is_some());
        assert!(!s.needs_setup());
        assert_eq!(s.top(), f.0);
        assert_eq!(node(f.0).depth.load(Ordering::Relaxed), 1);
        let root = f.1 as *const Node;
        assert!(node(root).site().is_none(), "the root is the parent");
        assert!(pop(s, f, 15));
        assert_eq!(s.top(), root);
        let n = node(f.0);
        assert_eq!(n.c.calls.load(Ordering::Relaxed), 1);
        assert_eq!(n.c.ticks.load(Ordering::Relaxed), 15);
        assert!(n.site().is_some_and(|site| core::ptr::eq(site, &A)));
    });
}

#[test]
fn the_caches_and_the_map_find_the_same_child_every_time() {
    on_fresh_thread(|s| {
        let mut seen = Vec::new();
        // Alternating children of the root, then of `a`: the one-entry
        // cache misses every time, the recent table or the map answers.
        for _ in 0..3 {
            for site in [&A, &B] {
                let outer = push(s, site);
                let inner = push(s, &B);
                assert_eq!(node(inner.0).depth.load(Ordering::Relaxed), 2);
                assert_eq!(inner.1, outer.0 as usize, "the parent is the outer call");
                assert!(pop(s, inner, 1));
                assert!(pop(s, outer, 1));
                seen.push((outer.0, inner.0));
            }
        }
        assert!(seen.chunks(2).all(|c| c == &seen[..2]));
        let [(na, nab), (nb, nbb)] = [seen[0], seen[1]];
        let distinct = [na, nab, nb, nbb];
        for (i, x) in distinct.iter().enumerate() {
            assert!(distinct[i + 1..].iter().all(|y| y != x));
        }
        assert_eq!(node(na).c.calls.load(Ordering::Relaxed), 3);
        assert_eq!(node(nbb).c.calls.load(Ordering::Relaxed), 3);
        // Root, a, a→b, b, b→b.
        assert_eq!(s.arena().map(Arena::len), Some(5));
    });
}

#[test]
fn deep_recursion_is_a_chain_of_nodes_with_no_stack_to_grow() {
    on_fresh_thread(|s| {
        const DEPTH: usize = 3000;
        let frames: Vec<Frame> = (0..DEPTH).map(|_| push(s, &A)).collect();
        assert_eq!(node(s.top()).depth.load(Ordering::Relaxed) as usize, DEPTH);
        assert_eq!(s.open_calls(), DEPTH as u64);
        for &f in frames.iter().rev() {
            assert!(pop(s, f, 1));
        }
        assert_eq!(s.open_calls(), 0);
        assert!(frames
            .iter()
            .all(|&(n, _)| node(n).c.calls.load(Ordering::Relaxed) == 1));
    });
}

#[test]
fn an_out_of_order_pop_resyncs_then_counts_an_orphan() {
    on_fresh_thread(|s| {
        let fa = push(s, &A);
        let fb = push(s, &B);
        // `a`'s guard ends first: `b`'s call, never closed, goes with it.
        assert!(pop(s, fa, 1));
        assert_eq!(s.top(), fa.1 as *const Node);
        let arena = s.arena().unwrap();
        assert_eq!(arena.resynced.load(Ordering::Relaxed), 1);
        // `b`'s guard ends later: its call is gone; the call is kept.
        assert!(pop(s, fb, 1));
        assert_eq!(s.top(), fa.1 as *const Node);
        assert_eq!(arena.orphaned.load(Ordering::Relaxed), 1);
        assert_eq!(node(fb.0).c.calls.load(Ordering::Relaxed), 1);
    });
}

#[test]
fn a_tagged_frame_is_never_taken_for_the_top() {
    on_fresh_thread(|s| {
        let f = push(s, &A);
        let (tagged, _) = frame::pushed(f.0, f.1 as *const Node, true, false);
        assert!(!s.is_top(tagged));
        assert!(!s.is_top(core::ptr::null()));
        assert!(s.is_top(f.0));
        assert!(pop(s, f, 1));
    });
}

#[test]
fn a_new_child_asked_for_while_busy_gets_no_frame_and_is_counted() {
    on_fresh_thread(|s| {
        let f = push(s, &A);
        assert!(pop(s, f, 1));
        let root = s.top();
        let got = s.while_busy(|| s.push(&B));
        assert_eq!(got, frame::NONE);
        assert_eq!(s.top(), root);
        let arena = s.arena().unwrap();
        assert_eq!(arena.reentrant.load(Ordering::Relaxed), 1);
    });
}

#[test]
fn a_cached_child_asked_for_while_busy_gets_no_frame_either() {
    on_fresh_thread(|s| {
        let f = push(s, &A);
        assert!(pop(s, f, 1));
        // `A` is now the root's cached child: a hit would record it.
        assert_eq!(s.while_busy(|| s.push(&A)), frame::NONE);
        assert_eq!(node(f.0).c.calls.load(Ordering::Relaxed), 1);
        // After the busy section the cache serves again.
        let again = s.push(&A);
        assert_eq!(again, f);
        assert!(pop(s, again, 1));
        assert_eq!(node(f.0).c.calls.load(Ordering::Relaxed), 2);
    });
}

/// A sentinel's index is 0, the root's: where the table of recent
/// lookups holds the root's child of a site in the slot the busy
/// sentinel's lookup of that site reads (the two slots meet for some
/// arena addresses: 1 run in ~100 of the marked-allocator test under
/// load), the busy thread's call must still get no frame (it counted a
/// report's own allocations on the root's child).
#[test]
fn a_root_child_in_the_busy_sentinels_recent_slot_is_not_taken_for_its_child() {
    on_fresh_thread(|s| {
        let f = push(s, &A);
        assert!(pop(s, f, 1));
        // SAFETY: set up by the push above; this thread's own.
        let recent = unsafe { s.recent.get().as_ref() }.unwrap();
        recent
            .slot(&BUSY, &A)
            .store(f.0.cast_mut(), Ordering::Relaxed);
        assert_eq!(s.while_busy(|| s.push(&A)), frame::NONE);
        assert_eq!(node(f.0).c.calls.load(Ordering::Relaxed), 1);
        let arena = s.arena().unwrap();
        assert_eq!(arena.reentrant.load(Ordering::Relaxed), 1);
    });
}

/// What the sampler sees: the program on the node on top, the entry and
/// the exit of a call it makes (its word tagged), tickprof's own work
/// (credited to nothing), and nothing before set-up or after teardown.
#[test]
fn the_sampler_sees_the_program_the_windows_and_tickprofs_own_work() {
    on_fresh_thread(|s| {
        assert!(matches!(s.look(), Look::Nothing), "not set up");
        let f = push(s, &A);
        let what = |s: &ThreadState| match s.look() {
            Look::At(n, what) => Some((n as *const Node, what)),
            _ => None,
        };
        assert_eq!(what(s), Some((f.0, Sampled::Program)));
        s.set_top_tagged(f.0, ENTRY);
        assert_eq!(what(s), Some((f.0, Sampled::Entry)));
        s.set_top_tagged(f.0, EXIT);
        assert_eq!(what(s), Some((f.0, Sampled::Exit)));
        assert_eq!(s.top(), f.0, "the tags are not the node");
        s.set_top(f.0);
        assert!(s.while_busy(|| matches!(s.look(), Look::Tool)));
        assert_eq!(what(s), Some((f.0, Sampled::Program)));
        assert!(pop(s, f, 1));
    });
}

fn k() {}
static KIDS: [CallSite; 6] = [
    CallSite::internal(crate::site::path_of(k), "k.rs", 1),
    CallSite::internal(crate::site::path_of(k), "k.rs", 2),
    CallSite::internal(crate::site::path_of(k), "k.rs", 3),
    CallSite::internal(crate::site::path_of(k), "k.rs", 4),
    CallSite::internal(crate::site::path_of(k), "k.rs", 5),
    CallSite::internal(crate::site::path_of(k), "k.rs", 6),
];

/// A parent cycling through 1 to 6 children (more than its three cache
/// entries hold): every child gets one node, found again on every call,
/// with every call counted on it; the cache's entries name distinct
/// sites, each with its own child and its kind.
#[test]
fn a_parent_cycling_through_many_children_finds_each_one_node() {
    on_fresh_thread(|s| {
        let p = push(s, &A);
        let mut nodes: Vec<*const Node> = vec![core::ptr::null(); KIDS.len()];
        let rounds = 50u64;
        for kids in 1..=KIDS.len() {
            for _ in 0..rounds {
                for (i, site) in KIDS[..kids].iter().enumerate() {
                    let c = push(s, site);
                    assert_eq!(c.1, p.0 as usize);
                    if nodes[i].is_null() {
                        nodes[i] = c.0;
                    }
                    assert_eq!(c.0, nodes[i], "child {i} of {kids}");
                    assert!(pop(s, c, 1));
                }
            }
        }
        for (i, &c) in nodes.iter().enumerate() {
            let calls = rounds * (KIDS.len() - i) as u64;
            assert_eq!(node(c).c.calls.load(Ordering::Relaxed), calls, "child {i}");
            assert!(node(c).site().is_some_and(|x| core::ptr::eq(x, &KIDS[i])));
        }
        // Root, the parent, six children.
        assert_eq!(s.arena().map(Arena::len), Some(8));
        let parent = node(p.0);
        let mut entries = vec![(
            parent.mru_site.load(Ordering::Relaxed) as usize,
            parent.mru_child.load(Ordering::Relaxed) as usize,
        )];
        for w in &parent.ways {
            entries.push((
                w.site.load(Ordering::Relaxed) as usize,
                w.child.load(Ordering::Relaxed) as usize,
            ));
        }
        for (i, &(site, child)) in entries.iter().enumerate() {
            let kind = Kind::of_bits(site & KIND_BITS);
            let (site, child) = (site & !KIND_BITS, child & !KIND_BITS);
            let j = KIDS
                .iter()
                .position(|k| k as *const CallSite as usize == site)
                .expect("a cached site is one of the children");
            assert_eq!(child, nodes[j] as usize, "entry {i}");
            assert_eq!(
                kind,
                crate::record::timing::kind(node(child as *const Node))
            );
            assert!(entries[i + 1..].iter().all(|e| e.0 & !KIND_BITS != site));
        }
        assert!(pop(s, p, 1));
    });
}

/// Whether `parent`'s one-entry cache or its extra entries hold `site`.
fn in_caches(parent: &Node, site: &'static CallSite) -> bool {
    let site = site as *const CallSite as usize;
    parent.mru_site.load(Ordering::Relaxed) as usize & !KIND_BITS == site
        || parent
            .ways
            .iter()
            .any(|w| w.site.load(Ordering::Relaxed) as usize & !KIND_BITS == site)
}

/// A child the thread's table of recent lookups finds, out of its
/// parent's caches (other children called since), is cached again by
/// that call: left out, it took the whole cold path on every call after,
/// for good (a parent then alternating between it and another).
#[test]
fn a_child_found_in_the_recent_table_is_cached_again() {
    on_fresh_thread(|s| {
        let p = push(s, &A);
        let parent = node(p.0);
        let first = push(s, &KIDS[0]);
        assert!(pop(s, first, 1));
        // Others called until the first is out of the caches (their
        // replacement is random).
        for kid in KIDS[1..].iter().cycle().take(100) {
            if !in_caches(parent, &KIDS[0]) {
                break;
            }
            let c = push(s, kid);
            assert!(pop(s, c, 1));
        }
        assert!(!in_caches(parent, &KIDS[0]), "evicted by the others");
        for _ in 0..4 {
            for kid in [&KIDS[0], &KIDS[3]] {
                let c = push(s, kid);
                assert!(in_caches(parent, kid));
                assert!(pop(s, c, 1));
            }
        }
        assert_eq!(node(first.0).c.calls.load(Ordering::Relaxed), 5);
        assert!(pop(s, p, 1));
    });
}

/// A parent alternating between three counted children finds each one
/// inline (`Counted::enter_any`, as `#[profile(always)]` calls it), in
/// whichever entry of its child cache it
/// sits: the child's node on top while it runs, its call counted once on
/// it, the parent back on top at its exit; a fourth child, in no entry,
/// takes the guard's path (`None`), and so does a tagged parent.
#[test]
fn counted_children_in_turn_are_found_in_every_cache_entry() {
    use crate::record::counted::Counted;
    on_fresh_thread(|s| {
        let p = push(s, &A);
        let parent = node(p.0);
        let kids: Vec<*const Node> = KIDS[..3]
            .iter()
            .map(|site| {
                let c = push(s, site);
                assert!(pop(s, c, 1));
                c.0
            })
            .collect();
        for &c in &kids {
            parent.recache(c, Kind::Counted);
        }
        // The last child called holds the one-entry cache.
        let mru = 2;
        let counted = |c: *const Node| node(c).c.untimed.load(Ordering::Relaxed);
        let before: Vec<u64> = kids.iter().map(|&c| counted(c)).collect();
        let rounds = 10u64;
        for _ in 0..rounds {
            for (i, site) in KIDS[..3].iter().enumerate() {
                // `enter` reads the one-entry cache only.
                match Counted::enter(site) {
                    Some(c) => {
                        assert_eq!(i, mru, "child {i}");
                        c.exit();
                    }
                    None => {
                        assert_ne!(i, mru, "child {i}");
                        s.set_top(p.0);
                    }
                }
                let c = Counted::enter_any(site).expect("a cached counted child");
                assert_eq!(s.top(), kids[i], "child {i} on top");
                c.exit();
                assert_eq!(s.top(), p.0, "the parent back on top");
            }
        }
        for (i, &c) in kids.iter().enumerate() {
            let added = counted(c) - before[i];
            let calls = if i == mru { 2 * rounds } else { rounds };
            assert_eq!(added, calls << crate::counters::STATE_BITS, "child {i}");
        }
        // Out of the cache: the guard's path, the top as it was.
        assert!(Counted::enter_any(&KIDS[3]).is_none());
        assert_eq!(s.top_word(), p.0.wrapping_byte_add(ENTRY));
        s.set_top(p.0);
        // A tagged parent (a signal handler's call inside a window): no
        // entry reads as a site.
        for tag in [ENTRY, EXIT] {
            s.set_top_tagged(p.0, tag);
            for site in &KIDS[..3] {
                assert!(Counted::enter_any(site).is_none(), "tag {tag}");
                s.set_top_tagged(p.0, tag);
            }
        }
        s.set_top(p.0);
        assert!(pop(s, p, 1));
    });
}

/// A counted child out of its parent's caches but in the thread's table
/// of recent lookups is counted without a push: inline by
/// `Counted::enter_any` (its node on top, the parent's caches left as they
/// are), and by the guard's cold entry (its frame tagged counted, cached
/// in the parent again); a child held in the parent's caches, a timed
/// child, a tagged parent, the root and the sentinels are not answered.
#[test]
fn a_counted_child_in_the_recent_table_is_counted_without_a_push() {
    use crate::record::counted::Counted;
    use crate::record::frame::COUNTED_TAG;
    on_fresh_thread(|s| {
        let p = push(s, &A);
        let parent = node(p.0);
        let first = push(s, &KIDS[0]);
        assert!(pop(s, first, 1));
        crate::record::timing::make_counted(node(first.0));
        // Held in the parent's caches: not the table's to answer.
        assert_eq!(s.recent_counted(p.0, &KIDS[0]), None);
        let evict = |s: &ThreadState, kids: &'static [CallSite], site: &'static CallSite| {
            for kid in kids.iter().cycle().take(100) {
                if !in_caches(parent, site) {
                    break;
                }
                let c = push(s, kid);
                assert!(pop(s, c, 1));
            }
            assert!(!in_caches(parent, site), "evicted by the others");
        };
        evict(s, &KIDS[1..], &KIDS[0]);
        let counted =
            || node(first.0).c.untimed.load(Ordering::Relaxed) >> crate::counters::STATE_BITS;
        // Tagged parents, the root and the sentinels: none.
        for tag in [ENTRY, EXIT] {
            assert_eq!(
                s.recent_counted_inline(p.0.wrapping_byte_add(tag), &KIDS[0]),
                None
            );
        }
        for sentinel in [&BUSY, &UNSET, &DEAD] {
            assert_eq!(s.recent_counted_inline(sentinel, &KIDS[0]), None);
        }
        let root = parent.parent.load(Ordering::Relaxed);
        assert_eq!(root, 0, "A is the root's child");
        // Inline, as `#[profile(always)]` enters: counted once, on top,
        // the parent's caches as they were.
        let before = counted();
        let c = Counted::enter_any(&KIDS[0]).expect("found in the table");
        assert_eq!(s.top(), first.0);
        c.exit();
        assert_eq!(s.top(), p.0);
        assert_eq!(counted(), before + 1);
        assert!(
            !in_caches(parent, &KIDS[0]),
            "not cached by the inline path"
        );
        // The guard's cold entry: counted once, on top, cached again.
        let (n, word) = crate::record::guard::enter_slow(s, &KIDS[0]);
        assert_eq!(n, first.0.wrapping_byte_add(COUNTED_TAG));
        assert_eq!(word, p.0 as usize);
        assert_eq!(s.top(), first.0);
        assert_eq!(counted(), before + 2);
        assert!(in_caches(parent, &KIDS[0]), "cached again");
        s.set_top(p.0);
        // A timed child in the table: not answered.
        let timed = push(s, &KIDS[3]);
        assert!(pop(s, timed, 1));
        evict(s, &KIDS[..3], &KIDS[3]);
        assert_ne!(crate::record::timing::kind(node(timed.0)), Kind::Counted);
        assert_eq!(s.recent_counted_inline(p.0, &KIDS[3]), None);
        assert!(Counted::enter_any(&KIDS[3]).is_none());
        s.set_top(p.0);
        assert!(pop(s, p, 1));
    });
}
