//! The raw floor's guest code: each scenario's loop byte for byte as the
//! probe runs it, at the same offset in its cache line.
//!
//! The floor is only a floor if it times the very instructions the probe
//! times. On nested hosts KVM's emulator runs much of the guest's code
//! (about a microsecond an instruction), so one extra `nop` in a loop body
//! shifts a "net" figure by more than a whole ioeventfd exit. The loop
//! bodies below are copied from the probe's compiled loops (`LOOP()` in
//! `crates/guest/c/payloads/common/probe/probe.h`, used by `x86_64/probe/exits.c`: the
//! operation, then `inc; cmp; jne` with gcc's register choice for the
//! counter, against the iteration count that every loop the floor copies
//! pins in RSI (`[n] "S"(n)`), so the floor sets RSI only) and
//! run at the probe's own addresses (gcc may share one loop between
//! scenarios with the same body: pio-kernel-wildcard runs the doorbells'
//! OUT loop); a
//! unit test finds each of them in the embedded probe at that address, so a
//! probe that compiles differently (or whose code moves) fails the test
//! instead of silently skewing the floor.
//!
//! Around the loop: `lfence; rdtsc` into r8/r9, the loop's EAX and EDX
//! taken from r12/r13 (RDTSC clobbers them), the loop, `lfence; rdtsc`
//! into r10/r11 (EAX saved in EBX first), and an OUT to [`DONE_PORT`], which nothing serves in the
//! kernel, so the run loop sees the end whatever irqchip the VM has.

use trapline_abi as abi;

/// The port whose OUT ends a run (a user exit in every configuration).
pub const DONE_PORT: u16 = 0x00f4;

/// What the loop body does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FloorKind {
    /// The bare loop: `inc rax; cmp rsi, rax; jne`.
    Noop,
    /// OUT to a port the run loop answers: a full exit to user space.
    PioUserOut,
    /// OUT to a port with a wildcard ioeventfd: served in the kernel.
    PioKernelWildcard,
    /// A 32-bit store to a page with an MMIO ioeventfd.
    MmioKernelWildcard,
    /// A 32-bit load from RAM.
    RamRead,
}

/// Registers a loop starts with (set with KVM_SET_REGS before the run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoopRegs {
    /// EAX when the loop starts (through r12).
    pub rax: u64,
    /// RCX.
    pub rcx: u64,
    /// EDX when the loop starts (through r13).
    pub rdx: u64,
}

impl FloorKind {
    /// Every kind, in report order.
    pub const ALL: [FloorKind; 5] = [
        FloorKind::Noop,
        FloorKind::PioUserOut,
        FloorKind::PioKernelWildcard,
        FloorKind::MmioKernelWildcard,
        FloorKind::RamRead,
    ];

    /// The scenario name it reports under (the probe's name for the same loop).
    pub fn name(self) -> &'static str {
        match self {
            FloorKind::Noop => "noop",
            FloorKind::PioUserOut => "pio-user-out",
            FloorKind::PioKernelWildcard => "pio-kernel-wildcard",
            FloorKind::MmioKernelWildcard => "mmio-kernel-wildcard",
            FloorKind::RamRead => "ram-read",
        }
    }

    /// The loop as the probe's compiled `LOOP()` has it: the operation,
    /// `inc`, `cmp rsi, …`, `jne` back to the operation.
    pub fn body(self) -> &'static [u8] {
        match self {
            // inc rax; cmp rsi, rax; jne -8
            FloorKind::Noop => &[0x48, 0xff, 0xc0, 0x48, 0x39, 0xf0, 0x75, 0xf8],
            // out dx, eax; inc rax; cmp rsi, rax; jne -9
            FloorKind::PioUserOut => &[0xef, 0x48, 0xff, 0xc0, 0x48, 0x39, 0xf0, 0x75, 0xf7],
            // out dx, eax; inc rcx; cmp rsi, rcx; jne -9
            FloorKind::PioKernelWildcard => &[0xef, 0x48, 0xff, 0xc1, 0x48, 0x39, 0xf1, 0x75, 0xf7],
            // mov [rdx], ecx; inc rax; cmp rsi, rax; jne -10
            FloorKind::MmioKernelWildcard => {
                &[0x89, 0x0a, 0x48, 0xff, 0xc0, 0x48, 0x39, 0xf0, 0x75, 0xf6]
            }
            // mov eax, [rcx]; inc rdx; cmp rsi, rdx; jne -10
            FloorKind::RamRead => &[0x8b, 0x01, 0x48, 0xff, 0xc2, 0x48, 0x39, 0xf2, 0x75, 0xf6],
        }
    }

    /// Where the probe's compiled loop starts (its guest-physical address:
    /// the probe runs identity-mapped, linked at 4 MiB). The floor puts its
    /// copy at the same address, so the two share page, cache line and
    /// large page.
    pub fn probe_addr(self) -> u64 {
        match self {
            FloorKind::Noop => 0x40_26b3,
            FloorKind::PioUserOut => 0x40_25f8,
            FloorKind::PioKernelWildcard => 0x40_22a8,
            FloorKind::MmioKernelWildcard => 0x40_24ed,
            FloorKind::RamRead => 0x40_242b,
        }
    }

    /// The registers the probe's loop starts with: the counter at 0, the
    /// value and address or port the probe uses.
    pub fn regs(self, ram_word: u64) -> LoopRegs {
        match self {
            FloorKind::Noop => LoopRegs::default(),
            FloorKind::PioUserOut => LoopRegs {
                rdx: abi::PROBE_PIO_USER_PORT.into(),
                ..LoopRegs::default()
            },
            FloorKind::PioKernelWildcard => LoopRegs {
                rax: abi::PROBE_WILDCARD_VALUE.into(),
                rdx: abi::PROBE_PIO_WILDCARD_PORT.into(),
                ..LoopRegs::default()
            },
            FloorKind::MmioKernelWildcard => LoopRegs {
                rcx: abi::PROBE_WILDCARD_VALUE.into(),
                rdx: abi::PROBE_MMIO_WILDCARD,
                ..LoopRegs::default()
            },
            FloorKind::RamRead => LoopRegs {
                rcx: ram_word,
                ..LoopRegs::default()
            },
        }
    }
}

/// Before the loop: `lfence; rdtsc; mov r8d, eax; mov r9d, edx;
/// mov eax, r12d; mov edx, r13d`.
const PROLOGUE: &[u8] = &[
    0x0f, 0xae, 0xe8, // lfence
    0x0f, 0x31, // rdtsc
    0x41, 0x89, 0xc0, // mov r8d, eax
    0x41, 0x89, 0xd1, // mov r9d, edx
    0x44, 0x89, 0xe0, // mov eax, r12d
    0x44, 0x89, 0xea, // mov edx, r13d
];

/// The guest code for one kind: returns the bytes, the address they go
/// to and the entry point (RIP). The loop starts at the probe's own
/// address, the prologue right before it, the epilogue right after.
pub fn program(kind: FloorKind) -> (Vec<u8>, u64, u64) {
    let entry = kind.probe_addr() - PROLOGUE.len() as u64;
    let mut c = Vec::new();
    c.extend_from_slice(PROLOGUE);
    c.extend_from_slice(kind.body());
    c.extend_from_slice(&[
        0x89, 0xc3, // mov ebx, eax (the value a read loop read)
        0x0f, 0xae, 0xe8, // lfence
        0x0f, 0x31, // rdtsc
        0x41, 0x89, 0xc2, // mov r10d, eax
        0x41, 0x89, 0xd3, // mov r11d, edx
        0x66, 0xba, // mov dx, imm16
    ]);
    c.extend_from_slice(&DONE_PORT.to_le_bytes());
    c.extend_from_slice(&[
        0xee, // out dx, al
        0xeb, 0xfe, // jmp $ (never re-entered)
    ]);
    (c, entry, entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Offsets in the probe image where `needle` starts.
    fn find_all(hay: &[u8], needle: &[u8]) -> Vec<usize> {
        hay.windows(needle.len())
            .enumerate()
            .filter(|(_, w)| *w == needle)
            .map(|(i, _)| i)
            .collect()
    }

    #[test]
    fn every_loop_is_the_probes_own_at_the_probes_address() {
        // The probe runs identity-mapped, so the guest-physical address the
        // loader puts a file byte at (its PT_LOAD segment's) is the address
        // the probe executes it at.
        let probe = trapline_guest::PROBE;
        let image =
            trapline_loader::inspect(probe).expect("the embedded probe is a loadable image");
        let addr_of = |off: usize| {
            let off = off as u64;
            image
                .segments
                .iter()
                .find(|s| s.offset <= off && off < s.offset + s.filesz)
                .map(|s| s.paddr + (off - s.offset))
        };
        for kind in FloorKind::ALL {
            let at: Vec<u64> = find_all(probe, kind.body())
                .into_iter()
                .filter_map(addr_of)
                .collect();
            assert!(
                at.contains(&kind.probe_addr()),
                "{}: the probe's loop is not these bytes at {:#x} (the probe has them at \
                 {at:x?}); disassemble probe.elf's exits_run() to see which is this \
                 scenario's and update crates/floor/src/arch/x86_64/code.rs",
                kind.name(),
                kind.probe_addr()
            );
        }
    }

    #[test]
    fn every_jump_lands_on_the_loop_start() {
        for kind in FloorKind::ALL {
            let (code, at, entry) = program(kind);
            assert_eq!(at, entry);
            let start = PROLOGUE.len();
            let body = kind.body();
            assert_eq!(&code[start..start + body.len()], body);
            assert_eq!(at + start as u64, kind.probe_addr());
            let disp = body[body.len() - 1] as i8 as isize;
            assert_eq!(body.len() as isize + disp, 0, "{}", kind.name());
        }
    }
}
