//! aarch64: the generic timer's virtual counter.
//!
//! CNTVCT_EL0 ticks at CNTFRQ_EL0 (often 25 MHz to 1 GHz, not the CPU's
//! clock); Linux lets EL0 read it. The PMU's cycle counter would count CPU
//! cycles but is not readable from user space by default.

/// What [`cycles`] reads, for reports.
pub const COUNTER_NAME: &str = "CNTVCT_EL0";
/// What [`cycles`] counts, as `--stat`'s headings name it: the generic
/// timer's ticks (CNTFRQ_EL0 per second), not CPU cycles.
pub const COUNTER_UNITS: &str = "CNTVCT_EL0 ticks";

/// The virtual counter, after an ISB so it is not read early.
#[inline(always)]
pub fn cycles() -> u64 {
    let v: u64;
    // SAFETY: ISB and a read of CNTVCT_EL0 (EL0-accessible under Linux)
    // touch no memory and no other register.
    unsafe {
        core::arch::asm!("isb", "mrs {v}, cntvct_el0", v = out(reg) v, options(nomem, nostack));
    }
    v
}
