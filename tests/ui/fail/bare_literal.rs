#[tickprof::profile("parse")]
fn parse() {}

fn main() {
    parse();
}
