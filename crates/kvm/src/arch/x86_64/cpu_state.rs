//! The boot vCPU's register state, from a loader's description.

use kvm_bindings::{kvm_regs, kvm_segment, kvm_sregs};

/// A segment, in the fields KVM wants (the loader decodes them from the GDT
/// it wrote, so the hidden state matches what the guest would load).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Segment {
    /// Selector.
    pub selector: u16,
    /// Base address.
    pub base: u64,
    /// Limit in bytes (already scaled by granularity).
    pub limit: u32,
    /// Descriptor type (4 bits).
    pub type_: u8,
    /// Code/data (1) or system (0).
    pub s: u8,
    /// Privilege level.
    pub dpl: u8,
    /// Present.
    pub present: u8,
    /// Available bit.
    pub avl: u8,
    /// 64-bit code.
    pub l: u8,
    /// Default operand size 32-bit.
    pub db: u8,
    /// Granularity 4 KiB.
    pub g: u8,
}

impl Segment {
    fn to_kvm(self) -> kvm_segment {
        kvm_segment {
            base: self.base,
            limit: self.limit,
            selector: self.selector,
            type_: self.type_,
            present: self.present,
            dpl: self.dpl,
            db: self.db,
            s: self.s,
            l: self.l,
            g: self.g,
            avl: self.avl,
            unusable: 0,
            padding: 0,
        }
    }
}

/// Which mode the boot vCPU starts in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuMode {
    /// 32-bit flat protected mode, paging off (Multiboot).
    Protected32,
    /// 64-bit long mode, paging on with `cr3` (ELF64 images).
    Long64 {
        /// Page-table root the loader wrote.
        cr3: u64,
    },
}

/// Everything needed to start the boot vCPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BootCpuState {
    /// Mode.
    pub mode: CpuMode,
    /// Entry point.
    pub rip: u64,
    /// Stack pointer.
    pub rsp: u64,
    /// EAX/RAX (0x2BADB002 for Multiboot).
    pub rax: u64,
    /// EBX/RBX (address of the Multiboot info block).
    pub rbx: u64,
    /// ESI/RSI (address of `boot_params` for a Linux bzImage, else 0).
    pub rsi: u64,
    /// GDT base.
    pub gdt_base: u64,
    /// GDT limit.
    pub gdt_limit: u16,
    /// CS.
    pub code: Segment,
    /// DS, ES, FS, GS, SS.
    pub data: Segment,
}

const CR0_PE: u64 = 1 << 0;
const CR0_MP: u64 = 1 << 1;
const CR0_ET: u64 = 1 << 4;
const CR0_NE: u64 = 1 << 5;
const CR0_WP: u64 = 1 << 16;
const CR0_PG: u64 = 1 << 31;
const CR4_PAE: u64 = 1 << 5;
const EFER_LME: u64 = 1 << 8;
const EFER_LMA: u64 = 1 << 10;

impl BootCpuState {
    /// Apply to special registers read from the vCPU (keeping what KVM set
    /// up, such as the APIC base and the TR/LDT defaults).
    pub fn apply_sregs(&self, s: &mut kvm_sregs) {
        s.cs = self.code.to_kvm();
        let d = self.data.to_kvm();
        s.ds = d;
        s.es = d;
        s.fs = d;
        s.gs = d;
        s.ss = d;
        s.gdt.base = self.gdt_base;
        s.gdt.limit = self.gdt_limit;
        match self.mode {
            CpuMode::Protected32 => {
                // What a Multiboot loader leaves: PE and ET, nothing else.
                s.cr0 = CR0_PE | CR0_ET;
                s.cr3 = 0;
                s.cr4 = 0;
                s.efer = 0;
            }
            CpuMode::Long64 { cr3 } => {
                s.cr0 = CR0_PE | CR0_MP | CR0_ET | CR0_NE | CR0_WP | CR0_PG;
                s.cr3 = cr3;
                s.cr4 = CR4_PAE;
                s.efer = EFER_LME | EFER_LMA;
            }
        }
    }

    /// The general registers.
    pub fn regs(&self) -> kvm_regs {
        kvm_regs {
            rip: self.rip,
            rsp: self.rsp,
            rax: self.rax,
            rbx: self.rbx,
            rsi: self.rsi,
            // Bit 1 is reserved-one; IF stays clear, as Multiboot requires.
            rflags: 0x2,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(mode: CpuMode) -> BootCpuState {
        BootCpuState {
            mode,
            rip: 0x4000bc,
            rsp: 0x8000,
            rax: 0x2bad_b002,
            rbx: 0x9000,
            rsi: 0x9100,
            gdt_base: 0x1000,
            gdt_limit: 31,
            code: Segment {
                selector: 8,
                limit: 0xffff_ffff,
                type_: 0xb,
                s: 1,
                present: 1,
                db: 1,
                g: 1,
                ..Default::default()
            },
            data: Segment {
                selector: 0x10,
                limit: 0xffff_ffff,
                type_: 0x3,
                s: 1,
                present: 1,
                db: 1,
                g: 1,
                ..Default::default()
            },
        }
    }

    #[test]
    fn protected_mode_has_paging_off_and_flat_segments() {
        let mut s = kvm_sregs::default();
        state(CpuMode::Protected32).apply_sregs(&mut s);
        assert_eq!(s.cr0, 0x11);
        assert_eq!(s.efer, 0);
        assert_eq!(s.cs.selector, 8);
        assert_eq!(s.ss.selector, 0x10);
        assert_eq!(s.ds.limit, 0xffff_ffff);
        let r = state(CpuMode::Protected32).regs();
        assert_eq!(
            (r.rip, r.rax, r.rbx, r.rsi, r.rflags),
            (0x4000bc, 0x2bad_b002, 0x9000, 0x9100, 2)
        );
    }

    #[test]
    fn long_mode_turns_on_paging_pae_and_lma() {
        let mut s = kvm_sregs::default();
        state(CpuMode::Long64 { cr3: 0x2000 }).apply_sregs(&mut s);
        assert_eq!(s.cr3, 0x2000);
        assert_ne!(s.cr0 & CR0_PG, 0);
        assert_ne!(s.cr4 & CR4_PAE, 0);
        assert_eq!(s.efer, EFER_LME | EFER_LMA);
    }
}
