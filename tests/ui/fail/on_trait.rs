#[tickprof::profile]
trait Parse {
    fn parse(&self) -> u32 {
        1
    }
}

fn main() {}
