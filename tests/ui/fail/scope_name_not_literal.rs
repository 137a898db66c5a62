fn main() {
    let label = "dynamic";
    tickprof::prof_scope!(label);
}
