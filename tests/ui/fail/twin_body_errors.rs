// `#[profile]` emits a short body twice (a plain copy for profiling off or
// paused, and a closure timed out of line): a type error and a lint are
// reported once, on the user's code; a borrow-check error once per copy
// (the closure's names a moved argument `value`).
#[tickprof::profile]
fn add(x: u8) -> u8 {
    x + "one"
}

#[tickprof::profile]
fn borrow(v: Vec<u8>) -> usize {
    let r = &v;
    drop(v);
    r.len()
}

#[tickprof::profile]
fn unused(x: u8) -> u8 {
    let y = 1;
    x
}

fn main() {
    add(1);
    borrow(vec![]);
    unused(1);
}
