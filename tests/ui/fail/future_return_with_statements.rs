use std::future::Future;
use std::pin::Pin;

// Code before the returned future would escape the timer.
#[tickprof::profile]
fn later(x: u32) -> impl Future<Output = u32> {
    let y = x + 1;
    async move { y }
}

// A future that is not an async block cannot be wrapped where it is made.
#[tickprof::profile]
fn ready(x: u32) -> impl Future<Output = u32> + Send {
    std::future::ready(x)
}

// The async-trait shape, but the boxed future is not an async block.
#[tickprof::profile]
fn boxed(x: u32) -> Pin<Box<dyn Future<Output = u32> + Send>> {
    Box::pin(std::future::ready(x))
}

fn main() {
    drop(later(1));
    drop(ready(1));
    drop(boxed(1));
}
