#[tickprof::profile(fail)]
mod io {
    pub fn read() -> Result<u8, std::io::Error> {
        Ok(1)
    }
}

#[tickprof::profile(fail, name = "t")]
trait Read {
    fn read(&self) -> Result<u8, std::io::Error> {
        Ok(1)
    }
}

fn main() {
    let _ = io::read();
}
