#[tickprof::profile]
static mut COUNTER: u32 = 0;

fn main() {}
