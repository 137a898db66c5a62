//! A library-like crate under the strictest lint settings: the expansion of
//! `#[profile]` must not add any warning. trybuild runs rustc, not clippy:
//! the clippy half (and every edition) is checked by the crates in `compat/`.
#![forbid(unsafe_code)]
#![deny(missing_docs, warnings)]
#![warn(clippy::pedantic)]

/// Adds one.
///
/// # Examples
///
/// ```
/// assert_eq!(strict_lints::add_one(1), 2);
/// ```
#[tickprof::profile]
#[must_use]
pub fn add_one(x: u64) -> u64 {
    x + 1
}

/// A type with a profiled method.
pub struct Meter {
    total: u64,
}

impl Meter {
    /// Adds `amount` and returns the new total.
    #[tickprof::profile(name = "meter add")]
    pub fn add(&mut self, amount: u64) -> u64 {
        self.total += amount;
        self.total
    }
}

fn main() {
    assert_eq!(add_one(41), 42);
    let mut meter = Meter { total: 0 };
    assert_eq!(meter.add(2), 2);
    assert_eq!(meter.add(3), 5);
}
