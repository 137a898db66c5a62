#[tickprof::profile(fail)]
fn count(s: &str) -> usize {
    s.len()
}

#[tickprof::profile(fail)]
fn unit() {}

#[tickprof::profile(fail)]
async fn later() -> Result<(), tickprof::Injected> {
    Ok(())
}

#[tickprof::profile(fail = true)]
fn valued() -> Result<(), tickprof::Injected> {
    Ok(())
}

fn main() {
    count("a");
    unit();
    drop(later());
    let _ = valued();
}
