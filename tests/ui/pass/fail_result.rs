//! `#[profile(fail)]` on functions returning `Result`, methods and generics.
#![forbid(unsafe_code)]
#![deny(warnings, clippy::pedantic)]

#[derive(Debug)]
pub enum MyError {
    Injected(tickprof::Injected),
}

impl From<tickprof::Injected> for MyError {
    fn from(e: tickprof::Injected) -> Self {
        MyError::Injected(e)
    }
}

/// Reads.
///
/// # Errors
/// An injected one.
#[tickprof::profile(fail)]
pub fn read(x: u8) -> Result<u8, MyError> {
    if x == 0 {
        return Ok(1);
    }
    Ok(x)
}

/// A thing.
pub struct Thing;

impl Thing {
    /// Opens.
    ///
    /// # Errors
    /// An injected one.
    #[tickprof::profile(fail, name = "open")]
    pub fn open<T: Default>(&self) -> std::result::Result<T, Box<dyn std::error::Error>> {
        Ok(T::default())
    }
}

fn main() {
    let _ = read(3);
    let _ = Thing.open::<u8>();
}
