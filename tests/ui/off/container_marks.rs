// With profiling off, container marks still check their options and the
// inner marks', and remove the inner marks: `skip` and own options compile
// where they are valid, and only the real errors are reported.
use tickprof::profile;

struct S;

#[profile]
impl S {
    #[profile(skip)]
    fn skipped(&self) {}

    #[tickprof::profile(name = "own")]
    fn own(&self) {}

    #[profile(fail)]
    fn not_result(&self) -> u32 {
        1
    }
}

#[profile(name = "m")]
mod m {
    #[profile(skip)]
    pub fn f() {}
}

fn main() {
    S.skipped();
    S.own();
    let _ = S.not_result();
    m::f();
}
