fn main() {
    tickprof::prof_scope!("");
    let _g = tickprof::prof_guard!("  ");
}
