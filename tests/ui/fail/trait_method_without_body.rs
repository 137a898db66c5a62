trait Parse {
    #[tickprof::profile]
    fn parse(&self) -> u32;
}

fn main() {}
