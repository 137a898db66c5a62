#![deny(warnings)]

mod reexport {
    pub use ::tickprof as tp;
}

use tickprof as renamed;

#[tickprof::profile(crate = crate::reexport::tp)]
fn one() -> u32 {
    1
}

#[renamed::profile(crate = renamed, name = "two")]
fn two() -> u32 {
    2
}

#[tickprof::profile(crate = ::tickprof)]
fn three() -> u32 {
    3
}

fn main() {
    assert_eq!(one() + two() + three(), 6);
}
