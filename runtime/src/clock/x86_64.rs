//! x86_64: the time-stamp counter, read with plain `rdtsc`; its facts from
//! cpuid (raw-cpuid's named accessors).

use super::CounterFacts;

/// Reads the time-stamp counter.
///
/// Plain `rdtsc`, no fence: `rdtscp` (or `lfence; rdtsc`) at exit would
/// order the end stamp after the body's last instruction, at twice the
/// cost (≈19 ns vs ≈10 ns on the machines measured), and that cost lands
/// inside every measured interval. The out-of-order window a plain read
/// may skip is a few dozen cycles, the same for every call, and falls in
/// the instrumentation's cost the sampler measures.
#[inline(always)]
pub(crate) fn ticks() -> u64 {
    // SAFETY: `rdtsc` exists on every x86_64 CPU and has no memory effects.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// The counter this module reads.
pub(crate) const SOURCE: crate::report::ClockSource = crate::report::ClockSource::Tsc;

/// TSC facts from cpuid: whether it is invariant, and a nominal frequency
/// with the leaf it came from (0x15, the hypervisor leaf, then 0x16).
pub(crate) fn facts() -> CounterFacts {
    let cpuid = raw_cpuid::CpuId::new();
    let invariant_tsc = cpuid
        .get_advanced_power_mgmt_info()
        .map(|a| a.has_invariant_tsc());
    let mut nominal = None;
    if let Some(hz) = cpuid.get_tsc_info().and_then(|t| t.tsc_frequency()) {
        if hz > 0 {
            nominal = Some((hz as f64, "cpuid leaf 0x15"));
        }
    }
    if nominal.is_none() {
        if let Some(khz) = cpuid.get_hypervisor_info().and_then(|h| h.tsc_frequency()) {
            if khz > 0 {
                nominal = Some((f64::from(khz) * 1e3, "cpuid hypervisor leaf 0x40000010"));
            }
        }
    }
    if nominal.is_none() {
        if let Some(mhz) = cpuid
            .get_processor_frequency_info()
            .map(|f| f.processor_base_frequency())
        {
            if mhz > 0 {
                nominal = Some((f64::from(mhz) * 1e6, "cpuid leaf 0x16 (base frequency)"));
            }
        }
    }
    CounterFacts {
        invariant_tsc,
        nominal,
    }
}
