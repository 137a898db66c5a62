#[derive(Debug)]
struct MyError;

#[tickprof::profile(fail)]
fn open() -> Result<(), MyError> {
    Ok(())
}

fn main() {
    let _ = open();
}
