//! The arm64 register dump (PC, PSTATE, SP, x0-x30 through
//! KVM_GET_ONE_REG) and the one line that names an access KVM could not
//! decode. The guests trapline runs on `virt` start with the MMU off, so
//! the PC is read as a guest-physical address.

use std::fmt::Write;

use kvm_bindings::{kvm_run, KVM_EXIT_ARM_NISV};
use kvm_ioctls::VcpuFd;
use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};

use super::regs;
use crate::crash::CpuDump;

fn get(vcpu: &VcpuFd, id: u64) -> Result<u64, kvm_ioctls::Error> {
    let mut b = [0u8; 8];
    vcpu.get_one_reg(id, &mut b)?;
    Ok(u64::from_le_bytes(b))
}

/// The PC, if readable.
pub fn pc(vcpu: &VcpuFd) -> Option<u64> {
    get(vcpu, regs::PC).ok()
}

/// The 32-bit instruction word at `pc` (read as a GPA), or why not.
pub fn instruction_at(memory: Option<&GuestMemoryMmap>, pc: u64) -> Result<u32, String> {
    let Some(m) = memory else {
        return Err("guest memory not available".into());
    };
    m.read_obj::<u32>(GuestAddress(pc))
        .map_err(|_| format!("PC {pc:#x} is not in guest RAM"))
}

/// The line for an access KVM could not decode.
pub fn undecodable_line(pc: Option<u64>, addr: Option<u64>, insn: Result<u32, String>) -> String {
    let pc = pc.map_or("unreadable".to_string(), |p| format!("{p:#x}"));
    let addr = addr.map_or(
        "unknown (this host's KVM lacks KVM_CAP_ARM_NISV_TO_USER)".to_string(),
        |a| format!("{a:#x}"),
    );
    let insn = match insn {
        Ok(w) => format!("{w:#010x}"),
        Err(why) => format!("unavailable ({why})"),
    };
    format!(
        "MMIO access KVM cannot decode (no valid syndrome: a load/store pair, \
         writeback or similar) at PC {pc}, address {addr}, instruction {insn}"
    )
}

/// The line for the undecodable access that just ended KVM_RUN.
///
/// # Safety
/// `run` must be `vcpu`'s kvm_run mapping, holding the last exit.
pub unsafe fn undecodable(
    vcpu: &VcpuFd,
    run: *const kvm_run,
    memory: Option<&GuestMemoryMmap>,
) -> String {
    // SAFETY: the caller promises a mapped kvm_run; arm_nisv is read only
    // when the exit reason says it is the active member.
    let addr = unsafe {
        ((*run).exit_reason == KVM_EXIT_ARM_NISV)
            .then(|| (*run).__bindgen_anon_1.arm_nisv.fault_ipa)
    };
    let pc = pc(vcpu);
    let insn = pc.map_or(Err("PC unreadable".into()), |p| instruction_at(memory, p));
    undecodable_line(pc, addr, insn)
}

/// Capture `vcpu`'s registers (and the instruction word at the PC).
pub fn capture(vcpu: &VcpuFd, memory: Option<&GuestMemoryMmap>) -> CpuDump {
    let mut s = String::new();
    let named = [
        ("PC", regs::PC),
        ("PSTATE", regs::PSTATE),
        ("SP_EL0", regs::SP_EL0),
        ("SP_EL1", regs::SP_EL1),
        ("ESR_EL1", regs::ESR_EL1),
        ("FAR_EL1", regs::FAR_EL1),
    ];
    let mut line = Vec::new();
    for (name, id) in named {
        match get(vcpu, id) {
            Ok(v) => line.push(format!("{name}={v:016x}")),
            Err(e) => line.push(format!("{name}=({e})")),
        }
    }
    let _ = writeln!(s, "{}", line.join(" "));
    for row in (0..31).collect::<Vec<_>>().chunks(4) {
        let cells: Vec<String> = row
            .iter()
            .map(|&n| match get(vcpu, regs::x(n)) {
                Ok(v) => format!("X{n:<2}={v:016x}"),
                Err(_) => format!("X{n:<2}=unreadable"),
            })
            .collect();
        let _ = writeln!(s, "{}", cells.join(" "));
    }
    if let Some(p) = pc(vcpu) {
        match instruction_at(memory, p) {
            Ok(w) => {
                let _ = writeln!(s, "Code={w:08x}");
            }
            Err(why) => {
                let _ = writeln!(s, "Code unavailable: {why}");
            }
        }
    }
    CpuDump(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_undecodable_line_names_pc_address_and_instruction() {
        let l = undecodable_line(Some(0x4020_0010), Some(0x0900_0000), Ok(0xa900_0420));
        assert!(l.contains("PC 0x40200010"), "{l}");
        assert!(l.contains("address 0x9000000"), "{l}");
        assert!(l.contains("instruction 0xa9000420"), "{l}");
        assert!(!l.contains('\n'));
        let l = undecodable_line(None, None, Err("PC 0x10 is not in guest RAM".into()));
        assert!(l.contains("PC unreadable"), "{l}");
        assert!(l.contains("NISV_TO_USER"), "{l}");
        assert!(l.contains("not in guest RAM"), "{l}");
    }

    #[test]
    fn an_instruction_is_read_from_ram_at_the_pc() {
        let base = trapline_abi::VIRT_RAM_BASE;
        let m = GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(base), 0x1_0000)]).unwrap();
        m.write_obj(0xd503_201fu32, GuestAddress(base + 8)).unwrap();
        assert_eq!(instruction_at(Some(&m), base + 8), Ok(0xd503_201f));
        let e = instruction_at(Some(&m), 0x1000).unwrap_err();
        assert!(e.contains("not in guest RAM"), "{e}");
    }
}
