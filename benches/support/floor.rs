//! The floor of any TSC profiler: a guard that reads `rdtsc` at entry and at
//! drop and `black_box`es the delta. Shared by `benches/overhead.rs` and
//! `examples/overhead_probe.rs`.

use std::hint::black_box;

/// Reads the time-stamp counter (0 on targets without one).
#[inline(always)]
pub fn rdtsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `rdtsc` exists on every x86_64 CPU.
    unsafe {
        core::arch::x86_64::_rdtsc()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

/// Two clock reads and nothing else.
pub struct Floor(u64);

impl Floor {
    /// Reads the clock.
    #[inline(always)]
    pub fn new() -> Floor {
        Floor(rdtsc())
    }
}

impl Drop for Floor {
    #[inline(always)]
    fn drop(&mut self) {
        black_box(rdtsc().wrapping_sub(self.0));
    }
}
