//! The MMU set-up the arm64 floor's vCPU starts with: the probe's identity
//! map (`crates/guest/c/arch/aarch64/layout.h`) and the system register
//! values that turn it on with the caches, as the probe's start-up leaves
//! them. Plain values, so they are checked on every host; `vm` writes them.

use trapline_abi as abi;

/// The level-1 page table (below the probe's image).
pub const L1_TABLE: u64 = abi::VIRT_RAM_BASE + 0x1000;

/// MAIR_EL1: attribute 0 Device-nGnRnE, 1 Normal write-back (the probe's).
pub const MAIR: u64 = 0xff00;
/// TCR_EL1: T0SZ 25 (39-bit VAs, walks from level 1), 4 KiB granule,
/// inner-shareable write-back walks, TTBR1 walks off, IPS 0 (32-bit PAs:
/// everything the floor maps is below 4 GiB).
pub const TCR: u64 = 25 | (1 << 8) | (1 << 10) | (3 << 12) | (1 << 23);
const SCTLR_M: u64 = 1 << 0;
const SCTLR_A: u64 = 1 << 1;
const SCTLR_C: u64 = 1 << 2;
const SCTLR_I: u64 = 1 << 12;

/// SCTLR_EL1 from its reset value: the MMU and both caches on, alignment
/// checks off.
pub fn sctlr_on(reset: u64) -> u64 {
    (reset | SCTLR_M | SCTLR_C | SCTLR_I) & !SCTLR_A
}

/// The probe's identity map: one level-1 table of 1 GiB blocks, the first
/// Device-nGnRnE and never executed, the next three Normal write-back,
/// inner shareable.
pub fn l1_entries() -> [u64; 4] {
    const BLOCK: u64 = 0x1;
    const AF: u64 = 1 << 10;
    const SH_INNER: u64 = 3 << 8;
    const PXN_UXN: u64 = 3 << 53;
    const ATTR_DEVICE: u64 = 0 << 2;
    const ATTR_NORMAL: u64 = 1 << 2;
    std::array::from_fn(|i| {
        let base = (i as u64) << 30;
        if i == 0 {
            base | PXN_UXN | AF | ATTR_DEVICE | BLOCK
        } else {
            base | AF | SH_INNER | ATTR_NORMAL | BLOCK
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_map_is_the_probe_s() {
        let e = l1_entries();
        // Device, never executed, below 1 GiB; Normal write-back above.
        assert_eq!(e[0], (3 << 53) | (1 << 10) | 1);
        assert_eq!(e[1], (1 << 30) | (1 << 10) | (3 << 8) | (1 << 2) | 1);
        assert_eq!(e[3] >> 30 & 0x3, 3);
    }

    #[test]
    fn sctlr_turns_the_mmu_and_caches_on_and_alignment_checks_off() {
        assert_eq!(sctlr_on(0), 0b1_0000_0000_0101);
        assert_eq!(sctlr_on(0b10), 0b1_0000_0000_0101);
    }
}
