#[tickprof::profile(crate = "tickprof")]
fn parse() {}

#[tickprof::profile(crate = 1 + 2)]
fn tokenize() {}

fn main() {
    parse();
    tokenize();
}
