// Bodies `#[profile]` emits twice (plain and guarded) and bodies it keeps
// once (items, user macros, long bodies) compile and behave the same.
#![deny(warnings)]

use std::sync::atomic::{AtomicU32, Ordering};

#[tickprof::profile]
fn early(x: Option<u8>) -> Result<u8, String> {
    let v = x.ok_or_else(|| "none".to_owned())?;
    if v > 9 {
        return Ok(9);
    }
    'outer: loop {
        break 'outer Ok(v);
    }
}

#[tickprof::profile]
fn moves(v: Vec<String>, mut n: usize) -> Vec<String> {
    n += 1;
    v.into_iter().take(n).collect()
}

#[tickprof::profile]
fn borrows<'a>(s: &'a str, t: &str) -> &'a str {
    if t.is_empty() {
        s
    } else {
        &s[..1]
    }
}

#[tickprof::profile]
fn with_static() -> u32 {
    static CALLS: AtomicU32 = AtomicU32::new(0);
    CALLS.fetch_add(1, Ordering::Relaxed) + 1
}

macro_rules! counter {
    () => {{
        static C: AtomicU32 = AtomicU32::new(0);
        C.fetch_add(1, Ordering::Relaxed) + 1
    }};
}

#[tickprof::profile]
fn with_user_macro() -> u32 {
    counter!()
}

#[tickprof::profile]
fn unit_with_std_macros(v: &mut Vec<u8>) {
    assert!(v.len() < 10, "{}", v.len());
    v.extend(vec![1, 2]);
    debug_assert_eq!(v.len() % 2, 0);
}

struct Counter(u32);

// The recording copy is a `move` closure: what the body uses moves into
// it. These borrow, reborrow, move out of and drop their arguments as an
// unmarked function would.
#[tickprof::profile]
fn first_mut<'a>(v: &'a mut Vec<u8>, at: usize) -> &'a mut u8 {
    &mut v[at]
}

#[tickprof::profile]
fn longest<'a>(a: &'a String, b: &'a String) -> &'a str {
    if a.len() >= b.len() {
        a.as_str()
    } else {
        &b[..]
    }
}

#[tickprof::profile]
fn pair((a, b): (String, String), keep_b: bool) -> String {
    if keep_b {
        b
    } else {
        a
    }
}

#[tickprof::profile]
fn sum_big(block: [u64; 64], f: impl Fn(u64) -> u64) -> u64 {
    block.iter().map(|&x| f(x)).sum()
}

thread_local! {
    static LOG: std::cell::RefCell<Vec<&'static str>> = const { std::cell::RefCell::new(Vec::new()) };
}

struct Noisy;

impl Drop for Noisy {
    fn drop(&mut self) {
        LOG.with(|l| l.borrow_mut().push("drop"));
    }
}

// An argument the body uses is dropped when the body ends, one the body
// never names when the function returns: before the caller goes on, in
// both copies.
#[tickprof::profile]
fn drops(used: Noisy, _unused: Noisy) -> usize {
    let _keep = &used;
    LOG.with(|l| l.borrow_mut().push("body"));
    1
}

struct Boxed(u8);

impl Boxed {
    #[tickprof::profile]
    fn into_inner(self: Box<Self>) -> u8 {
        self.0
    }
}

impl Counter {
    #[tickprof::profile]
    fn bump(&mut self) -> &mut u32 {
        self.0 += 1;
        &mut self.0
    }
}

fn main() {
    assert_eq!(early(Some(3)), Ok(3));
    assert_eq!(early(Some(12)), Ok(9));
    assert!(early(None).is_err());
    assert_eq!(moves(vec!["a".into(), "b".into()], 0), ["a"]);
    assert_eq!(borrows("xy", "z"), "x");
    // One static however the body is emitted: it counts every call.
    for _ in 0..2 {
        tickprof::pause();
        with_static();
        with_user_macro();
        tickprof::resume();
        with_static();
        with_user_macro();
    }
    assert_eq!(with_static(), 5);
    assert_eq!(with_user_macro(), 5);
    let mut v = Vec::new();
    unit_with_std_macros(&mut v);
    let mut c = Counter(0);
    *c.bump() += 1;
    assert_eq!(c.0, 2);
    for paused in [false, true] {
        if paused {
            tickprof::pause();
        }
        let mut v = vec![1, 2, 3];
        *first_mut(&mut v, 1) += 10;
        assert_eq!(v, [1, 12, 3]);
        let (a, b) = ("ab".to_owned(), "c".to_owned());
        assert_eq!(longest(&a, &b), "ab");
        assert_eq!(pair(("x".into(), "y".into()), true), "y");
        assert_eq!(sum_big([2; 64], |x| x + 1), 192);
        assert_eq!(Box::new(Boxed(7)).into_inner(), 7);
        LOG.with(|l| l.borrow_mut().clear());
        assert_eq!(drops(Noisy, Noisy), 1);
        LOG.with(|l| assert_eq!(*l.borrow(), ["body", "drop", "drop"]));
        tickprof::resume();
    }
}
