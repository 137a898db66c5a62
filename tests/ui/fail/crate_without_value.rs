#[tickprof::profile(crate)]
fn parse() {}

fn main() {
    parse();
}
