// C-variadic definitions are unstable; #[profile] rejects them on its own.
#[tickprof::profile]
pub unsafe extern "C" fn sum(count: i32, _args: ...) -> i32 {
    count
}

fn main() {}
