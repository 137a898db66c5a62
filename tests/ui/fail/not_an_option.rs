#[tickprof::profile(5)]
fn parse() {}

fn main() {
    parse();
}
