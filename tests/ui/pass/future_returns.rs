#![deny(warnings)]
//! `#[profile]` on functions that return a future, as written by hand and
//! by `async-trait`: the future is timed poll by poll, not its creation.

use std::future::Future;
use std::pin::{pin, Pin};
use std::task::{Context, Poll, Waker};

#[tickprof::profile]
fn inner(x: u32) -> u32 {
    x + 1
}

#[tickprof::profile]
fn later(x: u32) -> impl Future<Output = u32> + Send {
    async move { inner(x) }
}

#[tickprof::profile]
fn fallible(s: &str) -> impl Future<Output = Result<u32, Box<dyn std::error::Error>>> + '_ {
    async move { Ok(s.parse::<u32>()?) }
}

trait Store {
    fn get<'a>(&'a self, key: &'a str) -> Pin<Box<dyn Future<Output = Option<u32>> + Send + 'a>>;
}

struct Map;

impl Store for Map {
    // What `#[async_trait]` turns `async fn get(&self, key: &str) -> Option<u32>` into.
    #[tickprof::profile]
    fn get<'a>(&'a self, key: &'a str) -> Pin<Box<dyn Future<Output = Option<u32>> + Send + 'a>> {
        Box::pin(async move {
            if key.is_empty() {
                return None;
            }
            Some(inner(1))
        })
    }
}

fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

fn main() {
    let future = later(1);
    assert_eq!(block_on(future), 2);
    assert_eq!(block_on(fallible("3")).ok(), Some(3));
    assert!(block_on(fallible("x")).is_err());
    assert_eq!(block_on(Map.get("k")), Some(2));
    assert_eq!(block_on(Map.get("")), None);
    let r = tickprof::report();
    let later = r.find("::later").expect("later is in the report");
    assert_eq!(later.kind, tickprof::SiteKind::AsyncFunction);
    assert!(later.callees.iter().any(|e| e.name.ends_with("::inner")));
    let get = r.find("::get").expect("get is in the report");
    assert_eq!(get.calls, 2);
    assert!(get.callees.iter().any(|e| e.name.ends_with("::inner")));
}
