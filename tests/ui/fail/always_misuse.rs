use tickprof::profile;

#[profile(always = true)]
fn with_value() {}

#[profile(always, always)]
fn twice() {}

struct S;

#[profile(always)]
impl S {
    #[profile(skip, always)]
    fn f(&self) {}
}

fn main() {
    with_value();
    twice();
    S.f();
}
