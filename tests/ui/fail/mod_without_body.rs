#[tickprof::profile]
#[path = "modules/empty.rs"]
mod empty;

fn main() {
    empty::f();
}
