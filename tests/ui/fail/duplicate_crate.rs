#[tickprof::profile(crate = tickprof, crate = ::tickprof)]
fn parse() {}

fn main() {
    parse();
}
