// With the `enabled` feature off, the scope macros reject what they reject
// when it is on (`cargo test --no-default-features --test ui`).
fn main() {
    tickprof::prof_scope!(5);
    let _g = tickprof::prof_guard!(b"bytes");
    tickprof::prof_scope!("");
    tickprof::prof_scope!("a", "b");
}
