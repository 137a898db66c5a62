#![deny(warnings)]

use tickprof::profile;

/// Outer docs and attributes stay on the function.
#[profile]
#[must_use]
#[inline]
#[allow(clippy::needless_return)]
fn documented() -> u32 {
    //! Inner docs stay inside.
    #![allow(unused_variables)]
    let unused = 5;
    return 1;
}

#[profile]
fn outer() -> u32 {
    #[profile]
    fn inner() -> u32 {
        10
    }

    #[profile(name = "inner again")]
    fn inner_again() -> u32 {
        20
    }

    inner() + inner_again()
}

#[cfg(all())]
#[profile]
fn configured() -> bool {
    true
}

#[profile]
fn closure_body() -> u32 {
    let add = |a: u32| a + 1;
    add(1)
}

fn main() {
    assert_eq!(documented(), 1);
    assert_eq!(outer(), 30);
    assert!(configured());
    assert_eq!(closure_body(), 2);
}
