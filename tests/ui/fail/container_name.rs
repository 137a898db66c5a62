struct Parser;

#[tickprof::profile(name = "parser")]
impl Parser {
    fn parse(&self) -> u32 {
        1
    }
}

fn main() {
    let _ = Parser.parse();
}
