#[tickprof::profile(name)]
fn parse() {}

fn main() {
    parse();
}
