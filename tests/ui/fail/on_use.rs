#[tickprof::profile]
use std::collections::HashMap;

fn main() {
    let _: HashMap<u8, u8> = HashMap::new();
}
