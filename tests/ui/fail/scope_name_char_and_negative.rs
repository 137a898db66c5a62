fn main() {
    tickprof::prof_scope!('c');
    let _g = tickprof::prof_guard!(-1);
}
