#![deny(warnings)]
//! `#[profile]` on async functions and methods: values, `?`, early return,
//! `impl Trait` returns, and the marked future stays `Send`.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

#[tickprof::profile]
async fn plain() -> u32 {
    1
}

#[tickprof::profile]
async fn question(s: &str) -> Result<u32, std::num::ParseIntError> {
    let v: u32 = s.parse()?;
    if v == 0 {
        return Ok(100);
    }
    Ok(v)
}

#[tickprof::profile]
async fn unit(x: &mut u32) {
    *x += 1;
}

#[tickprof::profile(name = "renamed async")]
async fn awaits_others() -> u32 {
    plain().await + question("2").await.unwrap_or(0)
}

#[tickprof::profile]
async fn impl_return() -> impl std::fmt::Debug {
    5
}

struct S(u32);

impl S {
    #[tickprof::profile]
    async fn by_ref(&self) -> u32 {
        self.0
    }

    #[tickprof::profile]
    async fn by_value(self) -> u32 {
        self.0 + 1
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

fn assert_send<T: Send>(_: &T) {}

fn main() {
    assert_send(&plain());
    assert_send(&question("1"));
    assert_eq!(block_on(plain()), 1);
    assert_eq!(block_on(question("21")), Ok(21));
    assert_eq!(block_on(question("0")), Ok(100));
    assert!(block_on(question("x")).is_err());
    let mut n = 0;
    block_on(unit(&mut n));
    assert_eq!(n, 1);
    assert_eq!(block_on(awaits_others()), 3);
    assert_eq!(format!("{:?}", block_on(impl_return())), "5");
    assert_eq!(block_on(S(4).by_ref()), 4);
    assert_eq!(block_on(S(4).by_value()), 5);
    let r = tickprof::report();
    assert_eq!(r.site("renamed async").map(|s| s.calls), Some(1));
    assert_eq!(r.find("::question").map(|s| s.calls), Some(4));
}
