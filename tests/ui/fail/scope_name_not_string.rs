fn main() {
    tickprof::prof_scope!(42);
    let _g = tickprof::prof_guard!(b"bytes");
}
