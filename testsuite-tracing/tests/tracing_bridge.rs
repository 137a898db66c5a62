//! The tracing bridge (`tickprof::tracing::Layer`, feature `tracing`):
//! spans become tickprof sites in the same trees as `#[profile]` marks.

#[path = "../../tests/support/quiet.rs"]
mod quiet;

use std::hint::black_box;
use tickprof::{Report, SiteKind};
use tracing_subscriber::prelude::*;

/// One workload, written twice: marked with `#[profile]` and instrumented
/// with `#[tracing::instrument]`.
macro_rules! workload {
    ($module:ident, $($mark:tt)*) => {
        mod $module {
            use std::hint::black_box;

            $($mark)*
            pub fn outer(n: u32) -> u32 {
                let mut s = leaf(0);
                for i in 0..n {
                    s += middle(i);
                }
                s
            }

            $($mark)*
            fn middle(i: u32) -> u32 {
                if i % 2 == 0 {
                    leaf(i) + leaf(i + 1)
                } else {
                    leaf(i)
                }
            }

            $($mark)*
            fn leaf(i: u32) -> u32 {
                black_box(i).wrapping_mul(3)
            }
        }
    };
}

workload!(marked, #[tickprof::profile]);
workload!(traced, #[tracing::instrument(skip_all)]);

fn with_bridge<R>(f: impl FnOnce() -> R) -> R {
    let subscriber = tracing_subscriber::registry().with(tickprof::tracing::Layer::new());
    tracing::subscriber::with_default(subscriber, f)
}

/// The sites under `module` as (name without the module, calls, kind).
fn sites(r: &Report, module: &str) -> Vec<(String, u64, SiteKind)> {
    let prefix = format!("tracing_bridge::{module}::");
    let mut v: Vec<_> = r
        .sites
        .iter()
        .filter_map(|s| {
            let short = s.name.strip_prefix(&prefix)?;
            Some((short.to_owned(), s.calls, s.kind))
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// The tree paths under `module` as (path without the module, calls).
fn paths(r: &Report, module: &str) -> Vec<(String, u64)> {
    let prefix = format!("tracing_bridge::{module}::");
    let mut v: Vec<_> = (1..r.tree.len())
        .filter_map(|i| {
            let path = r.path(i);
            let short: Option<Vec<&str>> = path.iter().map(|n| n.strip_prefix(&prefix)).collect();
            Some((short?.join(";"), r.tree[i].calls))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn instrumented_and_marked_workloads_give_the_same_sites_calls_and_tree() {
    let before = tickprof::snapshot();
    assert_eq!(
        black_box(marked::outer(10)),
        with_bridge(|| traced::outer(10))
    );
    let r = &tickprof::snapshot() - &before;

    let m = sites(&r, "marked");
    let t = sites(&r, "traced");
    let expect = [("leaf", 16), ("middle", 10), ("outer", 1)];
    let names_calls = |v: &[(String, u64, SiteKind)]| {
        v.iter()
            .map(|(n, c, _)| (n.clone(), *c))
            .collect::<Vec<_>>()
    };
    let want: Vec<(String, u64)> = expect.iter().map(|(n, c)| ((*n).to_owned(), *c)).collect();
    assert_eq!(names_calls(&m), want);
    assert_eq!(names_calls(&t), want);
    assert!(m.iter().all(|s| s.2 == SiteKind::Function), "{m:?}");
    assert!(t.iter().all(|s| s.2 == SiteKind::TracingSpan), "{t:?}");

    let tree = [
        ("outer", 1),
        ("outer;leaf", 1),
        ("outer;middle", 10),
        ("outer;middle;leaf", 15),
    ];
    let tree: Vec<(String, u64)> = tree.iter().map(|(p, c)| ((*p).to_owned(), *c)).collect();
    assert_eq!(paths(&r, "marked"), tree);
    assert_eq!(paths(&r, "traced"), tree);

    // Total ≥ self, children within parents, as for marked sites.
    for s in r.sites.iter().filter(|s| s.kind == SiteKind::TracingSpan) {
        assert!(s.self_ns <= s.total_ns, "{s:?}");
        assert!(
            s.min_ns as f64 <= s.mean_ns && s.mean_ns <= s.max_ns as f64,
            "{s:?}"
        );
    }
}

mod mixed {
    #[tickprof::profile]
    pub fn marked_child() -> u32 {
        std::hint::black_box(7)
    }

    /// A span entered three times (as an instrumented future is, once per
    /// poll), a marked call in each entry: one call, three children.
    pub fn polled_span() {
        let span = tracing::info_span!("polled");
        for _ in 0..3 {
            let _e = span.enter();
            marked_child();
        }
    }

    /// `a` exited before `b`, which it encloses: resynchronised.
    pub fn out_of_order() {
        let a = tracing::info_span!("a");
        let b = tracing::info_span!("b");
        let ea = a.enter();
        let eb = b.enter();
        drop(ea);
        drop(eb);
    }
}

#[test]
fn a_span_entered_several_times_is_one_call_whose_entries_hold_its_children() {
    let before = tickprof::snapshot();
    with_bridge(mixed::polled_span);
    let r = &tickprof::snapshot() - &before;
    let polled = r
        .site("tracing_bridge::mixed::polled")
        .expect("the span's site");
    assert_eq!(polled.calls, 1);
    assert_eq!(polled.kind, SiteKind::TracingSpan);
    let child = r
        .site("tracing_bridge::mixed::marked_child")
        .expect("marked");
    assert_eq!(child.calls, 3);
    assert_eq!(child.callers.len(), 1);
    assert_eq!(child.callers[0].name, "tracing_bridge::mixed::polled");
    assert_eq!(child.callers[0].calls, 3);
    assert!(polled.total_ns >= child.total_ns);
    assert!(polled.wall_ns >= polled.total_ns);
}

#[test]
fn spans_exited_out_of_order_are_counted_and_resynchronised() {
    let before = tickprof::snapshot();
    with_bridge(mixed::out_of_order);
    let r = &tickprof::snapshot() - &before;
    assert_eq!(r.site("tracing_bridge::mixed::a").map(|s| s.calls), Some(1));
    assert_eq!(r.site("tracing_bridge::mixed::b").map(|s| s.calls), Some(1));
    // Exiting `a` pops `b` with it (resynchronised); `b`'s own exit then
    // finds its frame gone.
    assert_eq!(r.run.out_of_order, 2, "{:?}", r.run);
}
