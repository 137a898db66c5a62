//! aarch64: the generic timer's virtual count, `CNTVCT_EL0`, readable from
//! user space on Linux, macOS and Windows; its frequency from `CNTFRQ_EL0`.
//!
//! The count runs at a constant rate whatever the core's clock does, and
//! is the same on every core (the architecture requires both). Its rate
//! can be low beside a TSC's: 24 MHz on Apple silicon (one tick ≈ 42 ns);
//! Armv8.6 and later fix it at 1 GHz. A call shorter than a few ticks is
//! not resolved: the recorder's resolution (the larger of a read's cost
//! and the counter's smallest step) sees the tick, and such a site is
//! counted rather than timed.

use super::CounterFacts;

/// Reads the virtual count, after an `isb`.
///
/// The architecture lets a read of `CNTVCT_EL0` happen speculatively and
/// out of order with the instructions around it. `isb` before the read
/// makes it wait for the instructions before it, as the Linux kernel's own
/// reads do (`__arch_counter_get_cntvct`): without it, two reads in program
/// order need not return ordered values, and an end stamp may be taken
/// before the body's last instructions. Nothing orders the read with what
/// follows it (the kernel adds a false dependency there): a start stamp may
/// be taken a few instructions into the body, which, like a plain `rdtsc`
/// on x86_64, falls in the instrumentation's cost the sampler measures. The asm has no `nomem`
/// option: like the `rdtsc` intrinsic, it is a compiler barrier too, so
/// that the body's memory accesses stay between the two stamps.
#[inline(always)]
pub(crate) fn ticks() -> u64 {
    let t: u64;
    // SAFETY: `isb` only synchronises the instruction stream; `CNTVCT_EL0`
    // is readable at EL0 on the operating systems Rust supports on aarch64
    // (their kernels set CNTKCTL_EL1.EL0VCTEN); neither touches the stack
    // or the flags.
    unsafe {
        core::arch::asm!(
            "isb",
            "mrs {t}, cntvct_el0",
            t = out(reg) t,
            options(nostack, preserves_flags),
        );
    }
    t
}

/// The counter this module reads.
pub(crate) const SOURCE: crate::report::ClockSource = crate::report::ClockSource::Cntvct;

/// The count's frequency as `CNTFRQ_EL0` states it (firmware sets it; it
/// is wrong on some boards, so the report checks it against the OS clock).
/// No invariant-TSC fact: the count is not a TSC.
pub(crate) fn facts() -> CounterFacts {
    let hz: u64;
    // SAFETY: `CNTFRQ_EL0` is readable at EL0 wherever `CNTVCT_EL0` is;
    // reading it has no side effect and touches no memory.
    unsafe {
        core::arch::asm!(
            "mrs {f}, cntfrq_el0",
            f = out(reg) hz,
            options(nomem, nostack, preserves_flags),
        );
    }
    // The register's upper 32 bits are reserved (read as zero).
    let hz = hz & u64::from(u32::MAX);
    CounterFacts {
        invariant_tsc: None,
        nominal: (hz > 0).then_some((hz as f64, "CNTFRQ_EL0")),
    }
}
