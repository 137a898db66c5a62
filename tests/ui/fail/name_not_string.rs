#[tickprof::profile(name = 5)]
fn parse() {}

#[tickprof::profile(name = tokenize)]
fn tokenize() {}

fn main() {
    parse();
    tokenize();
}
