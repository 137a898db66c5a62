fn main() {
    let _g = tickprof::prof_guard!("a", "b");
}
