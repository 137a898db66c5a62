#![deny(warnings)]
#![allow(dead_code)]

use std::future::Future;
use std::pin::Pin;

use tickprof::profile;

#[derive(Debug, Default)]
struct Counter {
    n: u32,
}

// An inherent impl: receivers, `Self`, generics and where-clauses, unsafe
// and extern "C" functions, a `const fn` (left alone), a skipped method and
// one with its own options.
#[profile]
impl Counter {
    const fn zero() -> Self {
        Self { n: 0 }
    }

    fn get(&self) -> u32 {
        self.n
    }

    fn bump(&mut self) -> &mut Self {
        self.n += 1;
        self
    }

    fn into_inner(self) -> u32 {
        self.n
    }

    fn boxed(self: Box<Self>) -> u32 {
        self.n * 10
    }

    fn largest<T>(items: &[T]) -> Option<T>
    where
        T: PartialOrd + Copy,
    {
        items.iter().copied().fold(None, |best, x| match best {
            Some(b) if b >= x => Some(b),
            _ => Some(x),
        })
    }

    unsafe fn raw(p: *const u32) -> u32 {
        // SAFETY: the caller passes a valid pointer.
        unsafe { *p }
    }

    extern "C" fn c_abi(x: u32) -> u32 {
        x + 1
    }

    #[profile(skip)]
    fn hot(&self) -> u32 {
        self.n
    }

    #[profile(name = "counter reset")]
    fn reset(&mut self) {
        self.n = 0;
    }

    #[tickprof::profile(skip)]
    fn also_hot(&self) -> u32 {
        self.n
    }
}

// A trait: default methods are marked, methods without a body left alone.
#[profile]
trait Shape {
    fn area(&self) -> f64;

    fn double_area(&self) -> f64 {
        self.area() * 2.0
    }

    fn unit() -> Self
    where
        Self: Sized;

    #[profile(skip)]
    fn half_area(&self) -> f64 {
        self.area() / 2.0
    }
}

struct Square(f64);

// A trait impl.
#[profile]
impl Shape for Square {
    fn area(&self) -> f64 {
        self.0 * self.0
    }

    fn unit() -> Self {
        Square(1.0)
    }
}

// A generic trait impl.
struct Wrapper<T>(T);

#[profile]
impl<T: Clone + Into<f64>> Shape for Wrapper<T> {
    fn area(&self) -> f64 {
        self.0.clone().into()
    }

    fn unit() -> Self {
        unreachable!()
    }
}

// An inline module: free functions, nested modules, impls and traits,
// async functions and returned futures, macros left as they are.
#[profile(crate = ::tickprof)]
mod outer {
    pub fn free(x: u32) -> u32 {
        inner::deeper(x) + 1
    }

    pub async fn later(x: u32) -> u32 {
        x * 2
    }

    pub fn boxed(x: u32) -> std::pin::Pin<Box<dyn std::future::Future<Output = u32>>> {
        Box::pin(async move { x + 3 })
    }

    // Not one async block: left alone rather than rejected.
    pub fn ready(x: u32) -> impl std::future::Future<Output = u32> {
        std::future::ready(x)
    }

    pub const fn constant() -> u32 {
        7
    }

    macro_rules! make {
        ($name:ident) => {
            pub fn $name() -> u32 {
                5
            }
        };
    }
    make!(made);

    pub mod inner {
        pub fn deeper(x: u32) -> u32 {
            x + 10
        }

        pub struct Thing;

        impl Thing {
            pub fn id(&self, x: u32) -> u32 {
                x
            }
        }

        pub trait Named {
            fn name(&self) -> &'static str {
                "named"
            }
        }

        impl Named for Thing {}

        #[profile(skip)]
        pub mod untouched {
            pub fn plain() -> u32 {
                1
            }
        }

        #[tickprof::profile(name = "own")]
        pub fn own() -> u32 {
            2
        }
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn t() {}
    }
}

// An empty impl and an unsafe trait.
#[profile]
impl Square {}

#[profile]
unsafe trait Marker {
    fn mark(&self) -> u8 {
        1
    }
}

fn poll_ready<F: Future>(f: F) -> F::Output {
    use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};
    fn noop(_: *const ()) {}
    fn clone(p: *const ()) -> RawWaker {
        RawWaker::new(p, &VTABLE)
    }
    static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, noop, noop, noop);
    // SAFETY: the vtable's functions do nothing and never read the pointer.
    let waker = unsafe { Waker::from_raw(RawWaker::new(std::ptr::null(), &VTABLE)) };
    let mut f = std::pin::pin!(f);
    match f.as_mut().poll(&mut Context::from_waker(&waker)) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("pending"),
    }
}

fn main() {
    let mut c = Counter::zero();
    assert_eq!(c.bump().bump().get(), 2);
    assert_eq!(c.hot() + c.also_hot(), 4);
    c.reset();
    assert_eq!(Box::new(Counter { n: 4 }).boxed(), 40);
    assert_eq!(Counter::largest(&[3, 9, 2]), Some(9));
    // SAFETY: a valid pointer to a local.
    assert_eq!(unsafe { Counter::raw(&5) }, 5);
    assert_eq!(Counter::c_abi(1), 2);
    assert_eq!(c.into_inner(), 0);
    let s = Square(3.0);
    assert_eq!(s.double_area() + s.half_area(), 22.5);
    assert_eq!(Square::unit().area(), 1.0);
    assert_eq!(Wrapper(2.0f32).double_area(), 4.0);
    assert_eq!(outer::free(1), 12);
    assert_eq!(poll_ready(outer::later(2)), 4);
    let boxed: Pin<Box<dyn Future<Output = u32>>> = outer::boxed(1);
    assert_eq!(poll_ready(boxed), 4);
    assert_eq!(poll_ready(outer::ready(6)), 6);
    assert_eq!(outer::constant() + outer::made(), 12);
    use outer::inner::Named;
    assert_eq!(outer::inner::Thing.id(3), 3);
    assert_eq!(outer::inner::Thing.name(), "named");
    assert_eq!(outer::inner::untouched::plain() + outer::inner::own(), 3);

    let report = tickprof::report();
    let calls = |name: &str| report.sites.iter().find(|s| s.name.ends_with(name)).map(|s| s.calls);
    assert_eq!(calls("Counter::bump"), Some(2));
    assert_eq!(calls("Counter::hot"), None);
    assert_eq!(calls("Counter::zero"), None);
    assert_eq!(calls("counter reset"), Some(1));
    assert_eq!(calls("Shape::double_area"), Some(2));
    assert_eq!(calls("Shape::half_area"), None);
    assert_eq!(calls("outer::free"), Some(1));
    assert_eq!(calls("outer::inner::deeper"), Some(1));
    assert_eq!(calls("outer::later"), Some(1));
    assert_eq!(calls("outer::boxed"), Some(1));
    assert_eq!(calls("outer::ready"), None);
    assert_eq!(calls("outer::made"), None);
    assert_eq!(calls("outer::inner::Thing::id"), Some(1));
    assert_eq!(calls("inner::Named::name"), Some(1));
    assert_eq!(calls("untouched::plain"), None);
    assert_eq!(calls("own"), Some(1));

    // Functions marked inside a container are at the line of the
    // container's attribute.
    let line = |name: &str| report.sites.iter().find(|s| s.name.ends_with(name)).map(|s| s.line);
    assert_eq!(line("Counter::get"), Some(17));
    assert_eq!(line("counter reset"), Some(17));
    assert_eq!(line("outer::inner::deeper"), Some(124));
}
