//! x86_64: the time-stamp counter.

/// What [`cycles`] reads, for reports.
pub const COUNTER_NAME: &str = "TSC";
/// What [`cycles`] counts, as `--stat`'s headings name it.
pub const COUNTER_UNITS: &str = "TSC cycles";

/// The TSC (RDTSC, not serialising: callers that need ordering fence it).
#[inline(always)]
pub fn cycles() -> u64 {
    // SAFETY: RDTSC has no memory effects; every x86_64 CPU has it.
    unsafe { core::arch::x86_64::_rdtsc() }
}
