//! arm64 register ids for KVM_{GET,SET}_ONE_REG (Documentation/virt/kvm/
//! api.rst, "ARM64 registers"): core registers are `KVM_REG_ARM64 |
//! KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE | (offset in struct kvm_regs / 4)`;
//! system registers are `KVM_REG_ARM64 | KVM_REG_SIZE_U64 |
//! KVM_REG_ARM64_SYSREG | op0<<14 | op1<<11 | CRn<<7 | CRm<<3 | op2`.
//! kvm-bindings does not export these macros' values, so they are here.

use std::mem::offset_of;

use kvm_bindings::{kvm_regs, user_pt_regs};

/// KVM_REG_ARM64 (the architecture field of a register id).
pub const KVM_REG_ARM64: u64 = 0x6000_0000_0000_0000;
/// KVM_REG_SIZE_U64.
pub const KVM_REG_SIZE_U64: u64 = 0x0030_0000_0000_0000;
/// KVM_REG_ARM_CORE (coprocessor field 0x10).
pub const KVM_REG_ARM_CORE: u64 = 0x0010 << 16;
/// KVM_REG_ARM64_SYSREG (coprocessor field 0x13).
pub const KVM_REG_ARM64_SYSREG: u64 = 0x0013 << 16;

/// PSTATE at entry: EL1h with D, A, I and F masked (arm64 booting.rst:
/// "all forms of interrupts must be masked"; PSR_MODE_EL1h | PSR_{D,A,I,F}_BIT).
pub const PSTATE_EL1H_DAIF_MASKED: u64 = 0x3c5;

/// The id of the core register at byte `offset` of `struct kvm_regs`.
pub const fn core_reg(offset: usize) -> u64 {
    KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE | (offset / 4) as u64
}

/// The id of general-purpose register `x<n>` (n < 31).
pub const fn x(n: usize) -> u64 {
    core_reg(offset_of!(kvm_regs, regs) + offset_of!(user_pt_regs, regs) + n * 8)
}

/// The id of SP_EL0 (`regs.sp`).
pub const SP_EL0: u64 = core_reg(offset_of!(kvm_regs, regs) + offset_of!(user_pt_regs, sp));
/// The id of the PC.
pub const PC: u64 = core_reg(offset_of!(kvm_regs, regs) + offset_of!(user_pt_regs, pc));
/// The id of PSTATE.
pub const PSTATE: u64 = core_reg(offset_of!(kvm_regs, regs) + offset_of!(user_pt_regs, pstate));
/// The id of SP_EL1.
pub const SP_EL1: u64 = core_reg(offset_of!(kvm_regs, sp_el1));

/// The id of a system register from its encoding.
pub const fn sysreg(op0: u64, op1: u64, crn: u64, crm: u64, op2: u64) -> u64 {
    KVM_REG_ARM64
        | KVM_REG_SIZE_U64
        | KVM_REG_ARM64_SYSREG
        | (op0 << 14)
        | (op1 << 11)
        | (crn << 7)
        | (crm << 3)
        | op2
}

/// MPIDR_EL1 (S3_0_C0_C0_5): the affinity the device tree's cpu nodes carry.
pub const MPIDR_EL1: u64 = sysreg(3, 0, 0, 0, 5);
/// ESR_EL1 (S3_0_C5_C2_0), for the dump.
pub const ESR_EL1: u64 = sysreg(3, 0, 5, 2, 0);
/// FAR_EL1 (S3_0_C6_C0_0), for the dump.
pub const FAR_EL1: u64 = sysreg(3, 0, 6, 0, 0);

/// The affinity bits of MPIDR_EL1 (Aff3 at 39:32, Aff2..Aff0 at 23:0): what
/// a device tree `reg` of a cpu node holds.
pub const MPIDR_AFFINITY_MASK: u64 = 0xff_00ff_ffff;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_register_ids_match_the_kernel_layout() {
        // Values as the kernel's KVM_REG_ARM_CORE_REG() gives them (and
        // other VMMs hard-code): x0 at offset 0, pc at 256, pstate at 264.
        assert_eq!(x(0), 0x6030_0000_0010_0000);
        assert_eq!(x(1), 0x6030_0000_0010_0002);
        assert_eq!(x(30), 0x6030_0000_0010_003c);
        assert_eq!(SP_EL0, 0x6030_0000_0010_003e);
        assert_eq!(PC, 0x6030_0000_0010_0040);
        assert_eq!(PSTATE, 0x6030_0000_0010_0042);
        assert_eq!(SP_EL1, 0x6030_0000_0010_0044);
    }

    #[test]
    fn system_register_ids_carry_their_encoding() {
        assert_eq!(MPIDR_EL1, 0x6030_0000_0013_c005);
        assert_eq!(ESR_EL1, 0x6030_0000_0013_c290);
        assert_eq!(FAR_EL1, 0x6030_0000_0013_c300);
    }
}
