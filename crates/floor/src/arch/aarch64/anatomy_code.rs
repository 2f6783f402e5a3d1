//! The arm64 floor anatomy VM's guest code (the VM itself is `anatomy`,
//! arm64's alone; this is plain logic, checked on every host). Per access:
//! `isb; mrs x8, cntvct_el0`, the path's one instruction, `isb; mrs x9,
//! cntvct_el0`, then both stamps stored with one `stp` (post-indexed) into
//! the array in RAM; `subs; b.ne` back to the top while accesses are left,
//! then a store to [`DONE_MMIO`] ends the run and a branch goes back to
//! the top, so the next KVM_RUN completes that store and starts again with
//! the registers the host set (never the PC: KVM would skip the
//! instruction at a PC set while an MMIO exit is being completed).
//!
//! The clock is the virtual counter the probe's own anatomy pass stamps
//! with and that trapline-kvm's `clock_offset` aligns with the host's.

use super::code::{branch, Clock, ISB};
use trapline_abi as abi;

pub use super::code::DONE_MMIO;

/// Accesses left (counted down).
pub const REG_LEFT: usize = 19;
/// Where the next access's two stamps go (post-incremented by 16).
pub const REG_STAMPS: usize = 20;
/// The MMIO address the access reads or writes.
pub const REG_ADDR: usize = 21;
/// The done address.
pub const REG_DONE: usize = 22;
/// The SMCCC function id the HVC calls (copied into `w0` each access).
pub const REG_FUNCTION: usize = 23;

/// The stamp read just before the access (`x8`).
const REG_T0: u32 = 8;
/// The stamp read just after it (`x9`).
const REG_T3: u32 = 9;

/// The paths the arm64 floor can stamp, by the probe's scenario names:
/// MMIO read and write (a page nothing serves in the kernel) and the HVC
/// KVM's SMCCC filter forwards to user space (where KVM has the filter).
pub const PATHS: [&str; 3] = ["mmio-user-read", "mmio-user-write", "hypercall-user"];

/// The HVC path's name.
pub const HYPERCALL_USER: &str = "hypercall-user";

/// `ldr w10, [x21]`.
pub const LDR_W10_X21: u32 = 0xb940_02aa;
/// `str w10, [x21]`.
pub const STR_W10_X21: u32 = 0xb900_02aa;
/// `hvc #0`.
pub const HVC_0: u32 = 0xd400_0002;
/// `mov w0, w23` (the function id, before the stamps).
const MOV_W0_W23: u32 = 0x2a17_03e0;
/// `stp x8, x9, [x20], #16`.
const STP_STAMPS: u32 = 0xa881_2688;
/// `subs x19, x19, #1`.
const SUBS_LEFT: u32 = 0xf100_0673;
/// `str wzr, [x22]`: the done store.
const STR_DONE: u32 = 0xb900_02df;

/// The path's one instruction; `None` for a path the floor has no
/// program for.
pub fn body(path: &str) -> Option<&'static [u32]> {
    Some(match path {
        "mmio-user-read" => &[LDR_W10_X21],
        "mmio-user-write" => &[STR_W10_X21],
        HYPERCALL_USER => &[HVC_0],
        _ => return None,
    })
}

/// The registers the program reads besides the count and the array: the
/// MMIO address, the done address and the function id.
pub fn fixed_regs() -> [(usize, u64); 3] {
    [
        (REG_ADDR, abi::VIRT_PROBE_MMIO_USER),
        (REG_DONE, DONE_MMIO),
        (REG_FUNCTION, abi::SMCCC_PROBE_USER_FN.into()),
    ]
}

/// The program for `access` (empty: the stamps' own cost), to be loaded
/// and entered at `at`.
pub fn program(access: &[u32], at: u64) -> Vec<u32> {
    let mut c = vec![MOV_W0_W23, ISB, Clock::Cntvct.read_into(REG_T0)];
    c.extend_from_slice(access);
    c.extend_from_slice(&[ISB, Clock::Cntvct.read_into(REG_T3), STP_STAMPS, SUBS_LEFT]);
    // b.ne back to the top (imm19 in words from this instruction).
    let back = -(c.len() as i32);
    c.push(0x5400_0001 | (((back as u32) & 0x7_ffff) << 5));
    c.push(STR_DONE);
    let here = at + 4 * c.len() as u64;
    c.push(branch(here, at));
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    const AT: u64 = abi::VIRT_RAM_BASE + 0x50_0000;

    #[test]
    fn the_words_are_what_the_assembler_makes() {
        // aarch64-linux-gnu-as, then objdump -d.
        assert_eq!(Clock::Cntvct.read_into(REG_T0), 0xd53b_e048);
        assert_eq!(Clock::Cntvct.read_into(REG_T3), 0xd53b_e049);
        assert_eq!(ISB, 0xd503_3fdf);
        let p = program(&[STR_W10_X21], AT);
        assert_eq!(
            &p[..8],
            &[
                0x2a17_03e0, // mov w0, w23
                0xd503_3fdf, // isb
                0xd53b_e048, // mrs x8, cntvct_el0
                0xb900_02aa, // str w10, [x21]
                0xd503_3fdf, // isb
                0xd53b_e049, // mrs x9, cntvct_el0
                0xa881_2688, // stp x8, x9, [x20], #16
                0xf100_0673, // subs x19, x19, #1
            ]
        );
        assert_eq!(p[9], 0xb900_02df, "str wzr, [x22]");
    }

    #[test]
    fn each_loop_goes_back_to_its_top_with_the_access_between_the_stamps() {
        for path in PATHS.into_iter().chain([""]) {
            let access = body(path).unwrap_or(&[]);
            let p = program(access, AT);
            assert_eq!(&p[3..3 + access.len()], access, "{path}");
            let bne = p.len() - 3;
            assert_eq!(p[bne] & 0xff00_001f, 0x5400_0001, "{path}: b.ne");
            let imm19 = (((p[bne] >> 5) & 0x7_ffff) << 13) as i32 >> 13;
            assert_eq!(bne as i32 + imm19, 0, "{path}: b.ne lands on the top");
            let last = *p.last().unwrap();
            assert_eq!(last >> 26, 0b000101, "{path}: b");
            let imm26 = ((last & 0x03ff_ffff) << 6) as i32 >> 6;
            assert_eq!(p.len() as i32 - 1 + imm26, 0, "{path}: b lands on the top");
        }
        assert!(body("ro-memslot-write").is_none());
        assert!(body("pio-user-out").is_none(), "no port I/O on arm64");
    }

    #[test]
    fn the_fixed_registers_are_the_probes_addresses() {
        let r = fixed_regs();
        assert!(r.contains(&(REG_ADDR, abi::VIRT_PROBE_MMIO_USER)));
        assert!(r.contains(&(REG_DONE, abi::VIRT_DEBUG_EXIT_MMIO)));
        assert!(r.contains(&(REG_FUNCTION, u64::from(abi::SMCCC_PROBE_USER_FN))));
        let used: Vec<usize> = r.iter().map(|&(n, _)| n).collect();
        assert!(!used.contains(&REG_LEFT) && !used.contains(&REG_STAMPS));
        assert!(!used.contains(&(REG_T0 as usize)) && !used.contains(&(REG_T3 as usize)));
    }
}
