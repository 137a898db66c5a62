#![deny(warnings)]

use tickprof::profile;

#[derive(Debug, PartialEq)]
struct Counter {
    n: u32,
}

impl Counter {
    #[profile]
    fn new() -> Self {
        Self { n: 0 }
    }

    #[profile]
    fn get(&self) -> u32 {
        self.n
    }

    #[profile(name = "bump")]
    fn bump(&mut self) -> &mut Self {
        self.n += 1;
        self
    }

    #[profile]
    fn into_inner(self) -> u32 {
        self.n
    }

    #[profile]
    pub(crate) fn boxed(self: Box<Self>) -> u32 {
        self.n * 10
    }
}

trait Shape {
    fn area(&self) -> f64;

    #[profile]
    fn double_area(&self) -> f64 {
        self.area() * 2.0
    }

    fn unit() -> Self
    where
        Self: Sized;
}

struct Square(f64);

impl Shape for Square {
    #[profile]
    fn area(&self) -> f64 {
        self.0 * self.0
    }

    #[profile]
    fn unit() -> Self {
        Square(1.0)
    }
}

fn main() {
    let mut c = Counter::new();
    assert_eq!(c.get(), 0);
    c.bump().bump();
    assert_eq!(c.get(), 2);
    assert_eq!(Box::new(Counter { n: 4 }).boxed(), 40);
    assert_eq!(c.into_inner(), 2);

    let s = Square(3.0);
    assert_eq!(s.area(), 9.0);
    assert_eq!(s.double_area(), 18.0);
    assert_eq!(Square::unit().area(), 1.0);
}
