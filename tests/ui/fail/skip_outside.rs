use tickprof::profile;

#[profile(skip)]
fn alone() {}

struct S;

#[profile(skip)]
impl S {
    fn f(&self) {}
}

fn main() {
    alone();
    S.f();
}
