use tickprof::profile;

struct S;

#[profile(nam = "s")]
impl S {
    #[profile(skip)]
    fn f(&self) {}

    fn g(&self) {}
}

fn main() {
    S.f();
    S.g();
}
