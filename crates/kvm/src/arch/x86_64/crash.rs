//! What a person needs when KVM cannot run a guest: the internal error's
//! suberror by name, the registers, and the instruction bytes at RIP, laid
//! out the way QEMU prints them (`Code=… <f0> 48 …`) so the two can be read
//! side by side. Captured once, on the vCPU thread, after the final exit:
//! never on the hot path.

use std::fmt::Write;

use kvm_bindings::{kvm_regs, kvm_segment, kvm_sregs};
use kvm_ioctls::VcpuFd;
use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};

use crate::crash::CpuDump;

/// Bytes shown before RIP (QEMU shows 43).
pub const CODE_BEFORE: u64 = 43;
/// Bytes shown from RIP on, RIP's own included (QEMU shows 21).
pub const CODE_FROM_RIP: u64 = 21;

const EFER_LMA: u64 = 1 << 10;
const CR0_PE: u64 = 1;
const PAGE: u64 = 0x1000;

/// The bytes around RIP and where RIP falls in them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeWindow {
    /// The bytes that could be read, contiguous.
    pub bytes: Vec<u8>,
    /// Index of RIP's byte in `bytes`.
    pub rip_index: usize,
}

/// RIP as KVM reports it (after a triple fault), if readable.
pub fn pc(vcpu: &VcpuFd) -> Option<u64> {
    vcpu.get_regs().ok().map(|r| r.rip)
}

/// Capture `vcpu`'s state. `memory` lets the dump show the code at RIP;
/// without it (or where RIP's page is not RAM) the code line says why.
pub fn capture(vcpu: &VcpuFd, memory: Option<&GuestMemoryMmap>) -> CpuDump {
    let (regs, sregs) = match (vcpu.get_regs(), vcpu.get_sregs()) {
        (Ok(r), Ok(s)) => (r, s),
        (Err(e), _) | (_, Err(e)) => {
            return CpuDump(format!("(registers unreadable: {e})\n"));
        }
    };
    let code = memory.map(|m| code_window(vcpu, m, &regs, &sregs));
    CpuDump(render(&regs, &sregs, code.as_ref()))
}

/// The linear address of RIP: CS base + RIP, except in 64-bit mode where
/// CS's base is ignored, and in real mode where IP is 16 bits.
pub fn rip_linear(regs: &kvm_regs, sregs: &kvm_sregs) -> u64 {
    if sregs.efer & EFER_LMA != 0 && sregs.cs.l != 0 {
        regs.rip
    } else if sregs.cr0 & CR0_PE == 0 {
        sregs.cs.base.wrapping_add(regs.rip & 0xffff)
    } else {
        sregs.cs.base.wrapping_add(regs.rip) & 0xffff_ffff
    }
}

/// Read the bytes around RIP, translating each page through the vCPU's
/// own page tables (KVM_TRANSLATE). Bytes whose page is not mapped or not
/// RAM end the window on that side.
fn code_window(
    vcpu: &VcpuFd,
    memory: &GuestMemoryMmap,
    regs: &kvm_regs,
    sregs: &kvm_sregs,
) -> Result<CodeWindow, String> {
    let rip = rip_linear(regs, sregs);
    let read = |linear: u64| -> Option<u8> {
        let t = vcpu.translate_gva(linear & !(PAGE - 1)).ok()?;
        if t.valid == 0 {
            return None;
        }
        let gpa = t.physical_address + (linear & (PAGE - 1));
        memory.read_obj::<u8>(GuestAddress(gpa)).ok()
    };
    read_window(rip, read).ok_or_else(|| {
        format!("RIP's page (linear {rip:#x}) is not mapped to guest RAM: code unavailable")
    })
}

/// The window [rip - CODE_BEFORE, rip + CODE_FROM_RIP) as far as `read`
/// gives bytes contiguously on each side of RIP; `None` if RIP's own byte
/// is unreadable.
pub fn read_window(rip: u64, mut read: impl FnMut(u64) -> Option<u8>) -> Option<CodeWindow> {
    let mut after = Vec::with_capacity(CODE_FROM_RIP as usize);
    for i in 0..CODE_FROM_RIP {
        match read(rip.wrapping_add(i)) {
            Some(b) => after.push(b),
            None => break,
        }
    }
    if after.is_empty() {
        return None;
    }
    let mut before = Vec::with_capacity(CODE_BEFORE as usize);
    for i in 1..=CODE_BEFORE.min(rip) {
        match read(rip - i) {
            Some(b) => before.push(b),
            None => break,
        }
    }
    before.reverse();
    let rip_index = before.len();
    before.extend(after);
    Some(CodeWindow {
        bytes: before,
        rip_index,
    })
}

/// Registers, segments, control registers and code, QEMU's layout.
pub fn render(
    regs: &kvm_regs,
    sregs: &kvm_sregs,
    code: Option<&Result<CodeWindow, String>>,
) -> String {
    let mut s = String::new();
    let gp = [
        ("RAX", regs.rax),
        ("RBX", regs.rbx),
        ("RCX", regs.rcx),
        ("RDX", regs.rdx),
        ("RSI", regs.rsi),
        ("RDI", regs.rdi),
        ("RBP", regs.rbp),
        ("RSP", regs.rsp),
        ("R8 ", regs.r8),
        ("R9 ", regs.r9),
        ("R10", regs.r10),
        ("R11", regs.r11),
        ("R12", regs.r12),
        ("R13", regs.r13),
        ("R14", regs.r14),
        ("R15", regs.r15),
    ];
    for row in gp.chunks(4) {
        let line: Vec<String> = row.iter().map(|(n, v)| format!("{n}={v:016x}")).collect();
        let _ = writeln!(s, "{}", line.join(" "));
    }
    let _ = writeln!(
        s,
        "RIP={:016x} RFL={:08x} CPL={} {}",
        regs.rip,
        regs.rflags,
        sregs.cs.dpl,
        mode_name(sregs)
    );
    for (name, seg) in [
        ("ES", &sregs.es),
        ("CS", &sregs.cs),
        ("SS", &sregs.ss),
        ("DS", &sregs.ds),
        ("FS", &sregs.fs),
        ("GS", &sregs.gs),
        ("LDT", &sregs.ldt),
        ("TR", &sregs.tr),
    ] {
        let _ = writeln!(s, "{name:<3}={}", segment(seg));
    }
    let _ = writeln!(
        s,
        "GDT=     {:016x} {:08x}",
        sregs.gdt.base, sregs.gdt.limit
    );
    let _ = writeln!(
        s,
        "IDT=     {:016x} {:08x}",
        sregs.idt.base, sregs.idt.limit
    );
    let _ = writeln!(
        s,
        "CR0={:08x} CR2={:016x} CR3={:016x} CR4={:08x}",
        sregs.cr0, sregs.cr2, sregs.cr3, sregs.cr4
    );
    let _ = writeln!(
        s,
        "EFER={:016x} APIC_BASE={:016x}",
        sregs.efer, sregs.apic_base
    );
    match code {
        None => {}
        Some(Ok(w)) => {
            let bytes: Vec<String> = w
                .bytes
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    if i == w.rip_index {
                        format!("<{b:02x}>")
                    } else {
                        format!("{b:02x}")
                    }
                })
                .collect();
            let _ = writeln!(s, "Code={}", bytes.join(" "));
        }
        Some(Err(why)) => {
            let _ = writeln!(s, "Code=({why})");
        }
    }
    s
}

fn mode_name(sregs: &kvm_sregs) -> &'static str {
    if sregs.cr0 & CR0_PE == 0 {
        "real mode"
    } else if sregs.efer & EFER_LMA != 0 {
        if sregs.cs.l != 0 {
            "64-bit mode"
        } else {
            "compatibility mode"
        }
    } else if sregs.cs.db != 0 {
        "32-bit protected mode"
    } else {
        "16-bit protected mode"
    }
}

fn segment(seg: &kvm_segment) -> String {
    // QEMU's word of attribute bits: type, S, DPL, P, AVL, L, D/B, G.
    let attrs = (u32::from(seg.type_) << 8)
        | (u32::from(seg.s) << 12)
        | (u32::from(seg.dpl) << 13)
        | (u32::from(seg.present) << 15)
        | (u32::from(seg.avl) << 20)
        | (u32::from(seg.l) << 21)
        | (u32::from(seg.db) << 22)
        | (u32::from(seg.g) << 23);
    format!(
        "{:04x} {:016x} {:08x} {:08x}{}",
        seg.selector,
        seg.base,
        seg.limit,
        attrs,
        if seg.unusable != 0 { " unusable" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_marks_rip_and_stops_at_unreadable_bytes() {
        // Memory readable from 0x1000 on: 43 bytes before a RIP far from
        // the edge, fewer next to it.
        let mem = |a: u64| (a >= 0x1000).then_some((a & 0xff) as u8);
        let w = read_window(0x2000, mem).unwrap();
        assert_eq!(w.bytes.len(), (CODE_BEFORE + CODE_FROM_RIP) as usize);
        assert_eq!(w.rip_index, CODE_BEFORE as usize);
        assert_eq!(w.bytes[w.rip_index], 0x00);
        let w = read_window(0x1005, mem).unwrap();
        assert_eq!(w.rip_index, 5);
        assert_eq!(w.bytes[5], 0x05);
        assert!(read_window(0x10, mem).is_none());
        // RIP at 0: nothing before it, no wrap-around.
        let w = read_window(0, |_| Some(0xf0)).unwrap();
        assert_eq!(w.rip_index, 0);
    }

    #[test]
    fn rendering_shows_registers_mode_and_code() {
        let regs = kvm_regs {
            rax: 0x1234,
            rip: 0x40_1000,
            rflags: 0x46,
            ..Default::default()
        };
        let mut sregs = kvm_sregs {
            cr0: 0x8000_0011,
            efer: 0x500,
            ..Default::default()
        };
        sregs.cs.l = 1;
        sregs.cs.selector = 8;
        let code = Ok(CodeWindow {
            bytes: vec![0x90, 0xdb, 0x04, 0x25],
            rip_index: 1,
        });
        let s = render(&regs, &sregs, Some(&code));
        assert!(s.contains("RAX=0000000000001234 RBX="), "{s}");
        assert!(
            s.contains("RIP=0000000000401000 RFL=00000046 CPL=0 64-bit mode"),
            "{s}"
        );
        assert!(s.contains("CS =0008 "), "{s}");
        assert!(s.contains("EFER=0000000000000500"), "{s}");
        assert!(s.ends_with("Code=90 <db> 04 25\n"), "{s}");
        assert_eq!(rip_linear(&regs, &sregs), 0x40_1000);
        let s = render(&regs, &sregs, Some(&Err("not RAM".into())));
        assert!(s.ends_with("Code=(not RAM)\n"));
        // Real mode: CS base + 16-bit IP.
        let real = kvm_sregs {
            cs: kvm_segment {
                base: 0xf000 << 4,
                ..Default::default()
            },
            ..Default::default()
        };
        let r = kvm_regs {
            rip: 0x1_fff0,
            ..Default::default()
        };
        assert_eq!(rip_linear(&r, &real), 0xf_fff0);
        assert!(render(&r, &real, None).contains("real mode"));
    }
}
