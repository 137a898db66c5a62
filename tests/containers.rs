//! Marks on containers (`impl`, `trait`, inline `mod`) give the same report
//! as the same functions marked one by one: one module is written once, by
//! a `macro_rules!`, and built twice, once with `#[profile]` on its
//! containers and once with `#[profile]` on each function. The two reports
//! have the same site names (modulo the module's name), kinds, call counts
//! and caller/callee edges.
#![cfg(feature = "enabled")]

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

/// A module whose containers carry `#[$c]` and whose functions carry
/// `#[$f]`: one of the two is `tickprof::profile`, the other an inert
/// `doc(hidden)`. `#[$skip]` is `tickprof::profile(skip)` in the container
/// copy; `$own` names the function that carries its own options.
macro_rules! workload {
    ($name:ident, #[$c:meta], #[$f:meta], #[$skip:meta], $own:literal) => {
        #[$c]
        pub mod $name {
            /// A stack with an inherent impl and a trait impl.
            #[derive(Default)]
            pub struct Stack {
                items: Vec<u64>,
            }

            #[$c]
            impl Stack {
                #[$f]
                pub fn push(&mut self, x: u64) {
                    self.items.push(x);
                }

                #[$f]
                pub fn pop(&mut self) -> Option<u64> {
                    self.items.pop()
                }

                #[$f]
                pub fn sum<T>(&self) -> T
                where
                    T: From<u64> + std::ops::Add<Output = T> + Copy,
                {
                    self.items
                        .iter()
                        .fold(T::from(0), |acc, &x| acc + T::from(x))
                }

                /// Left alone by the container: `#[profile]` cannot mark it.
                pub const fn capacity_hint() -> usize {
                    8
                }

                #[$skip]
                pub fn depth(&self) -> usize {
                    self.items.len()
                }

                #[tickprof::profile(name = $own)]
                pub fn clear(&mut self) {
                    while self.pop().is_some() {}
                }
            }

            /// A trait with default methods and one without a body.
            #[$c]
            pub trait Measure {
                fn size(&self) -> u64;

                #[$f]
                fn double(&self) -> u64 {
                    self.size() * 2
                }
            }

            #[$c]
            impl Measure for Stack {
                #[$f]
                fn size(&self) -> u64 {
                    self.sum::<u64>()
                }
            }

            #[$f]
            pub fn fib(n: u64) -> u64 {
                if n < 2 {
                    n
                } else {
                    fib(n - 1) + fib(n - 2)
                }
            }

            #[$f]
            pub async fn later(x: u64) -> u64 {
                nested::deep(x) + 1
            }

            pub mod nested {
                #[$f]
                pub fn deep(x: u64) -> u64 {
                    x * 3
                }
            }

            /// Runs every function a fixed number of times.
            #[$skip]
            pub fn run() -> u64 {
                let mut stack = Stack::default();
                for i in 0..5 {
                    stack.push(fib(i));
                }
                let _ = stack.pop();
                let total = stack.double() + stack.size() + stack.sum::<u64>();
                let len = stack.depth() + Stack::capacity_hint();
                stack.clear();
                total + len as u64 + crate::containers::poll_once(later(4))
            }
        }
    };
}

workload!(
    via_containers,
    #[tickprof::profile],
    #[doc(hidden)],
    #[tickprof::profile(skip)],
    "via_containers own"
);
workload!(
    one_by_one,
    #[doc(hidden)],
    #[tickprof::profile],
    #[doc(hidden)],
    "one_by_one own"
);

/// Polls a future that never waits once, to completion.
fn poll_once<F: Future>(future: F) -> F::Output {
    struct Noop;
    impl Wake for Noop {
        fn wake(self: Arc<Self>) {}
    }
    let waker = Waker::from(Arc::new(Noop));
    let mut future = std::pin::pin!(future);
    match future.as_mut().poll(&mut Context::from_waker(&waker)) {
        Poll::Ready(value) => value,
        Poll::Pending => unreachable!("the workload's futures never wait"),
    }
}

/// One site as compared: name, kind, calls and edges, with the module's
/// name replaced by `M`.
type Row = (String, String, u64, Vec<(String, u64)>, Vec<(String, u64)>);

/// The sites of `module`, sorted, with `module` replaced by `M`.
fn rows(report: &tickprof::Report, module: &str) -> Vec<Row> {
    let plain = |name: &str| name.replace(module, "M");
    let edges = |edges: &[tickprof::Edge]| {
        let mut edges: Vec<(String, u64)> =
            edges.iter().map(|e| (plain(&e.name), e.calls)).collect();
        edges.sort();
        edges
    };
    let mut rows: Vec<Row> = report
        .sites
        .iter()
        .filter(|site| site.name.contains(module))
        .map(|site| {
            (
                plain(&site.name),
                format!("{:?}", site.kind),
                site.calls,
                edges(&site.callers),
                edges(&site.callees),
            )
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn container_marks_report_as_marks_one_by_one() {
    assert_eq!(via_containers::run(), one_by_one::run());
    let report = tickprof::report();
    let containers = rows(&report, "via_containers");
    let singles = rows(&report, "one_by_one");
    assert_eq!(containers, singles);

    // What was marked, and how often it ran.
    let calls: Vec<(&str, u64)> = containers
        .iter()
        .map(|(name, _, calls, _, _)| (name.rsplit("::").next().unwrap_or(name), *calls))
        .collect();
    let mut expected = vec![
        ("M own", 1),
        ("deep", 1),
        ("double", 1),
        ("fib", 1 + 1 + 3 + 5 + 9),
        ("later", 1),
        ("pop", 1 + 5),
        ("push", 5),
        ("size", 2),
        ("sum", 3),
    ];
    expected.sort_unstable();
    let mut calls = calls;
    calls.sort_unstable();
    assert_eq!(calls, expected, "{containers:#?}");
    // The skipped and the unmarkable functions are not sites.
    for absent in ["::depth", "::run", "capacity_hint"] {
        assert!(
            !report.sites.iter().any(|s| s.name.ends_with(absent)),
            "{absent} is a site"
        );
    }
}
