//! Instruction counts of one marked call, for callgrind.
//!
//! `bash scripts/callgrind_overhead.sh` runs this under
//! `valgrind --tool=callgrind` and prints instructions per call of the
//! unmarked function, the floor (two `rdtsc`) and `#[profile]`.

use std::hint::black_box;

const CALLS: u64 = 1_000_000;

#[inline(always)]
fn rdtsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `rdtsc` exists on every x86_64 CPU.
    unsafe {
        core::arch::x86_64::_rdtsc()
    }
    #[cfg(not(target_arch = "x86_64"))]
    0
}

/// The floor: two clock reads and nothing else.
struct Floor(u64);

impl Drop for Floor {
    #[inline(always)]
    fn drop(&mut self) {
        black_box(rdtsc().wrapping_sub(self.0));
    }
}

#[inline(never)]
fn probe_unmarked(x: u64) -> u64 {
    black_box(x) + 1
}

#[inline(never)]
fn probe_floor(x: u64) -> u64 {
    let _g = Floor(rdtsc());
    black_box(x) + 1
}

#[inline(never)]
#[tickprof::profile]
fn probe_marked(x: u64) -> u64 {
    black_box(x) + 1
}

fn main() {
    let mut s = 0u64;
    for i in 0..CALLS {
        s = s.wrapping_add(probe_unmarked(black_box(i)));
    }
    for i in 0..CALLS {
        s = s.wrapping_add(probe_floor(black_box(i)));
    }
    for i in 0..CALLS {
        s = s.wrapping_add(probe_marked(black_box(i)));
    }
    println!("{s}");
}
