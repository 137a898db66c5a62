use tickprof::profile;

struct S;

#[profile]
impl S {
    #[profile(skip, name = "s")]
    fn skipped(&self) {}

    #[profile(fail)]
    fn not_result(&self) -> u32 {
        1
    }

    #[profile]
    const fn constant() -> u32 {
        1
    }

    #[profile(nam = "x")]
    fn typo(&self) {}

    #[profile]
    #[tickprof::profile(name = "twice")]
    fn twice(&self) {}

    #[profile = "x"]
    fn name_value(&self) {}
}

#[profile]
trait T {
    #[profile]
    fn needs_body(&self);

    #[profile(skip)]
    fn skipped_decl(&self);
}

#[profile]
mod m {
    #[profile(name = "n")]
    mod nested {
        #[profile(skip)]
        fn quiet() {}
    }

    #[profile(skip, crate = tickprof)]
    impl super::S {}
}

fn main() {}
