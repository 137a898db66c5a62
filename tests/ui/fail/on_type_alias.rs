#[tickprof::profile]
type Id = u32;

fn main() {
    let _: Id = 1;
}
