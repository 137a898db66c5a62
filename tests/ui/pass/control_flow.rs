#![deny(warnings)]

use std::num::ParseIntError;
use tickprof::profile;

#[profile]
fn early(n: i32) -> &'static str {
    if n < 0 {
        return "negative";
    }
    for i in 0..n {
        if i == 3 {
            return "big";
        }
    }
    "small"
}

#[profile]
fn parse_sum(a: &str, b: &str) -> Result<i64, ParseIntError> {
    let a: i64 = a.parse()?;
    let b: i64 = b.parse()?;
    Ok(a + b)
}

#[profile]
fn first_char_upper(s: &str) -> Option<char> {
    Some(s.chars().next()?.to_ascii_uppercase())
}

#[profile]
fn diverge(message: &str) -> ! {
    panic!("{message}")
}

#[profile]
fn loop_forever_until(limit: u32) -> u32 {
    let mut n = 0;
    loop {
        n += 1;
        if n == limit {
            break n;
        }
    }
}

fn main() {
    assert_eq!(early(-1), "negative");
    assert_eq!(early(10), "big");
    assert_eq!(early(2), "small");
    assert_eq!(parse_sum("2", "40"), Ok(42));
    assert!(parse_sum("2", "x").is_err());
    assert_eq!(first_char_upper("abc"), Some('A'));
    assert_eq!(first_char_upper(""), None);
    assert_eq!(loop_forever_until(5), 5);

    std::panic::set_hook(Box::new(|_| {}));
    let unwound = std::panic::catch_unwind(|| diverge("boom"));
    let _ = std::panic::take_hook();
    let payload = unwound.expect_err("diverge returned");
    assert_eq!(
        payload.downcast_ref::<String>().map(String::as_str),
        Some("boom")
    );
}
