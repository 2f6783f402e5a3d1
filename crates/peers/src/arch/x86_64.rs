//! x86_64's peers: QEMU's `pc` machine, and a kvmtool that cannot boot the
//! probe.

/// The QEMU peer on x86: `qemu-system-x86_64`'s default `pc` machine.
pub mod qemu {
    use crate::qemu::CpuModel;

    /// The QEMU binary the peer runs.
    pub const QEMU: &str = "qemu-system-x86_64";

    /// The Debian package with [`QEMU`] in it.
    pub const QEMU_PACKAGE: &str = "qemu-system-x86";

    /// The peer's machine: x86's default `pc` with isa-debug-exit (the
    /// probe ends through it) and pci-testdev; 128 MiB.
    pub const MACHINE_ARGS: &[&str] = &[
        "-device",
        "isa-debug-exit,iobase=0xf4,iosize=0x4",
        "-device",
        "pci-testdev",
        "-m",
        "128",
    ];

    /// QEMU's exit status when the probe ends well: isa-debug-exit's `(0 <<
    /// 1) | 1`.
    pub const PROBE_DONE_STATUS: i32 = 1;

    /// The file name extension the payloads are written under: the x86
    /// payloads are Multiboot `.flat` files.
    pub const PAYLOAD_EXT: &str = "flat";

    /// The order in which CPU models are tried.
    pub const CPU_PREFERENCE: &[CpuModel] = &[CpuModel::Host, CpuModel::Max, CpuModel::Default];
}

/// kvmtool on x86: it runs none of the probe.
pub mod kvmtool {
    use std::path::Path;
    use std::time::Duration;

    use crate::kvmtool::Kvmtool;

    /// Why the probe's scenarios are not run on kvmtool.
    pub const PROBE_NOT_APPLICABLE: &str =
        "trapline's x86 probe is a Multiboot image ended through \
         isa-debug-exit, neither of which kvmtool offers";

    /// The probe on kvmtool: never on x86 ([`PROBE_NOT_APPLICABLE`] says
    /// why).
    pub fn run_probe(
        _: &Kvmtool,
        _: &Path,
        _: &str,
        _: u32,
        _: Duration,
    ) -> Result<String, String> {
        Err(PROBE_NOT_APPLICABLE.into())
    }
}

/// The experiments on x86: they run.
pub mod experiments {
    /// Why linux-boot and virtio-paths cannot run on this architecture
    /// (`None`: they can; net-paths runs on both).
    pub const UNAVAILABLE: Option<&str> = None;

    /// The initramfs whose `/init` times /dev/vda (`vblktest`), for
    /// `trapline virtio-paths`' Linux rows.
    pub fn vblk_initramfs() -> Vec<u8> {
        trapline_guest::linux_vblk_initramfs()
    }
}

/// The data path's QEMU peer on x86 (`trapline net-paths --peer qemu`):
/// `microvm`, the one x86 machine with virtio-mmio. `ioapic2=off` puts its
/// eight transports' interrupts on the first IOAPIC (GSI 16 up), which the
/// payload routes; QEMU appends no `virtio_mmio.device=` words to a
/// Multiboot image's command line, so they are given here.
pub mod qemu_net {
    /// The machine and its options (the CPU as virtio-paths' microvm rows:
    /// QEMU 7.2 aborts with `-cpu host` on some AMD hosts).
    pub const MACHINE_ARGS: &[&str] = &[
        "-M",
        "microvm,ioapic2=off",
        "-cpu",
        "qemu64,-cx16",
        "-global",
        "virtio-mmio.force-legacy=false",
        "-device",
        "isa-debug-exit,iobase=0xf4,iosize=0x4",
        "-m",
        "128",
    ];

    /// microvm's transports: base, stride, count, first GSI (QEMU's
    /// hw/i386/microvm.h with the second IOAPIC off).
    const TRANSPORTS: (u64, u64, u64, u64) = (0xfeb0_0000, 0x200, 8, 16);

    /// The payload's words naming every transport (it scans them for DeviceID 1).
    pub fn transport_words() -> String {
        let (base, stride, n, gsi) = TRANSPORTS;
        (0..n)
            .map(|i| {
                format!(
                    "virtio_mmio.device=512@{:#x}:{}",
                    base + i * stride,
                    gsi + i
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The guest's clock must be told its rate (`tsc_khz=`): QEMU's TSC is the host's.
    pub const NEEDS_TSC_KHZ: bool = true;

    /// Payload file extension.
    pub const PAYLOAD_EXT: &str = "flat";
}

#[cfg(test)]
mod tests {
    use crate::qemu::CpuModel;

    #[test]
    fn qemu_tries_host_then_max_then_its_default_model() {
        let names: Vec<_> = CpuModel::PREFERENCE.iter().map(|m| m.name()).collect();
        assert_eq!(names, ["host", "max", "default"]);
    }
}
