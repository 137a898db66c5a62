#![deny(warnings)]

use std::fmt::Display;
use tickprof::profile;

#[profile]
fn largest<T: PartialOrd + Copy>(items: &[T]) -> Option<T> {
    let mut best = *items.first()?;
    for &item in items {
        if item > best {
            best = item;
        }
    }
    Some(best)
}

#[profile]
fn sum_array<const N: usize>(values: [u32; N]) -> u32 {
    values.iter().sum()
}

#[profile]
fn describe<T>(value: T) -> String
where
    T: Display,
{
    format!("<{value}>")
}

#[profile]
fn evens(limit: u32) -> impl Iterator<Item = u32> {
    (0..limit).filter(|n| n % 2 == 0)
}

#[profile]
fn show(value: impl Display) -> String {
    value.to_string()
}

#[profile]
fn first_word(text: &str) -> &str {
    text.split(' ').next().unwrap_or("")
}

#[profile]
fn longest<'a>(a: &'a str, b: &'a str) -> &'a str {
    if a.len() >= b.len() {
        a
    } else {
        b
    }
}

struct Wrapper<T>(T);

impl<T: Clone> Wrapper<T> {
    #[profile]
    fn get(&self) -> T {
        self.0.clone()
    }

    #[profile]
    fn map<U, F: FnOnce(T) -> U>(self, f: F) -> Wrapper<U> {
        Wrapper(f(self.0))
    }
}

fn main() {
    assert_eq!(largest(&[3, 9, 2]), Some(9));
    assert_eq!(largest(&[1.5, 0.5]), Some(1.5));
    assert_eq!(largest::<u8>(&[]), None);
    assert_eq!(sum_array([1, 2, 3]), 6);
    assert_eq!(sum_array([]), 0);
    assert_eq!(describe(7), "<7>");
    assert_eq!(describe("x"), "<x>");
    assert_eq!(evens(7).collect::<Vec<_>>(), [0, 2, 4, 6]);
    assert_eq!(show(1.5), "1.5");
    assert_eq!(first_word("hello world"), "hello");
    assert_eq!(longest("ab", "abc"), "abc");
    assert_eq!(Wrapper(String::from("w")).get(), "w");
    assert_eq!(Wrapper(2).map(|n| n * 3).get(), 6);
}
