//! Marks on plain functions, methods, trait impls, generic functions,
//! `impl Trait` returns, scopes and containers (`impl`, `trait`, inline
//! `mod`), in syntax every edition accepts.

use std::fmt;
use std::num::ParseIntError;

/// A one-line body (the expansion once raised `unused_braces` here).
#[tickprof::profile]
#[must_use]
#[rustfmt::skip]
pub fn one_line(x: u32) -> u32 { x + 1 }

/// A one-line method body, and a one-line unit body.
#[derive(Debug)]
pub struct Unit;

impl Unit {
    /// Returns its argument.
    #[tickprof::profile]
    #[must_use]
    #[rustfmt::skip]
    pub fn id(self, x: u32) -> u32 { x }

    /// Does nothing.
    #[tickprof::profile]
    #[rustfmt::skip]
    pub fn nothing(&self) {}
}

/// Early return and `?`.
///
/// # Errors
///
/// When either input is not a number.
#[tickprof::profile]
pub fn parse_sum(a: &str, b: &str) -> Result<u32, ParseIntError> {
    if a.is_empty() {
        return Ok(0);
    }
    let a: u32 = a.parse()?;
    let b: u32 = b.parse()?;
    Ok(a + b)
}

/// A custom report name.
#[tickprof::profile(name = "compat custom name")]
#[must_use]
pub fn renamed() -> &'static str {
    "renamed"
}

/// A generic function with a where-clause.
#[tickprof::profile]
#[must_use]
pub fn largest<T>(items: &[T]) -> Option<T>
where
    T: PartialOrd + Copy,
{
    let mut best = *items.first()?;
    for &item in items {
        if item > best {
            best = item;
        }
    }
    Some(best)
}

/// An `impl Trait` return.
#[tickprof::profile]
pub fn evens(limit: u32) -> impl Iterator<Item = u32> {
    (0..limit).filter(|n| n % 2 == 0)
}

/// Scopes and guards: unnamed, named, and a guard value.
#[must_use]
pub fn scoped(n: u32) -> u32 {
    tickprof::prof_scope!();
    let mut total = 0;
    for i in 0..n {
        tickprof::prof_scope!("compat_step");
        total += i;
    }
    let unnamed = tickprof::prof_guard!();
    drop(unnamed);
    let _named = tickprof::prof_guard!("compat_guard");
    total
}

/// A type with marked methods.
#[derive(Debug, Default)]
pub struct Meter {
    total: u64,
}

impl Meter {
    /// A marked associated function returning `Self`.
    #[tickprof::profile]
    #[must_use]
    pub fn starting_at(total: u64) -> Self {
        Self { total }
    }

    /// A marked method taking `&mut self`.
    #[tickprof::profile]
    pub fn add(&mut self, amount: u64) -> u64 {
        self.total += amount;
        self.total
    }
}

/// A generic type with a marked method.
#[derive(Debug)]
pub struct Wrapper<T>(pub T);

impl<T: Clone> Wrapper<T> {
    /// A marked method of a generic impl.
    #[tickprof::profile]
    #[must_use]
    pub fn get(&self) -> T {
        self.0.clone()
    }
}

/// A trait with a marked default method.
pub trait Shape {
    /// The area.
    fn area(&self) -> f64;

    /// Twice the area (a marked default method).
    #[tickprof::profile]
    fn double_area(&self) -> f64 {
        self.area() * 2.0
    }
}

/// A square.
#[derive(Debug)]
pub struct Square(pub f64);

impl Shape for Square {
    #[tickprof::profile]
    fn area(&self) -> f64 {
        self.0 * self.0
    }
}

impl fmt::Display for Square {
    #[tickprof::profile]
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "square {}", self.0)
    }
}

/// A counter whose methods are marked by one mark on the `impl`.
#[derive(Debug, Default)]
pub struct Tally {
    count: u32,
}

#[tickprof::profile]
impl Tally {
    /// Adds one and returns the count (marked by the container).
    pub fn tick(&mut self) -> u32 {
        self.count += 1;
        self.count
    }

    /// The count (opted out of the container's mark).
    #[tickprof::profile(skip)]
    #[must_use]
    pub fn peek(&self) -> u32 {
        self.count
    }

    /// Zero (a `const fn`: left alone by the container's mark).
    #[must_use]
    pub const fn zero() -> u32 {
        0
    }

    /// Resets the count (its own options: a custom name).
    #[tickprof::profile(name = "compat tally reset")]
    pub fn reset(&mut self) {
        self.count = 0;
    }
}

/// A trait whose default methods are marked by one mark on the `trait`.
#[tickprof::profile]
pub trait Describe {
    /// A label (no body: left alone).
    fn label(&self) -> String;

    /// The label twice (a marked default method).
    fn twice(&self) -> String {
        let label = self.label();
        format!("{label} {label}")
    }
}

#[tickprof::profile]
impl Describe for Tally {
    fn label(&self) -> String {
        format!("tally {}", self.count)
    }
}

/// Functions marked by one mark on their inline module.
#[tickprof::profile]
pub mod helpers {
    /// Doubles `x`.
    #[must_use]
    pub fn double(x: u32) -> u32 {
        nested::add(x, x)
    }

    /// A nested module, marked too.
    pub mod nested {
        /// Adds `a` and `b`.
        #[must_use]
        pub fn add(a: u32, b: u32) -> u32 {
            a + b
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marked_code_keeps_its_behaviour() {
        assert_eq!(one_line(1), 2);
        assert_eq!(Unit.id(3), 3);
        Unit.nothing();
        assert_eq!(parse_sum("", "x"), Ok(0));
        assert_eq!(parse_sum("2", "3"), Ok(5));
        assert!(parse_sum("2", "x").is_err());
        assert_eq!(renamed(), "renamed");
        assert_eq!(largest(&[3, 9, 2]), Some(9));
        assert_eq!(largest::<u8>(&[]), None);
        assert_eq!(evens(7).collect::<Vec<_>>(), [0, 2, 4, 6]);
        assert_eq!(scoped(4), 6);
        let mut meter = Meter::starting_at(1);
        assert_eq!(meter.add(2), 3);
        assert_eq!(Wrapper("w").get(), "w");
        let square = Square(3.0);
        assert!((square.area() - 9.0).abs() < f64::EPSILON);
        assert!((square.double_area() - 18.0).abs() < f64::EPSILON);
        assert_eq!(square.to_string(), "square 3");
        let mut tally = Tally::default();
        assert_eq!(
            tally.tick() + tally.tick() + tally.peek() + Tally::zero(),
            5
        );
        assert_eq!(tally.twice(), "tally 2 tally 2");
        tally.reset();
        assert_eq!(helpers::double(4), 8);
        check_report();
    }

    /// Every mark is in the report under the name the README promises.
    #[cfg(feature = "enabled")]
    fn check_report() {
        let report = tickprof::report();
        let names: Vec<&str> = report.sites.iter().map(|s| s.name.as_str()).collect();
        let missing: Vec<&str> = [
            "marks::one_line",
            "marks::parse_sum",
            "marks::largest",
            "marks::evens",
            "marks::Meter::starting_at",
            "marks::Meter::add",
            "marks::Wrapper::get",
            "marks::Square as ",
            "marks::Shape>::area",
            "marks::Shape::double_area",
            "marks::scoped@",
            "marks::scoped::compat_step",
            "marks::scoped::compat_guard",
        ]
        .iter()
        .copied()
        .filter(|expected| !names.iter().any(|n| n.contains(expected)))
        .collect();
        assert_eq!(missing, Vec::<&str>::new(), "not among the report's sites");
        assert_eq!(report.site("compat custom name").map(|s| s.calls), Some(1));
        // Container marks: every function with a body, once each.
        let calls = |suffix: &str| -> Vec<u64> {
            report
                .sites
                .iter()
                .filter(|s| s.name.ends_with(suffix))
                .map(|s| s.calls)
                .collect()
        };
        assert_eq!(calls("marks::Tally::tick"), [2]);
        assert_eq!(calls("marks::Describe::twice"), [1]);
        assert_eq!(calls("marks::Describe>::label"), [1]);
        assert_eq!(calls("marks::helpers::double"), [1]);
        assert_eq!(calls("marks::helpers::nested::add"), [1]);
        assert_eq!(calls("compat tally reset"), [1]);
        assert_eq!(calls("::peek"), Vec::<u64>::new());
        assert_eq!(calls("::zero"), Vec::<u64>::new());
        let scopes = names
            .iter()
            .filter(|n| n.contains("marks::scoped@"))
            .count();
        // prof_scope!() and prof_guard!() are two sites.
        assert_eq!(scopes, 2);
    }

    /// With profiling off nothing is recorded.
    #[cfg(not(feature = "enabled"))]
    fn check_report() {
        assert!(tickprof::report().sites.is_empty());
    }
}
