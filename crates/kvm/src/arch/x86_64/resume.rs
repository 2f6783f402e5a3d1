//! Where firmware leaves the vCPUs when the machine wakes from ACPI S3:
//! the boot vCPU in real mode at the FACS firmware waking vector, the
//! others waiting for INIT/SIPI, as after a reset. RAM is untouched.
//!
//! trapline has no firmware to run on resume, so this sets the state
//! SeaBIOS hands over directly: CS = vector >> 4, IP = vector & 0xF, the
//! data segments and SS 0 (SeaBIOS far-calls the vector with zeroed
//! segment registers), interrupts off, paging and long mode off, the
//! local APIC back in xAPIC mode at its default base.

use kvm_bindings::{
    kvm_mp_state, kvm_regs, kvm_segment, kvm_sregs, KVM_MP_STATE_INIT_RECEIVED,
    KVM_MP_STATE_RUNNABLE,
};
use kvm_ioctls::VcpuFd;

use crate::KvmError;

/// Where one vCPU goes on resume.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResumeAt {
    /// The boot vCPU: real mode at this FACS firmware waking vector.
    WakingVector(u32),
    /// An application processor: reset state, waiting for INIT/SIPI.
    WaitForSipi,
}

/// IA32_APIC_BASE: enabled, xAPIC mode, at the machine's LAPIC page.
const APIC_BASE_ENABLED: u64 = trapline_abi::LAPIC_BASE | (1 << 11);
/// IA32_APIC_BASE.BSP.
const APIC_BASE_BSP: u64 = 1 << 8;
/// CR0 after reset, without the cache-disable bits (CD/NW would make
/// guest memory uncacheable under some hosts' KVM).
const CR0_ET: u64 = 1 << 4;
/// Real-mode segment limit.
const REAL_LIMIT: u32 = 0xffff;
/// The reset CS of an AP (its SIPI replaces it).
const RESET_CS: u16 = 0xf000;

fn real_segment(selector: u16, code: bool) -> kvm_segment {
    kvm_segment {
        base: u64::from(selector) << 4,
        limit: REAL_LIMIT,
        selector,
        // Accessed, read/execute code or read/write data.
        type_: if code { 0xb } else { 0x3 },
        present: 1,
        dpl: 0,
        db: 0,
        s: 1,
        l: 0,
        g: 0,
        avl: 0,
        unusable: 0,
        padding: 0,
    }
}

/// The special registers for real mode with `cs`, keeping what KVM must
/// keep (the interrupt bitmap is cleared: nothing is pending on resume).
pub fn real_mode_sregs(mut s: kvm_sregs, cs: u16, bsp: bool) -> kvm_sregs {
    s.cs = real_segment(cs, true);
    if !bsp {
        // The reset CS base of the reset vector; the SIPI overwrites it.
        s.cs.base = 0xffff_0000;
    }
    let data = real_segment(0, false);
    s.ds = data;
    s.es = data;
    s.fs = data;
    s.gs = data;
    s.ss = data;
    s.tr = kvm_segment {
        limit: REAL_LIMIT,
        type_: 0xb, // busy 32-bit TSS, as after reset
        present: 1,
        ..Default::default()
    };
    s.ldt = kvm_segment {
        limit: REAL_LIMIT,
        type_: 0x2,
        present: 1,
        ..Default::default()
    };
    s.gdt.base = 0;
    s.gdt.limit = 0xffff;
    s.idt.base = 0;
    s.idt.limit = 0x3ff;
    s.cr0 = CR0_ET;
    s.cr2 = 0;
    s.cr3 = 0;
    s.cr4 = 0;
    s.cr8 = 0;
    s.efer = 0;
    s.apic_base = APIC_BASE_ENABLED | if bsp { APIC_BASE_BSP } else { 0 };
    s.interrupt_bitmap = [0; 4];
    s
}

/// Put `vcpu` where `at` says. Runs on the vCPU's own thread, between two
/// KVM_RUNs.
pub fn resume(vcpu: &VcpuFd, at: ResumeAt) -> Result<(), KvmError> {
    let sregs = vcpu
        .get_sregs()
        .map_err(KvmError::ioctl("KVM_GET_SREGS (resume)"))?;
    let (sregs, rip, mp_state) = match at {
        ResumeAt::WakingVector(v) => (
            real_mode_sregs(sregs, (v >> 4) as u16, true),
            u64::from(v & 0xf),
            KVM_MP_STATE_RUNNABLE,
        ),
        ResumeAt::WaitForSipi => (
            real_mode_sregs(sregs, RESET_CS, false),
            0xfff0,
            KVM_MP_STATE_INIT_RECEIVED,
        ),
    };
    vcpu.set_sregs(&sregs)
        .map_err(KvmError::ioctl("KVM_SET_SREGS (resume)"))?;
    vcpu.set_regs(&kvm_regs {
        rip,
        // Bit 1 is reserved-one; IF clear.
        rflags: 0x2,
        ..Default::default()
    })
    .map_err(KvmError::ioctl("KVM_SET_REGS (resume)"))?;
    vcpu.set_mp_state(kvm_mp_state { mp_state })
        .map_err(KvmError::ioctl("KVM_SET_MP_STATE (resume)"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boot_vcpu_resumes_in_real_mode_at_the_vector() {
        // Long mode, x2APIC.
        let before = kvm_sregs {
            cr0: 0x8000_0011,
            efer: 0x500,
            cr4: 0x20,
            apic_base: 0xfee0_0d00,
            ..Default::default()
        };
        let s = real_mode_sregs(before, 0x100, true);
        assert_eq!(
            (s.cs.selector, s.cs.base, s.cs.limit),
            (0x100, 0x1000, 0xffff)
        );
        assert_eq!((s.ds.selector, s.ds.base, s.ss.base), (0, 0, 0));
        assert_eq!(s.cs.db, 0, "16-bit code");
        assert_eq!((s.cr0, s.cr4, s.efer), (CR0_ET, 0, 0));
        assert_eq!(s.apic_base, 0xfee0_0900);
        assert_eq!(s.idt.limit, 0x3ff);
        let ap = real_mode_sregs(before, RESET_CS, false);
        assert_eq!(ap.apic_base, 0xfee0_0800);
        assert_eq!(ap.cs.base, 0xffff_0000);
    }
}
