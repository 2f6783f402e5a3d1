//! arm64's peers: QEMU's `virt` machine with a GICv3, and kvmtool booting
//! the probe's kvmtool build.

/// The QEMU peer on arm64: `qemu-system-aarch64 -M virt`.
pub mod qemu {
    use crate::qemu::CpuModel;

    /// The QEMU binary the peer runs.
    pub const QEMU: &str = "qemu-system-aarch64";

    /// The Debian package with [`QEMU`] in it.
    pub const QEMU_PACKAGE: &str = "qemu-system-arm";

    /// The peer's machine: arm64's `virt` with a GICv3 in KVM (the probe
    /// ends with PSCI SYSTEM_OFF there) and pci-testdev on its PCIe host
    /// (its BARs unassigned: the probe places them); `highmem=off` keeps
    /// the ECAM window at `0x3F00_0000` where trapline's is (QEMU moves it
    /// above 4 GiB otherwise, and the probe does not read it from the
    /// device tree). 128 MiB.
    pub const MACHINE_ARGS: &[&str] = &[
        "-machine",
        "virt,gic-version=3,highmem=off",
        "-device",
        "pci-testdev",
        "-m",
        "128",
    ];

    /// QEMU's exit status when the probe ends well: a PSCI SYSTEM_OFF, as
    /// QEMU's `virt` has no debug-exit device.
    pub const PROBE_DONE_STATUS: i32 = 0;

    /// The file name extension the payloads are written under: the arm64
    /// payloads are ELF images (QEMU loads an ELF's segments where they are
    /// linked and puts its device tree at the start of RAM, where the arm64
    /// runtime looks when x0 is 0).
    pub const PAYLOAD_EXT: &str = "elf";

    /// The order in which CPU models are tried: QEMU's default on `virt` is
    /// a Cortex-A15, which KVM on an arm64 host cannot run.
    pub const CPU_PREFERENCE: &[CpuModel] = &[CpuModel::Host, CpuModel::Max];
}

/// kvmtool on arm64: the probe's kvmtool build, linked for its machine.
pub mod kvmtool {
    use std::path::Path;
    use std::time::Duration;

    use crate::kvmtool::{run_args, Kvmtool};

    /// MiB of RAM the probe's kvmtool VM gets (as QEMU's peer VM).
    const PROBE_MEM_MIB: u32 = 128;

    /// `lkvm`'s arguments for the probe's kvmtool build: [`run_args`] with
    /// a GICv3 (the probe's SGIs and EOIs are the system-register
    /// interface's) and the probe's command line (`-p`; lkvm puts its own
    /// words such as `console=ttyS0` before it, which the probe ignores).
    fn probe_args(kernel: &Path, cmdline: &str, cpus: u32) -> Vec<String> {
        let mut args = run_args(kernel, cpus, PROBE_MEM_MIB);
        args.extend(["--irqchip", "gicv3", "-p", cmdline].map(String::from));
        args
    }

    /// Boot the probe's kvmtool build with `cmdline` on `cpus` vCPUs and
    /// return its console. The image is written to `dir`. The probe ends
    /// with PSCI SYSTEM_OFF, after which lkvm exits with status 0; anything
    /// else (or no end within `timeout`) is an error saying how it ended.
    pub fn run_probe(
        k: &Kvmtool,
        dir: &Path,
        cmdline: &str,
        cpus: u32,
        timeout: Duration,
    ) -> Result<String, String> {
        let kernel = dir.join("trapline-probe-kvmtool.bin");
        std::fs::write(&kernel, trapline_guest::PROBE_KVMTOOL)
            .map_err(|e| format!("writing {}: {e}", kernel.display()))?;
        let (console, status) = k.run_with(probe_args(&kernel, cmdline, cpus), timeout)?;
        if status.success() {
            return Ok(console);
        }
        let last = console
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("nothing");
        Err(format!(
            "lkvm ended with {status} (killed after {} s if signal 9); the console's last line: {last}",
            timeout.as_secs().max(1)
        ))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn the_probe_gets_a_gicv3_and_its_command_line() {
            let args = probe_args(Path::new("/tmp/p.bin"), "s=1,2 cpus=2", 2);
            assert_eq!(&args[..4], ["run", "-k", "/tmp/p.bin", "-c"]);
            assert_eq!(&args[4], "2");
            let tail: Vec<&str> = args[args.len() - 4..].iter().map(String::as_str).collect();
            assert_eq!(tail, ["--irqchip", "gicv3", "-p", "s=1,2 cpus=2"]);
            assert!(args.windows(2).any(|w| w == ["-m", "128"]));
        }
    }
}

/// The experiments on arm64: `trapline net-paths` runs; linux-boot and
/// virtio-paths not yet (each refuses with
/// [`experiments::UNAVAILABLE`](UNAVAILABLE) before it runs anything).
pub mod experiments {
    /// Why linux-boot and virtio-paths cannot run on this architecture.
    pub const UNAVAILABLE: Option<&str> =
        Some("is not available on arm64 yet (the lab's probe scenarios are; see docs/arm64.md)");

    /// No `vblktest` initramfs is built for arm64 (the experiments are
    /// refused first): an empty one.
    pub fn vblk_initramfs() -> Vec<u8> {
        Vec::new()
    }
}

/// The data path's QEMU peer on arm64: `virt` with a GICv3, whose
/// virtio-mmio transports are where trapline's are (the payload scans
/// them all: QEMU puts the first `-device virtio-net-device` on the last
/// transport, 0x0a00_3e00 with SPI 47). The payload ends with PSCI
/// SYSTEM_OFF, after which QEMU exits with status 0.
pub mod qemu_net {
    /// The machine and its options.
    pub const MACHINE_ARGS: &[&str] = &[
        "-machine",
        "virt,gic-version=3,highmem=off",
        "-cpu",
        "host",
        "-global",
        "virtio-mmio.force-legacy=false",
        "-m",
        "128",
    ];

    /// No words: the payload knows `virt`'s transports.
    pub fn transport_words() -> String {
        String::new()
    }

    /// The guest reads its counter's rate itself.
    pub const NEEDS_TSC_KHZ: bool = false;

    /// Payload file extension.
    pub const PAYLOAD_EXT: &str = "elf";
}

#[cfg(test)]
mod tests {
    use crate::qemu::CpuModel;

    #[test]
    fn qemu_tries_host_then_max() {
        let names: Vec<_> = CpuModel::PREFERENCE.iter().map(|m| m.name()).collect();
        assert_eq!(names, ["host", "max"]);
    }
}
