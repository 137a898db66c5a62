//! The shadow stack on its own, each test on a fresh thread (so its state
//! starts never set up): set-up, the fast push and pop, the child caches,
//! growth, resynchronisation and re-entry.

use super::*;
use crate::record::frame;

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

#[test]
fn the_first_push_sets_up_and_a_pop_on_top_records() {
    on_fresh_thread(|s| {
        assert!(s.arena().is_none());
        let (n, depth) = s.push(&A);
        assert!(s.arena().is_some());
        assert_eq!(depth, 1);
        assert_eq!(s.top_depth(), 1);
        assert!(s.pop_top(n, (10, 25), 0, true));
        assert_eq!(s.top_depth(), 0);
        let n = node(n);
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
                let (n, d) = s.push(site);
                assert_eq!(d, 1);
                let (child, d2) = s.push(&B);
                assert_eq!(d2, 2);
                assert!(s.pop_top(child, (0, 1), 0, true));
                assert!(s.pop_top(n, (0, 1), 0, true));
                seen.push((n, child));
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
fn the_stack_grows_past_its_first_capacity() {
    on_fresh_thread(|s| {
        const DEPTH: usize = 300;
        let frames: Vec<Frame> = (0..DEPTH).map(|_| s.push(&A)).collect();
        assert!(frames.iter().enumerate().all(|(i, f)| f.1 == i + 1));
        assert_eq!(s.top_depth(), DEPTH);
        for &(n, _) in frames.iter().rev() {
            assert!(s.pop_top(n, (0, 1), 0, true));
        }
        assert_eq!(s.top_depth(), 0);
        assert!(frames
            .iter()
            .all(|&(n, _)| node(n).c.calls.load(Ordering::Relaxed) == 1));
    });
}

#[test]
fn an_out_of_order_pop_resyncs_then_counts_an_orphan() {
    on_fresh_thread(|s| {
        let (na, da) = s.push(&A);
        let (nb, db) = s.push(&B);
        // `a`'s guard ends first: `b`'s frame, never closed, goes with it.
        assert!(s.pop_frame(da, na));
        assert_eq!(s.top_depth(), 0);
        let arena = s.arena().unwrap();
        assert_eq!(arena.resynced.load(Ordering::Relaxed), 1);
        // `b`'s guard ends later: its frame is gone; the call is kept.
        assert!(s.pop_frame(db, nb));
        assert_eq!(s.top_depth(), 0);
        assert_eq!(arena.orphaned.load(Ordering::Relaxed), 1);
    });
}

#[test]
fn the_fast_pop_refuses_a_tagged_frame() {
    on_fresh_thread(|s| {
        let (n, d) = s.push(&A);
        let (tagged, _) = frame::pushed(n, d, true, false);
        assert!(!s.pop_top(tagged, (0, 1), 0, true));
        assert!(!s.pop_top(core::ptr::null(), (0, 1), 0, true));
        assert_eq!(s.top_depth(), 1);
        assert!(s.pop_frame(d, n));
        assert_eq!(s.top_depth(), 0);
    });
}

#[test]
fn a_new_child_asked_for_while_busy_gets_no_frame_and_is_counted() {
    on_fresh_thread(|s| {
        let (n, _) = s.push(&A);
        assert!(s.pop_top(n, (0, 1), 0, true));
        let f = s.while_busy(|| s.push(&B));
        assert_eq!(f, frame::NONE);
        assert_eq!(s.top_depth(), 0);
        let arena = s.arena().unwrap();
        assert_eq!(arena.reentrant.load(Ordering::Relaxed), 1);
    });
}

/// What the sampler sees: the program, a call's instrumentation (on
/// either side of its push, or inside the call on top), and
/// tickprof's own work (credited to nothing), on the node on top.
#[test]
fn the_sampler_sees_tickprofs_own_work_apart_from_the_instrumentation() {
    use super::view::Sampled;
    on_fresh_thread(|s| {
        let (n, d) = s.push(&A);
        assert_eq!(s.sampled().map(|x| x.1), Some(Sampled::Program));
        s.inst_on(d + 1);
        assert_eq!(s.sampled().map(|x| x.1), Some(Sampled::Calls));
        s.inst_off();
        s.inst_on(d);
        assert_eq!(s.sampled().map(|x| x.1), Some(Sampled::Own));
        // Inside the call on top (a held guard's word between its clock
        // reads and its body): that call's, inside its time.
        s.inst_inside();
        let (top, what) = s.sampled().unwrap();
        assert_eq!((top as *const Node, what), (n, Sampled::Calls));
        s.inst_off();
        assert_eq!(
            s.while_busy(|| s.sampled().map(|x| x.1)),
            Some(Sampled::Tool)
        );
        assert_eq!(s.sampled().map(|x| x.1), Some(Sampled::Program));
        assert!(s.pop_frame(d, n));
    });
}

#[test]
fn a_cached_child_asked_for_while_busy_gets_no_frame_either() {
    on_fresh_thread(|s| {
        let (n, _) = s.push(&A);
        assert!(s.pop_top(n, (0, 1), 0, true));
        // `A` is now the root's cached child: a hit would record it.
        let f = s.while_busy(|| s.push(&A));
        assert_eq!(f, frame::NONE);
        assert_eq!(s.top_depth(), 0);
        assert_eq!(node(n).c.calls.load(Ordering::Relaxed), 1);
        // After the busy section the cache serves again.
        let (again, d) = s.push(&A);
        assert_eq!((again, d), (n, 1));
        assert!(s.pop_top(again, (0, 1), 0, true));
        assert_eq!(node(n).c.calls.load(Ordering::Relaxed), 2);
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
/// sites, each with its own child.
#[test]
fn a_parent_cycling_through_many_children_finds_each_one_node() {
    on_fresh_thread(|s| {
        let (p, _) = s.push(&A);
        let mut nodes: Vec<*const Node> = vec![core::ptr::null(); KIDS.len()];
        let rounds = 50u64;
        for kids in 1..=KIDS.len() {
            for _ in 0..rounds {
                for (i, site) in KIDS[..kids].iter().enumerate() {
                    let (c, d) = s.push(site);
                    assert_eq!(d, 2);
                    if nodes[i].is_null() {
                        nodes[i] = c;
                    }
                    assert_eq!(c, nodes[i], "child {i} of {kids}");
                    assert!(s.pop_top(c, (0, 1), 0, true));
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
        let parent = node(p);
        let mut entries = vec![(
            parent.mru_site.load(Ordering::Relaxed) as usize & !MRU_FLAG,
            parent.mru_child.load(Ordering::Relaxed) as usize,
        )];
        for w in &parent.ways {
            entries.push((
                w.site.load(Ordering::Relaxed) as usize,
                w.child.load(Ordering::Relaxed) as usize & !WAY_FLAG,
            ));
        }
        for (i, &(site, child)) in entries.iter().enumerate() {
            let j = KIDS
                .iter()
                .position(|k| k as *const CallSite as usize == site)
                .expect("a cached site is one of the children");
            assert_eq!(child, nodes[j] as usize, "entry {i}");
            assert!(entries[i + 1..].iter().all(|e| e.0 != site));
        }
        assert!(s.pop_top(p, (0, 1), 0, true));
    });
}
