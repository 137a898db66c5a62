#[tickprof::profile]
struct Point {
    x: u32,
}

fn main() {
    let _ = Point { x: 1 }.x;
}
