//! The x86_64 payloads (built when trapline is built for x86_64).
//!
//! The `.flat` payloads are kvm-unit-tests style Multiboot v1 images: ELF32
//! (EM_386) files holding 64-bit code linked at 4 MiB, entered in 32-bit
//! protected mode with EBX = Multiboot info. [`HELLO64`] is a plain ELF64
//! entered directly in long mode. [`REALMODE`] is a `.flat` linked at
//! 0x8000 that runs 16-bit real-mode code.

use crate::cpio;

macro_rules! payload {
    ($file:literal) => {
        include_bytes!(concat!(env!("OUT_DIR"), "/", $file))
    };
}

/// Prints a greeting and its argv, ucall DONE, exits with `exit=<n>`.
pub const HELLO: &[u8] = payload!("hello.flat");
/// Reads a line from COM1 (polling) and prints it back: console input.
pub const ECHO: &[u8] = payload!("echo.flat");
/// Starts `cpus=N` vCPUs with INIT/SIPI; each checks in.
pub const SMP: &[u8] = payload!("smp.flat");
/// `n=` random PIO and MMIO accesses (`seed=`), then COUNT ucalls.
pub const HOSTILE: &[u8] = payload!("hostile.flat");
/// Triple faults (the VMM sees KVM_EXIT_SHUTDOWN).
pub const TRIPLE: &[u8] = payload!("triple.flat");
/// Never exits (`cli; hlt`, or `spin=busy`): for `--timeout`.
pub const SPIN: &[u8] = payload!("spin.flat");
/// An x87 load from MMIO, which KVM's emulator cannot do: KVM_RUN ends
/// with KVM_EXIT_INTERNAL_ERROR (emulation failure) on any host.
pub const EMUFAIL: &[u8] = payload!("emufail.flat");
/// The exit-cost probe: timed scenario loops reported by RESULT ucalls.
pub const PROBE: &[u8] = payload!("probe.flat");
/// Checks the machine interfaces kvm-unit-tests relies on (fw_cfg, ACPI,
/// PM timer, pc-testdev, disabled-LAPIC MMIO, SMP bring-up): a `PASS:` or
/// `FAIL:` line and a COUNT ucall per check; exits 0 when all pass.
pub const COMPAT: &[u8] = payload!("compat.flat");
/// kvm-unit-tests `vmexit`'s method and output lines for cpuid, the I/O
/// tests, ipi and pci-mem/pci-io; exits 0.
pub const KUTVMEXIT: &[u8] = payload!("kutvmexit.flat");
/// The doorbell reliability test: `cpus=N` CPUs ring `n=` times each on
/// `path=` at once, each reports COUNT(apic id, rings); exits 0.
pub const RINGER: &[u8] = payload!("ringer.flat");
/// The MC146818 RTC: CMOS bytes, the UIP cycle, register C, the alarm
/// interrupt on IRQ 8; a `PASS:`/`FAIL:` line per check, exits 0 when all
/// pass.
pub const RTC: &[u8] = payload!("rtc.flat");
/// ACPI S3 with an RTC alarm wake: resumes at a real-mode FACS waking
/// vector that exits with 0x2a (status 85).
pub const S3: &[u8] = payload!("s3.flat");
/// A minimal virtio-blk driver for the first `--disk`: reads sector 0,
/// writes and flushes sector `wsector=`, times reads and writes with
/// `bench=N`; exits 0 when every request completed as expected.
pub const VBLK: &[u8] = payload!("vblk.flat");
/// A virtio-net driver and UDP data path for the first virtio-net
/// transport (needs `--net`): request/response pairs (round trips into a
/// histogram) and bursts of frames in flight, every frame checked byte for
/// byte; `vnet: …` lines and COUNT ucalls; exits 0 when none was lost,
/// reordered or wrong.
pub const VNET: &[u8] = payload!("vnet.flat");
/// A plain ELF64 entered in long mode; exits with 0x2a.
pub const HELLO64: &[u8] = payload!("hello64.elf");
/// A Multiboot image linked at 0x8000 (below 1 MiB, like kvm-unit-tests'
/// real-mode tests) that drops to 16-bit real mode, computes a value there
/// and exits through isa-debug-exit with 82 (status 165).
pub const REALMODE: &[u8] = payload!("realmode.flat");

/// Every payload by its public name.
pub const PAYLOADS: &[(&str, &[u8])] = &[
    ("hello", HELLO),
    ("echo", ECHO),
    ("smp", SMP),
    ("hostile", HOSTILE),
    ("triple", TRIPLE),
    ("spin", SPIN),
    ("emufail", EMUFAIL),
    ("probe", PROBE),
    ("compat", COMPAT),
    ("kutvmexit", KUTVMEXIT),
    ("ringer", RINGER),
    ("rtc", RTC),
    ("s3", S3),
    ("vblk", VBLK),
    ("vnet", VNET),
    ("hello64", HELLO64),
    ("realmode", REALMODE),
];

/// `/init` for Linux guests that checks and times `/dev/vda` (see
/// `c/linux/vblktest.c`): an i386 static binary.
pub const LINUX_VBLKTEST: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/vblktest"));

/// An uncompressed newc initramfs whose `/init` is [`LINUX_VBLKTEST`]
/// (with empty /dev, /proc and /sys to mount on).
pub fn linux_vblk_initramfs() -> Vec<u8> {
    use cpio::Entry;
    cpio::newc(&[
        Entry::Dir("dev", 0o755),
        Entry::Dir("proc", 0o755),
        Entry::Dir("sys", 0o755),
        Entry::File("init", 0o755, LINUX_VBLKTEST),
    ])
}

/// `/init` for Linux guests that brings eth0 up and exchanges UDP over it
/// (see `c/linux/nettest.c`): an i386 static binary.
pub const LINUX_NETTEST: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/nettest"));

/// An uncompressed newc initramfs whose `/init` is [`LINUX_NETTEST`].
pub fn linux_net_initramfs() -> Vec<u8> {
    use cpio::Entry;
    cpio::newc(&[
        Entry::Dir("dev", 0o755),
        Entry::Dir("proc", 0o755),
        Entry::Dir("sys", 0o755),
        Entry::File("init", 0o755, LINUX_NETTEST),
    ])
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod export {
    /// Writes the vblktest initramfs to $TRAPLINE_WRITE_INITRAMFS (to boot
    /// it by hand, e.g. on QEMU):
    /// `TRAPLINE_WRITE_INITRAMFS=$PWD/vblk.cpio cargo test -p trapline-guest --lib -- --ignored write_vblk_initramfs`
    #[test]
    #[ignore]
    fn write_vblk_initramfs() {
        let path =
            std::env::var_os("TRAPLINE_WRITE_INITRAMFS").expect("TRAPLINE_WRITE_INITRAMFS=PATH");
        std::fs::write(path, super::linux_vblk_initramfs()).unwrap();
    }

    /// The same for the nettest initramfs:
    /// `TRAPLINE_WRITE_INITRAMFS=$PWD/net.cpio cargo test -p trapline-guest --lib -- --ignored write_net_initramfs`
    #[test]
    #[ignore]
    fn write_net_initramfs() {
        let path =
            std::env::var_os("TRAPLINE_WRITE_INITRAMFS").expect("TRAPLINE_WRITE_INITRAMFS=PATH");
        std::fs::write(path, super::linux_net_initramfs()).unwrap();
    }
}
