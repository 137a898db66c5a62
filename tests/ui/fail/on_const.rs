#[tickprof::profile]
const LIMIT: u32 = 10;

fn main() {
    let _ = LIMIT;
}
