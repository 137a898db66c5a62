struct Parser;

#[tickprof::profile]
impl Parser {
    fn parse(&self) -> u32 {
        1
    }
}

fn main() {
    let _ = Parser.parse();
}
