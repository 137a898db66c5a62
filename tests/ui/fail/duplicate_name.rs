#[tickprof::profile(name = "a", name = "b")]
fn parse() {}

fn main() {
    parse();
}
