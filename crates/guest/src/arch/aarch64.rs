//! The arm64 payloads: ELF64 AArch64 executables linked at
//! `trapline_abi::VIRT_PAYLOAD_BASE`, for the `virt` machine. The VMM loads
//! their PT_LOAD segments and enters `e_entry` at EL1h with the MMU off,
//! interrupts masked and x0 = the device tree's guest-physical address
//! (placed above the image); secondaries stay off until PSCI CPU_ON. The
//! runtime (`c/arch/aarch64`) takes the command line from
//! `/chosen/bootargs`, prints on the PL011, sends ucalls and debug exits to
//! trapline's MMIO pages and powers off with PSCI.

macro_rules! payload {
    ($file:literal) => {
        include_bytes!(concat!(env!("OUT_DIR"), "/aarch64/", $file))
    };
}

/// Prints a greeting, PSCI version, the device tree's CPUs and RAM and its
/// argv; ucall DONE; `exit=0` (default) powers off with PSCI SYSTEM_OFF,
/// `exit=<n>` goes out through the debug-exit page, `reset=1` asks for
/// PSCI SYSTEM_RESET.
pub const HELLO: &[u8] = payload!("hello.elf");
/// Starts `cpus=N` CPUs (default: the device tree's count) with PSCI
/// CPU_ON; each checks in and turns itself off; SYSTEM_OFF when all came.
pub const SMP: &[u8] = payload!("smp.elf");
/// `n=` random MMIO accesses (`seed=`) of every width to every window of
/// the `virt` map and the gaps between them; COUNT ucall; SYSTEM_OFF.
pub const HOSTILE: &[u8] = payload!("hostile.elf");

/// A polling virtio-blk driver for transport 0 (needs `--disk`): reads
/// sector 0, writes sector `wsector=` (1), flushes, and checks that each
/// request's interrupt reached the GIC.
pub const VBLK: &[u8] = payload!("vblk.elf");
/// A virtio-net driver and UDP data path for the first virtio-net
/// transport (needs `--net`): request/response pairs (round trips into a
/// histogram) and bursts of frames in flight, every frame checked byte for
/// byte; `vnet: …` lines and COUNT ucalls; exits 0 when none was lost,
/// reordered or wrong.
pub const VNET: &[u8] = payload!("vnet.elf");

/// The lab's probe (`trapline bench`): the x86 probe's harness and ABI
/// records with the arm64 scenarios' loops (`s=`, `goal=`, `min=`, `max=`,
/// `warmup=`, `cpus=`); times with the virtual counter (CNTVCT_EL0).
pub const PROBE: &[u8] = payload!("probe.elf");

/// The same probe built for kvmtool's arm64 machine (`--peer kvmtool`): RAM
/// at `trapline_abi::KVMTOOL_RAM_BASE`, the console on its 8250, the GIC
/// below 0x4000_0000; a raw binary linked at `KVMTOOL_PAYLOAD_BASE`, where
/// `lkvm run -k` loads an image without an arm64 Image header. Not for
/// trapline's `virt` machine.
pub const PROBE_KVMTOOL: &[u8] = payload!("probe-kvmtool.bin");

/// kvm-unit-tests' chr-testdev, driven as its lib/chr-testdev.c does
/// (needs `--device chr-testdev`): the legacy virtio console's queues,
/// `hello`, then `code=` (0) and `q`, which should end the VM with status
/// (code << 1) | 1.
pub const CHRTESTDEV: &[u8] = payload!("chrtestdev.elf");

/// The virtual timer's PPI and SGIs (to itself, and to CPU 1 with `--smp
/// 2`), each seen pending in the target's redistributor.
pub const GIC: &[u8] = payload!("gic.elf");

/// An LPI through the ITS (MAPD, MAPC, MAPTI, INT), acknowledged through
/// ICC_IAR1_EL1.
pub const ITS: &[u8] = payload!("its.elf");

/// A Linux program (not a payload: an arm64 Linux executable, static and
/// libc-free, `c/linux/nettest.c`) that exchanges UDP over eth0, brought
/// up by the guest's busybox init; the arm64 Linux tests pack it in their
/// initramfs as `/bin/nettest`.
pub const LINUX_NETTEST: &[u8] = payload!("nettest");

/// Every arm64 payload by its public name.
pub const PAYLOADS: &[(&str, &[u8])] = &[
    ("hello", HELLO),
    ("smp", SMP),
    ("hostile", HOSTILE),
    ("vblk", VBLK),
    ("vnet", VNET),
    ("probe", PROBE),
    ("chrtestdev", CHRTESTDEV),
    ("gic", GIC),
    ("its", ITS),
];

#[cfg(test)]
mod tests;
