// Every problem is reported at once, each on its own token.
#[tickprof::profile(label = "a", name = 3, name = "b", crate)]
const fn parse() {}

fn main() {}
