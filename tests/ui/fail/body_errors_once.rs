// `#[profile]` emits a short body twice (a plain copy for profiling off):
// a type error or a borrow error in it is reported once, on the user's code.
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
