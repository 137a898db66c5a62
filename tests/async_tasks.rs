//! `#[profile] async fn` on tokio: busy vs wall, children attributed to the
//! right parent across interleaving tasks and thread migration, cancellation.
#![cfg(feature = "enabled")]

use std::future::Future;
use std::time::Duration;
use tickprof::profile;

use crate::support::spin as spin_support;
use spin_support::spin;

#[profile]
fn mt_child(i: u64) -> u64 {
    spin(Duration::from_micros(50));
    i
}

#[profile]
fn mt_grandchild() {
    spin(Duration::from_micros(10));
}

#[profile]
async fn mt_task(i: u64) -> u64 {
    tokio::time::sleep(Duration::from_millis(2)).await;
    let a = mt_child(i);
    tokio::task::yield_now().await;
    tokio::time::sleep(Duration::from_millis(1)).await;
    mt_grandchild();
    a + mt_child(i)
}

#[test]
fn hundred_concurrent_tasks_on_a_multi_thread_runtime() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    let sum: u64 = rt.block_on(async {
        let handles: Vec<_> = (0..100).map(|i| tokio::spawn(mt_task(i))).collect();
        let mut sum = 0;
        for h in handles {
            sum += h.await.unwrap();
        }
        sum
    });
    drop(rt);
    assert_eq!(sum, 2 * (0..100).sum::<u64>());
    let r = tickprof::report();
    let task = r.find("::mt_task").unwrap();
    assert_eq!(task.kind, tickprof::SiteKind::AsyncFunction);
    assert_eq!(task.calls, 100);
    assert_eq!(task.cancelled, 0);
    assert!(
        task.total_ns <= task.wall_ns,
        "busy {} > wall {}",
        task.total_ns,
        task.wall_ns
    );
    assert!(
        task.wall_ns >= 100 * 3_000_000,
        "each task waits ≥ 3 ms: {}",
        task.wall_ns
    );
    assert!(task.min_ns <= task.max_ns && task.max_ns <= task.wall_ns);
    // Busy time includes the children's spins: 200 × 50 µs + 100 × 10 µs.
    assert!(task.total_ns >= 11_000_000, "busy {}", task.total_ns);
    let child = r.find("::mt_child").unwrap();
    assert_eq!(child.calls, 200);
    assert_eq!(child.callers.len(), 1, "{:?}", child.callers);
    assert!(child.callers[0].name.ends_with("::mt_task"));
    assert_eq!(child.callers[0].calls, 200);
    let grand = r.find("::mt_grandchild").unwrap();
    assert_eq!(grand.callers.len(), 1);
    assert!(grand.callers[0].name.ends_with("::mt_task"));
    assert_eq!(edge_calls(task, "::mt_child"), 200);
    // Self = busy minus the children.
    assert!(task.self_ns < task.total_ns);
}

fn edge_calls(s: &tickprof::SiteStats, suffix: &str) -> u64 {
    s.callees
        .iter()
        .filter(|e| e.name.ends_with(suffix))
        .map(|e| e.calls)
        .sum()
}

#[profile]
fn ct_child_of_x() {
    spin(Duration::from_micros(20));
}

#[profile]
fn ct_child_of_y() {
    spin(Duration::from_micros(20));
}

#[profile]
async fn ct_x() {
    for _ in 0..10 {
        ct_child_of_x();
        tokio::task::yield_now().await;
    }
}

#[profile]
async fn ct_y() {
    for _ in 0..10 {
        ct_child_of_y();
        tokio::task::yield_now().await;
    }
}

#[test]
fn interleaved_tasks_on_one_thread_keep_their_children() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        let x = tokio::spawn(ct_x());
        let y = tokio::spawn(ct_y());
        x.await.unwrap();
        y.await.unwrap();
    });
    let r = tickprof::report();
    let cx = r.find("::ct_child_of_x").unwrap();
    let cy = r.find("::ct_child_of_y").unwrap();
    assert_eq!((cx.calls, cy.calls), (10, 10));
    assert_eq!(cx.callers.len(), 1);
    assert!(cx.callers[0].name.ends_with("::ct_x"), "{:?}", cx.callers);
    assert_eq!(cy.callers.len(), 1);
    assert!(cy.callers[0].name.ends_with("::ct_y"), "{:?}", cy.callers);
    let x = r.find("::ct_x").unwrap();
    assert_eq!(x.calls, 1);
    assert!(x.total_ns <= x.wall_ns);
}

#[profile]
async fn slow_op() {
    tokio::time::sleep(Duration::from_secs(5)).await;
}

#[profile]
async fn polled_once() {
    std::future::pending::<()>().await;
}

#[profile]
async fn never_polled() {}

#[test]
fn futures_dropped_before_completion_count_as_cancelled() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        for _ in 0..7 {
            let r = tokio::time::timeout(Duration::from_millis(1), slow_op()).await;
            assert!(r.is_err());
        }
    });
    // Polled once by hand, then dropped.
    let mut f = Box::pin(polled_once());
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    assert!(f.as_mut().poll(&mut cx).is_pending());
    drop(f);
    // A future that is never polled never ran: nothing to count.
    drop(never_polled());
    let r = tickprof::report();
    let s = r.find("::slow_op").unwrap();
    assert_eq!(s.calls, 0);
    assert_eq!(s.cancelled, 7);
    assert_eq!(
        r.find("::polled_once").map(|s| (s.calls, s.cancelled)),
        Some((0, 1))
    );
    assert!(r.find("::never_polled").is_none());
}
