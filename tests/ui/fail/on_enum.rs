#[tickprof::profile]
enum Shape {
    Circle,
}

fn main() {
    let _ = Shape::Circle;
}
