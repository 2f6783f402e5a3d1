//! The arm64 floor's guest code: each scenario's loop word for word as the
//! arm64 probe runs it (`LOOP()` in `crates/guest/c/payloads/common/probe/probe.h`,
//! used by `payloads/aarch64/probe/exits.c`: the operation, then `add; cmp;
//! b.ne` with gcc's register choices), at the probe's own address.
//!
//! As on x86 the floor is only a floor if it times the very instructions
//! the probe times, so a unit test finds each loop in the embedded arm64
//! probe at exactly that address: a probe that compiles differently (or
//! whose code moves) fails the test instead of silently skewing the floor.
//! Where the probe sets the loop's registers with `mov`s before it, the
//! floor sets the same registers with KVM_SET_ONE_REG ([`FloorKind::regs`]).
//!
//! Around the loop: `isb; mrs x8, <clock>` (the probe's own prologue, into
//! a register no loop uses), the loop, `isb; mrs x11, <clock>`, then a store to
//! [`DONE_MMIO`], which nothing serves in the kernel on any rung, so the run
//! loop sees the end, and a branch back to the entry: the next KVM_RUN
//! completes the store and runs the loop again, so the PC is never set
//! between runs (KVM would skip the instruction at a PC set while an MMIO
//! exit is being completed).

use trapline_abi as abi;

/// The address whose store ends a run (trapline's debug-exit page: on a
/// raw VM nothing is there, so it is a user exit on every rung).
pub const DONE_MMIO: u64 = abi::VIRT_DEBUG_EXIT_MMIO;

/// The word `ram-read` loads: the arm64 probe's `ram_word` (its .data, the
/// page after the page table that follows the code; the unit test checks
/// the probe holds the read value there).
pub const RAM_WORD: u64 = 0x4020_7000;

/// The loop counter register every copied loop increments (`x0`).
pub const REG_I: usize = 0;
/// The register every copied loop compares with (`x4`: `exits_run`'s `n`).
pub const REG_N: usize = 4;
/// The register a read loop loads into (`w1`).
pub const REG_VALUE: usize = 1;
/// The start time (a register no copied loop uses).
pub const REG_T0: usize = 8;
/// The end time.
pub const REG_T1: usize = 11;
/// The done address.
pub const REG_DONE: usize = 12;

/// The clock the loop is timed with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// The generic timer's virtual counter, `CNTVCT_EL0`.
    Cntvct,
    /// The PMU's cycle counter, `PMCCNTR_EL0` (the vCPU needs PMUv3 and
    /// the counter enabled).
    Pmccntr,
}

/// `mrs x<rt>, <sysreg>` for a system register's encoding (op0 is 2 or 3:
/// its high bit is part of the opcode).
pub const fn mrs(rt: u32, op0: u32, op1: u32, crn: u32, crm: u32, op2: u32) -> u32 {
    0xd530_0000 | ((op0 & 1) << 19) | (op1 << 16) | (crn << 12) | (crm << 8) | (op2 << 5) | rt
}

impl Clock {
    /// `mrs x<rt>, <this clock>`.
    pub const fn read_into(self, rt: u32) -> u32 {
        match self {
            Clock::Cntvct => mrs(rt, 3, 3, 14, 0, 2),
            Clock::Pmccntr => mrs(rt, 3, 3, 9, 13, 0),
        }
    }
}

/// `isb`.
pub const ISB: u32 = 0xd503_3fdf;

/// What the loop body does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FloorKind {
    /// The bare loop: `add x0, x0, #1; cmp x0, x4; b.ne`.
    Noop,
    /// A 32-bit store to a page nothing serves in the kernel: a full exit
    /// to user space (the premium's floor on arm64, which has no port I/O).
    MmioUserWrite,
    /// A 32-bit store to a page with an MMIO ioeventfd.
    MmioKernelWildcard,
    /// A 32-bit load from RAM.
    RamRead,
    /// A 32-bit load of the vGIC distributor's GICD_IIDR (rungs with a vGIC).
    MmioVgicRead,
}

impl FloorKind {
    /// Every kind, in report order.
    pub const ALL: [FloorKind; 5] = [
        FloorKind::Noop,
        FloorKind::MmioUserWrite,
        FloorKind::MmioKernelWildcard,
        FloorKind::RamRead,
        FloorKind::MmioVgicRead,
    ];

    /// The scenario name it reports under (the probe's name for the same loop).
    pub fn name(self) -> &'static str {
        match self {
            FloorKind::Noop => "noop",
            FloorKind::MmioUserWrite => "mmio-user-write",
            FloorKind::MmioKernelWildcard => "mmio-kernel-wildcard",
            FloorKind::RamRead => "ram-read",
            FloorKind::MmioVgicRead => "mmio-vgic-read",
        }
    }

    /// The loop as the probe's compiled `LOOP()` has it: the operation,
    /// `add x0, x0, #1`, `cmp x0, x4`, `b.ne` back to the operation.
    pub fn body(self) -> &'static [u32] {
        match self {
            // add x0, x0, #1; cmp x0, x4; b.ne -8
            FloorKind::Noop => &[0x9100_0400, 0xeb04_001f, 0x54ff_ffc1],
            // str w0, [x1]; add; cmp; b.ne -12
            FloorKind::MmioUserWrite => &[0xb900_0020, 0x9100_0400, 0xeb04_001f, 0x54ff_ffa1],
            // str w2, [x1]; add; cmp; b.ne -12
            FloorKind::MmioKernelWildcard => &[0xb900_0022, 0x9100_0400, 0xeb04_001f, 0x54ff_ffa1],
            // ldr w1, [x2]; add; cmp; b.ne -12
            FloorKind::RamRead | FloorKind::MmioVgicRead => {
                &[0xb940_0041, 0x9100_0400, 0xeb04_001f, 0x54ff_ffa1]
            }
        }
    }

    /// Where the probe's compiled loop starts (its guest-physical address:
    /// the probe runs identity-mapped). The floor puts its copy there.
    pub fn probe_addr(self) -> u64 {
        match self {
            FloorKind::Noop => 0x4020_2eb0,
            FloorKind::MmioUserWrite => 0x4020_2f54,
            FloorKind::MmioKernelWildcard => 0x4020_2f88,
            FloorKind::RamRead => 0x4020_3024,
            FloorKind::MmioVgicRead => 0x4020_3160,
        }
    }

    /// The registers the probe's loop starts with besides the counter and
    /// the count: the address and the value it uses.
    pub fn regs(self) -> &'static [(usize, u64)] {
        match self {
            FloorKind::Noop => &[],
            FloorKind::MmioUserWrite => &[(1, abi::VIRT_PROBE_MMIO_USER)],
            FloorKind::MmioKernelWildcard => &[
                (1, abi::VIRT_PROBE_MMIO_WILDCARD),
                (2, abi::PROBE_WILDCARD_VALUE as u64),
            ],
            FloorKind::RamRead => &[(2, RAM_WORD)],
            FloorKind::MmioVgicRead => &[(2, abi::VIRT_GICD_IIDR)],
        }
    }

    /// Whether the loop reads a value back (into [`REG_VALUE`]).
    pub fn reads(self) -> bool {
        matches!(self, FloorKind::RamRead | FloorKind::MmioVgicRead)
    }
}

/// What the guest runs before the prologue for `clock`: nothing for the
/// virtual counter; for the PMU's cycle counter, PMCR_EL0.E and
/// PMCNTENSET_EL0.C set (outside the timed part; the count filter
/// PMCCFILTR_EL0 keeps its reset value, so EL1 and EL0 are counted).
pub fn clock_setup(clock: Clock) -> &'static [u32] {
    match clock {
        Clock::Cntvct => &[],
        // movz x9, #1; msr pmcr_el0, x9; movz x9, #0x8000, lsl #16;
        // msr pmcntenset_el0, x9
        Clock::Pmccntr => &[0xd280_0029, 0xd51b_9c09, 0xd2b0_0009, 0xd51b_9c29],
    }
}

/// `b` from `from` to `to` (both word-aligned, within ±128 MiB).
pub(crate) fn branch(from: u64, to: u64) -> u32 {
    let words = (to as i64 - from as i64) / 4;
    0x1400_0000 | (words as u32 & 0x03ff_ffff)
}

/// The guest code for one kind: returns the words, the address they go
/// to and the entry point (the PC). The loop starts at the probe's own
/// address, the prologue right before it, the epilogue right after.
pub fn program(kind: FloorKind, clock: Clock) -> (Vec<u32>, u64, u64) {
    let mut c = clock_setup(clock).to_vec();
    c.extend_from_slice(&[ISB, clock.read_into(REG_T0 as u32)]);
    let entry = kind.probe_addr() - 4 * c.len() as u64;
    c.extend_from_slice(kind.body());
    c.extend_from_slice(&[
        ISB,
        clock.read_into(REG_T1 as u32),
        // str wzr, [x12]: the done store.
        0xb900_001f | ((REG_DONE as u32) << 5),
    ]);
    let here = entry + 4 * c.len() as u64;
    c.push(branch(here, entry));
    (c, entry, entry)
}

/// The words as bytes, for guest memory.
pub fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (file offset, physical address, file size) of each PT_LOAD segment
    /// of an ELF64 little-endian image.
    fn segments(elf: &[u8]) -> Vec<(u64, u64, u64)> {
        let u16_at = |o: usize| u16::from_le_bytes(elf[o..o + 2].try_into().unwrap()) as usize;
        let u64_at = |o: usize| u64::from_le_bytes(elf[o..o + 8].try_into().unwrap());
        assert_eq!(&elf[..4], b"\x7fELF");
        let (phoff, phentsize, phnum) = (u64_at(0x20) as usize, u16_at(0x36), u16_at(0x38));
        (0..phnum)
            .map(|i| phoff + i * phentsize)
            .filter(|&p| u32::from_le_bytes(elf[p..p + 4].try_into().unwrap()) == 1)
            .map(|p| (u64_at(p + 8), u64_at(p + 24), u64_at(p + 32)))
            .collect()
    }

    /// The embedded probe's bytes at guest-physical `addr`, if loaded there.
    fn at(elf: &[u8], addr: u64, len: usize) -> Option<&[u8]> {
        segments(elf)
            .into_iter()
            .find(|&(_, pa, sz)| pa <= addr && addr + len as u64 <= pa + sz)
            .map(|(off, pa, _)| {
                let o = (off + addr - pa) as usize;
                &elf[o..o + len]
            })
    }

    /// Guest-physical addresses where the probe has `words` (word-aligned).
    fn find(elf: &[u8], words: &[u32]) -> Vec<u64> {
        let want = bytes(words);
        segments(elf)
            .into_iter()
            .flat_map(|(off, pa, sz)| {
                let seg = &elf[off as usize..(off + sz) as usize];
                let want = &want;
                (0..seg.len().saturating_sub(want.len()))
                    .step_by(4)
                    .filter(move |&i| seg[i..i + want.len()] == want[..])
                    .map(move |i| pa + i as u64)
            })
            .collect()
    }

    #[test]
    fn every_loop_is_the_probes_own_at_the_probes_address() {
        let probe = trapline_guest::aarch64::PROBE;
        for kind in FloorKind::ALL {
            let want = bytes(kind.body());
            assert_eq!(
                at(probe, kind.probe_addr(), want.len()),
                Some(&want[..]),
                "{}: the arm64 probe's loop is not these words at {:#x} (the probe has them at \
                 {:x?}); disassemble probe.elf's exits_run() (aarch64-linux-gnu-objdump -d) to \
                 see which is this scenario's and update crates/floor/src/arch/aarch64/code.rs",
                kind.name(),
                kind.probe_addr(),
                find(probe, kind.body())
            );
        }
    }

    #[test]
    fn the_ram_word_is_where_the_probe_keeps_it() {
        let probe = trapline_guest::aarch64::PROBE;
        assert_eq!(
            at(probe, RAM_WORD, 4),
            Some(&abi::PROBE_READ_VALUE.to_le_bytes()[..]),
            "the probe's ram_word moved: update RAM_WORD"
        );
    }

    #[test]
    fn the_program_is_the_loop_between_the_clock_reads_and_branches_back() {
        for kind in FloorKind::ALL {
            for clock in [Clock::Cntvct, Clock::Pmccntr] {
                let (code, at, entry) = program(kind, clock);
                assert_eq!(at, entry);
                let start = clock_setup(clock).len() + 2;
                assert_eq!(at + 4 * start as u64, kind.probe_addr(), "{}", kind.name());
                let body = kind.body();
                assert_eq!(&code[start..start + body.len()], body);
                // The loop's b.ne lands on its first word.
                let bne = body[body.len() - 1];
                let imm19 = ((bne >> 5) & 0x7ffff) as i32;
                let disp = (imm19 << 13) >> 13;
                assert_eq!(disp, -(body.len() as i32 - 1), "{}", kind.name());
                // The last word branches to the entry.
                let last = *code.last().unwrap();
                let imm26 = ((last & 0x03ff_ffff) << 6) as i32 >> 6;
                assert_eq!(imm26, -(code.len() as i32 - 1));
            }
        }
    }

    #[test]
    fn clock_reads_encode_as_the_assembler_does() {
        // mrs x8, cntvct_el0 and mrs x0, cntvct_el0 as gcc assembles them
        // (the probe's own prologue and epilogue).
        assert_eq!(Clock::Cntvct.read_into(8), 0xd53b_e048);
        assert_eq!(Clock::Cntvct.read_into(0), 0xd53b_e040);
        // mrs x8, pmccntr_el0 (S3_3_C9_C13_0).
        assert_eq!(Clock::Pmccntr.read_into(8), 0xd53b_9d08);
        // str wzr, [x12]
        assert_eq!(program(FloorKind::Noop, Clock::Cntvct).0[7], 0xb900_019f);
    }
}
