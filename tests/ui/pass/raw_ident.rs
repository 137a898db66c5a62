#![deny(warnings)]

use tickprof::profile;

#[profile]
fn r#match(r#type: u32) -> u32 {
    r#type + 1
}

struct R;

impl R {
    #[profile]
    fn r#fn(&self) -> &'static str {
        "fn"
    }
}

fn main() {
    assert_eq!(r#match(1), 2);
    assert_eq!(R.r#fn(), "fn");
}
