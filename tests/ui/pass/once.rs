// `#[profile(once)]` (and `always, once`, as `cargo tickprof` marks a
// kept function holding a large inlined one): the body emitted once, the
// guard's entry and exit inline around it, on every shape a plain mark
// takes, quiet under deny(warnings), counted as a plain mark counts,
// still stopped by `pause`, and a call that panics counted as unwound.
#![deny(warnings)]

use std::sync::atomic::{AtomicU32, Ordering};

#[tickprof::profile(once)]
fn early(x: Option<u8>) -> Result<u8, String> {
    let v = x.ok_or_else(|| "none".to_owned())?;
    if v > 9 {
        return Ok(9);
    }
    Ok(v)
}

#[tickprof::profile(always, once)]
fn first_mut<'a>(v: &'a mut Vec<u8>, at: usize) -> &'a mut u8 {
    &mut v[at]
}

#[tickprof::profile(always, once)]
fn with_static() -> u32 {
    static CALLS: AtomicU32 = AtomicU32::new(0);
    CALLS.fetch_add(1, Ordering::Relaxed) + 1
}

#[tickprof::profile(always, once)]
#[track_caller]
fn caller_line() -> u32 {
    std::panic::Location::caller().line()
}

#[tickprof::profile(always, once)]
fn never() -> ! {
    std::process::exit(0)
}

#[tickprof::profile(always, once)]
fn opaque() -> impl Fn(u8) -> u8 {
    |x| x + 1
}

#[tickprof::profile(once, name = "renamed")]
fn named() {}

#[tickprof::profile(always, once)]
async fn later(x: u8) -> u8 {
    x
}

struct Counter(u32);

#[tickprof::profile(always, once)]
impl Counter {
    fn bump(&mut self) -> &mut u32 {
        self.0 += 1;
        &mut self.0
    }

    #[profile(name = "counter get")]
    fn get(&self) -> u32 {
        self.0
    }
}

#[tickprof::profile(once)]
fn boom(x: u8) -> u8 {
    if x > 1 {
        panic!("boom");
    }
    x
}

#[tickprof::profile(once, fail)]
fn fallible(x: u8) -> Result<u8, tickprof::Injected> {
    Ok(x)
}

mod tp {
    pub use tickprof::*;
}

#[tp::profile(crate = tp, once)]
fn renamed_crate(x: u32) -> u32 {
    x * 2
}

fn main() {
    assert_eq!(early(Some(3)), Ok(3));
    assert_eq!(early(Some(12)), Ok(9));
    assert!(early(None).is_err());
    let mut v = vec![1, 2, 3];
    *first_mut(&mut v, 1) += 10;
    assert_eq!(v, [1, 12, 3]);
    tickprof::pause();
    with_static();
    tickprof::resume();
    assert_eq!(with_static(), 2);
    let line = line!() + 1;
    assert_eq!(caller_line(), line);
    assert_eq!(opaque()(1), 2);
    named();
    let mut c = Counter(0);
    *c.bump() += 1;
    assert_eq!(c.get(), 2);
    assert_eq!(renamed_crate(4), 8);
    let _unpolled = later(1);
    assert_eq!(boom(1), 1);
    std::panic::set_hook(Box::new(|_| {}));
    assert!(std::panic::catch_unwind(|| boom(2)).is_err());
    let _ = std::panic::take_hook();
    assert_eq!(fallible(4), Ok(4));
    let r = tickprof::report();
    let calls = |name: &str| r.sites.iter().find(|s| s.name.ends_with(name)).map(|s| s.calls);
    assert_eq!(calls("::early"), Some(3));
    assert_eq!(calls("::first_mut"), Some(1));
    // The paused call is not counted.
    assert_eq!(calls("::with_static"), Some(1));
    assert_eq!(calls("::caller_line"), Some(1));
    assert_eq!(calls("::opaque"), Some(1));
    assert_eq!(calls("renamed"), Some(1));
    assert_eq!(calls("Counter::bump"), Some(1));
    assert_eq!(calls("counter get"), Some(1));
    assert_eq!(calls("::renamed_crate"), Some(1));
    assert_eq!(calls("::boom"), Some(2));
    let unwound = r.sites.iter().find(|s| s.name.ends_with("::boom")).map(|s| s.unwound);
    assert_eq!(unwound, Some(1));
    assert_eq!(calls("::fallible"), Some(1));
    if v.len() == 4 {
        never();
    }
}
