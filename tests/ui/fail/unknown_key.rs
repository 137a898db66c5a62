#[tickprof::profile(label = "parse")]
fn parse() {}

fn main() {
    parse();
}
