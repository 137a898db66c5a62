//! Marks on `async fn`s and on functions that return a future (the
//! `async-trait` shape), for editions 2018 and later.

use std::future::Future;
use std::num::ParseIntError;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

/// A marked async function.
#[tickprof::profile]
pub async fn plain(x: u32) -> u32 {
    std::future::ready(x).await + 1
}

/// `?` and early return in a marked async function.
///
/// # Errors
///
/// When `s` is not a number.
#[tickprof::profile]
pub async fn parse(s: &str) -> Result<u32, ParseIntError> {
    if s.is_empty() {
        return Ok(0);
    }
    let v: u32 = s.parse()?;
    Ok(plain(v).await)
}

/// `?` converting the error type, which needs the declared return type.
///
/// # Errors
///
/// When `s` is not a number.
#[tickprof::profile]
pub async fn convert(s: &str) -> Result<u32, Box<dyn std::error::Error>> {
    let v: u32 = std::future::ready(s).await.parse()?;
    Ok(v)
}

/// `?` inside a returned `async` block.
///
/// # Errors
///
/// When `s` is not a number.
#[tickprof::profile]
// The shape written by hand when a future must be `Send` or outlive a
// borrow; the lint is about the code as written (profiling off shows it).
#[allow(clippy::manual_async_fn)]
pub fn convert_later(
    s: String,
) -> impl Future<Output = Result<u32, Box<dyn std::error::Error + Send + Sync>>> + Send {
    async move { Ok(s.parse::<u32>()?) }
}

/// A marked function the futures below call while they are polled.
#[tickprof::profile]
#[must_use]
pub fn inner(x: u32) -> u32 {
    x * 2
}

/// A marked function returning `impl Future`: the future is timed.
#[tickprof::profile]
#[allow(clippy::manual_async_fn)]
pub fn later(x: u32) -> impl Future<Output = u32> + Send {
    async move { inner(x) }
}

/// A marked function returning a boxed future, as `async-trait` writes it.
#[tickprof::profile]
#[must_use]
pub fn boxed<'a>(x: &'a u32) -> Pin<Box<dyn Future<Output = u32> + Send + 'a>> {
    Box::pin(async move { inner(*x) })
}

/// A type with a marked async method.
#[derive(Debug)]
pub struct Counter(pub u32);

impl Counter {
    /// A marked async method.
    #[tickprof::profile]
    pub async fn bump(&mut self) -> u32 {
        self.0 += std::future::ready(1).await;
        self.0
    }
}

/// A waker that does nothing: the futures here never wait.
struct Noop;

impl Wake for Noop {
    fn wake(self: Arc<Self>) {}
}

/// Polls `future` to completion on this thread.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = Box::pin(future);
    let waker = Waker::from(Arc::new(Noop));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send<T: Send>(_: &T) {}

    #[test]
    fn marked_async_code_keeps_its_behaviour() {
        assert_send(&plain(1));
        assert_send(&later(1));
        assert_eq!(block_on(plain(1)), 2);
        assert_eq!(block_on(parse("")), Ok(0));
        assert_eq!(block_on(parse("4")), Ok(5));
        assert!(block_on(parse("x")).is_err());
        let mut counter = Counter(0);
        assert_eq!(block_on(counter.bump()), 1);
        assert_eq!(block_on(boxed(&3)), 6);
        assert_eq!(block_on(later(5)), 10);
        assert_eq!(block_on(convert("7")).ok(), Some(7));
        assert!(block_on(convert("x")).is_err());
        assert_eq!(block_on(convert_later("8".to_owned())).ok(), Some(8));
        check_report();
    }

    /// The futures returned by `later` and `boxed` are timed, not just
    /// their creation: `inner`, called while they are polled, is their
    /// callee.
    #[cfg(feature = "enabled")]
    fn check_report() {
        let report = tickprof::report();
        let find = |suffix: &str| {
            report
                .sites
                .iter()
                .find(|s| s.name.ends_with(suffix))
                .expect("a site with this name")
        };
        for outer in ["async_marks::later", "async_marks::boxed"] {
            let site = find(outer);
            let kind = tickprof::SiteKind::AsyncFunction;
            assert_eq!((outer, site.kind, site.calls), (outer, kind, 1));
            let callees: Vec<&str> = site.callees.iter().map(|e| e.name.as_str()).collect();
            assert!(callees.iter().any(|n| n.ends_with("async_marks::inner")));
        }
        // `plain(1)` given to `assert_send` is never polled: not counted.
        assert_eq!(find("async_marks::plain").calls, 2);
        assert_eq!(find("async_marks::parse").calls, 3);
        assert_eq!(find("async_marks::Counter::bump").calls, 1);
    }

    /// With profiling off nothing is recorded.
    #[cfg(not(feature = "enabled"))]
    fn check_report() {
        assert!(tickprof::report().sites.is_empty());
    }
}
