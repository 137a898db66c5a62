//! Report names of marked functions in every shape rustc prints: one
//! canonical form (`path::Type::method`, `<path::Type as Trait>::method`,
//! `path::Trait::method`), whatever module the `impl` block is in.
#![cfg(feature = "enabled")]

use std::future::Future;
use std::str::FromStr;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use tickprof::profile;

/// This test crate's name, the first segment of every path below.
const KRATE: &str = module_path!();

/// `path` with `{k}` replaced by this crate's name.
fn at(path: &str) -> String {
    path.replace("{k}", KRATE)
}

#[profile]
fn free() {}

pub mod parser {
    pub struct Parser;

    impl Parser {
        #[tickprof::profile]
        pub fn next_token(&self) {}
    }
}

pub mod other {
    use tickprof::profile;

    /// An inherent impl in another module than its type.
    impl crate::names::parser::Parser {
        #[profile]
        pub fn elsewhere(&self) {}
    }

    /// A std trait implemented in another module than the type.
    impl std::str::FromStr for crate::names::c::Version {
        type Err = ();
        #[profile]
        fn from_str(_: &str) -> Result<Self, ()> {
            Ok(crate::names::c::Version)
        }
    }

    /// A crate trait implemented in another module than the type.
    impl crate::names::Shape for crate::names::c::Version {
        #[profile]
        fn area(&self) -> f64 {
            2.0
        }
    }

    /// A trait for a slice of references, in another module.
    impl crate::names::Named for &[crate::names::parser::Parser] {
        #[profile]
        fn nm(&self) {}
    }

    /// A generic trait with a generic argument, for a generic type.
    impl<T> From<Vec<T>> for crate::names::Stack<T> {
        #[profile]
        fn from(v: Vec<T>) -> Self {
            crate::names::Stack(v)
        }
    }
}

pub mod c {
    use tickprof::profile;

    pub struct Version;

    impl std::fmt::Display for Version {
        #[profile]
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("v")
        }
    }

    impl std::ops::Add for Version {
        type Output = Version;
        #[profile]
        fn add(self, _: Version) -> Version {
            Version
        }
    }

    impl FromIterator<u8> for Version {
        #[profile]
        fn from_iter<I: IntoIterator<Item = u8>>(_: I) -> Self {
            Version
        }
    }

    impl From<u8> for Version {
        #[profile]
        fn from(_: u8) -> Self {
            Version
        }
    }
}

pub trait Shape {
    fn area(&self) -> f64;

    #[profile]
    fn double_area(&self) -> f64 {
        2.0 * self.area()
    }
}

pub trait Named {
    fn nm(&self);
}

pub struct Square;

impl Shape for Square {
    #[profile]
    fn area(&self) -> f64 {
        1.0
    }
}

#[profile]
fn generic<T: Default>() -> T {
    T::default()
}

pub struct Stack<T>(Vec<T>);

impl<T> Stack<T> {
    #[profile]
    pub fn push(&mut self, t: T) {
        self.0.push(t);
    }
}

pub struct Entry<'a, K, V>(&'a mut Vec<(K, V)>);

impl<K, V> Entry<'_, K, V> {
    #[profile]
    pub fn insert(self, k: K, v: V) {
        self.0.push((k, v));
    }
}

pub struct Arr<T, const N: usize>([T; N]);

impl<T, const N: usize> Arr<T, N> {
    #[profile]
    pub fn size(&self) -> usize {
        N
    }
}

impl Arr<u8, 4> {
    #[profile]
    pub fn concrete(&self) -> u8 {
        self.0[0]
    }
}

pub struct Nested<T>(T);

impl<T> Nested<Vec<Option<T>>> {
    #[profile]
    pub fn nested(&self) -> usize {
        self.0.len()
    }
}

impl Named for (u8, u16) {
    #[profile]
    fn nm(&self) {}
}

impl Named for dyn Shape {
    #[profile]
    fn nm(&self) {}
}

fn closure_host() -> u32 {
    let c = || {
        tickprof::prof_scope!();
        7
    };
    c()
}

#[profile]
async fn async_fn() -> u8 {
    3
}

pub struct Service;

impl Service {
    #[profile]
    pub async fn handle(&self) -> u8 {
        4
    }
}

fn outer() -> f64 {
    #[profile]
    fn inner() {}
    inner();

    struct Local;
    impl Local {
        #[profile]
        fn local_method(&self) {}
    }
    impl Shape for Local {
        #[profile]
        fn area(&self) -> f64 {
            5.0
        }
    }
    Local.local_method();
    Local.area()
}

fn labelled() {
    tickprof::prof_scope!("phase");
}

#[profile(name = "=custom label")]
fn custom() {}

/// Polls a future that never waits to completion.
fn block_on<F: Future>(f: F) -> F::Output {
    struct Noop;
    impl Wake for Noop {
        fn wake(self: Arc<Self>) {}
    }
    let waker = Waker::from(Arc::new(Noop));
    let mut cx = Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

#[test]
fn every_shape_shows_in_its_canonical_form() {
    free();
    parser::Parser.next_token();
    parser::Parser.elsewhere();
    assert!(c::Version::from_str("1").is_ok());
    assert_eq!(Shape::area(&c::Version), 2.0);
    assert_eq!(format!("{}", c::Version), "v");
    let _ = c::Version + c::Version;
    let _: c::Version = vec![1u8].into_iter().collect();
    let _: c::Version = 1u8.into();
    assert_eq!(Square.double_area(), 2.0);
    assert_eq!(generic::<u8>(), 0);
    assert_eq!(generic::<String>(), "");
    let mut stack: Stack<u8> = vec![1u8].into();
    stack.push(2);
    let mut pairs = Vec::new();
    Entry(&mut pairs).insert(1u8, "a");
    assert_eq!(Arr([0u16; 3]).size(), 3);
    assert_eq!(Arr([9u8; 4]).concrete(), 9);
    assert_eq!(Nested(vec![Some(1u8)]).nested(), 1);
    let parsers: &[parser::Parser] = &[parser::Parser];
    parsers.nm();
    (1u8, 2u16).nm();
    let shape: &dyn Shape = &Square;
    shape.nm();
    assert_eq!(closure_host(), 7);
    assert_eq!(block_on(async_fn()), 3);
    assert_eq!(block_on(Service.handle()), 4);
    assert_eq!(outer(), 5.0);
    labelled();
    custom();

    let report = tickprof::report();
    let expected = [
        ("{k}::free", 1),
        ("{k}::parser::Parser::next_token", 1),
        ("{k}::parser::Parser::elsewhere", 1),
        ("<{k}::c::Version as FromStr>::from_str", 1),
        ("<{k}::c::Version as {k}::Shape>::area", 1),
        ("<{k}::c::Version as Display>::fmt", 1),
        ("<{k}::c::Version as Add>::add", 1),
        ("<{k}::c::Version as FromIterator<u8>>::from_iter", 1),
        ("<{k}::c::Version as From<u8>>::from", 1),
        ("{k}::Shape::double_area", 1),
        ("<{k}::Square as {k}::Shape>::area", 1),
        ("{k}::generic", 2),
        ("<{k}::Stack as From<Vec<_>>>::from", 1),
        ("{k}::Stack::push", 1),
        ("{k}::Entry::insert", 1),
        ("{k}::Arr::size", 1),
        ("{k}::Arr<u8, 4>::concrete", 1),
        ("{k}::Nested<Vec<Option<_>>>::nested", 1),
        ("<&[{k}::parser::Parser] as {k}::Named>::nm", 1),
        ("<(u8, u16) as {k}::Named>::nm", 1),
        ("<dyn {k}::Shape as {k}::Named>::nm", 1),
        ("{k}::async_fn", 1),
        ("{k}::Service::handle", 1),
        ("{k}::outer::inner", 1),
        ("{k}::outer::Local::local_method", 1),
        ("<{k}::outer::Local as {k}::Shape>::area", 1),
        ("{k}::labelled::phase", 1),
        ("=custom label", 1),
    ];
    let mut wrong = Vec::new();
    for (path, calls) in expected {
        let name = at(path);
        match report.site(&name) {
            Some(site) if site.calls == calls => {}
            Some(site) => wrong.push(format!("{name}: {} calls, want {calls}", site.calls)),
            None => wrong.push(format!("{name}: missing")),
        }
    }
    let scope = at("{k}::closure_host::{{closure}}@");
    if !report.sites.iter().any(|s| s.name.starts_with(&scope)) {
        wrong.push(format!("{scope}<line>: missing"));
    }
    let shown: Vec<&str> = report.sites.iter().map(|s| s.name.as_str()).collect();
    assert!(wrong.is_empty(), "{}\nshown: {shown:#?}", wrong.join("\n"));
    // No name of this module's shows rustc's internal forms (the other
    // test modules of this binary have names of their own).
    for name in shown.iter().filter(|n| n.contains(KRATE)) {
        assert!(!name.contains("<impl "), "{name}");
        assert!(
            !name.contains("core::") && !name.contains("alloc::"),
            "{name}"
        );
        assert!(!name.contains("'_"), "{name}");
        assert!(!name.contains("__tickprof"), "{name}");
    }
}
