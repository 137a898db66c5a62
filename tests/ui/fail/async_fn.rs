#[tickprof::profile]
pub async fn fetch(x: u32) -> u32 {
    x
}

fn main() {
    let _ = fetch(1);
}
