//! Busy-waits for a known wall time (shared by the timing tests).

use std::time::{Duration, Instant};

/// Spins until `d` has elapsed on `Instant`.
pub fn spin(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}
