//! A library with marks: `used` is called by tests/coverage.rs, `unused`,
//! the generic `Shape::area` impl for `Square` and the scope in `unused`
//! never are.
#![forbid(unsafe_code)]
#![deny(warnings, missing_docs, clippy::pedantic)]

/// Called by the test.
#[must_use]
#[tickprof::profile]
pub fn used(x: u32) -> u32 {
    x + 1
}

/// Never called by the test.
#[must_use]
#[tickprof::profile]
pub fn unused(x: u32) -> u32 {
    tickprof::prof_scope!("lib_scope");
    x + 2
}

/// A trait with a marked default method.
pub trait Shape {
    /// The area.
    fn area(&self) -> f64;
    /// Never called by the test.
    #[tickprof::profile]
    fn describe(&self) -> String {
        format!("area {}", self.area())
    }
}

/// A square.
pub struct Square(pub f64);

impl Shape for Square {
    #[tickprof::profile]
    fn area(&self) -> f64 {
        self.0 * self.0
    }
}
