#[tickprof::profile]
extern "C" {
    fn abs(x: i32) -> i32;
}

fn main() {}
