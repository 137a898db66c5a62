#[tickprof::profile]
const fn square(x: u32) -> u32 {
    x * x
}

fn main() {
    const NINE: u32 = square(3);
    let _ = NINE;
}
