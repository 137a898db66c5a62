#[tickprof::profile(name = "a" crate = tickprof)]
fn parse() {}

fn main() {
    parse();
}
