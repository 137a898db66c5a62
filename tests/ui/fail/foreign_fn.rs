extern "C" {
    #[tickprof::profile]
    fn abs(x: i32) -> i32;
}

fn main() {}
