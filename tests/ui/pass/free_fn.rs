#![deny(warnings)]

#[tickprof::profile]
fn add(a: u32, b: u32) -> u32 {
    a + b
}

#[tickprof::profile(name = "greeting")]
pub fn greet(who: &str) -> String {
    format!("hello {who}")
}

#[tickprof::profile]
fn unit() {}

fn main() {
    assert_eq!(add(2, 3), 5);
    assert_eq!(greet("you"), "hello you");
    unit();
}
