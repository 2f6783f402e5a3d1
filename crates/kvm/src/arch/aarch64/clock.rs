//! The guest's virtual counter against the host's: the vCPU's
//! KVM_REG_ARM_TIMER_CNT (the guest's CNTVCT) read between two reads of
//! the host's CNTVCT_EL0, so an exit's host stamps can be put on the
//! guest's time line. (Debian's 6.1 kernel has no
//! KVM_ARM_SET_COUNTER_OFFSET to set the offset instead.)

use kvm_ioctls::VcpuFd;
use trapline_abi::ClockAlign;

use super::regs::sysreg;

/// KVM_REG_ARM_TIMER_CNT (S3_3_C14_C3_2: the uapi swaps CNT's and
/// CVAL's encodings, and keeps them so).
const TIMER_CNT: u64 = sysreg(3, 3, 14, 3, 2);

/// Tries for the tightest bracket.
const TRIES: usize = 16;

/// The guest's counter minus the host's (mod 2^64), its uncertainty in
/// ticks (half the tightest bracket of host reads around the register
/// read) and how it was found; or why it could not be.
pub fn clock_offset(vcpu: &VcpuFd) -> Result<(u64, u64, ClockAlign), String> {
    let mut best: Option<(u64, u64)> = None;
    for _ in 0..TRIES {
        let mut b = [0u8; 8];
        let before = trapline_bus::cycles();
        vcpu.get_one_reg(TIMER_CNT, &mut b)
            .map_err(|e| format!("KVM_GET_ONE_REG(KVM_REG_ARM_TIMER_CNT): {e}"))?;
        let after = trapline_bus::cycles();
        let guest = u64::from_le_bytes(b);
        let width = after.wrapping_sub(before);
        let mid = before.wrapping_add(width / 2);
        if best.is_none_or(|(w, _)| width < w) {
            best = Some((width, guest.wrapping_sub(mid)));
        }
    }
    let (width, offset) = best.ok_or("no timer-count read")?;
    Ok((offset, width.div_ceil(2), ClockAlign::TimerCount))
}
