//! What a machine is built from.

use std::sync::mpsc::Sender;
use std::time::Duration;

use trapline_devices::serial::SerialOutput;
use trapline_devices::ucall::UcallEvent;

/// Which threads get trapline's seccomp filters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SeccompMode {
    /// None (`--no-seccomp`, for debugging with strace or gdb).
    Off,
    /// vCPU threads only: the default for the library, because a process
    /// that goes on building VMs after this one (the lab, tests) must keep
    /// its main thread unfiltered.
    #[default]
    VcpusOnly,
    /// vCPU threads and, once they run, the calling (VMM main) thread:
    /// what `trapline run` uses. That thread can create no VM afterwards.
    All,
}

/// How a virtio queue notification reaches the device
/// (`--virtio-notify`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VirtioNotify {
    /// The QueueNotify write exits to trapline and the queue is served on
    /// the vCPU thread, inside the exit.
    Exit,
    /// A KVM ioeventfd (datamatch on the queue index) takes the write in
    /// the kernel; a worker thread serves the queue.
    #[default]
    Ioeventfd,
}

/// How a virtio completion interrupt reaches the guest (`--virtio-irq`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VirtioIrq {
    /// KVM_IRQ_LINE from whichever thread served the queue.
    Line,
    /// An irqfd bound to the device's GSI.
    #[default]
    Irqfd,
}

/// The network card (`--net`): its back end, opened before the machine is
/// built so that a missing TAP is a usage error, and its MAC address.
pub struct NetConfig {
    /// The back end (echo, TAP, vhost-net).
    pub backend: Box<dyn trapline_devices::virtio::net::NetBackend>,
    /// The MAC address in the device's config space.
    pub mac: [u8; 6],
}

impl NetConfig {
    /// `backend` with trapline's default MAC address.
    pub fn new(backend: Box<dyn trapline_devices::virtio::net::NetBackend>) -> Self {
        Self {
            backend,
            mac: trapline_devices::virtio::net::DEFAULT_MAC,
        }
    }
}

impl std::fmt::Debug for NetConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetConfig")
            .field("backend", &self.backend.name())
            .field("mac", &self.mac)
            .finish()
    }
}

/// virtio devices and their paths.
#[derive(Debug, Default)]
pub struct VirtioConfig {
    /// Block devices in order (the first is the guest's /dev/vda), opened
    /// before the machine is built so that a bad path is a usage error.
    pub disks: Vec<trapline_devices::virtio::block::DiskFile>,
    /// A network card, on the transport after the disks.
    pub net: Option<NetConfig>,
    /// The notification path.
    pub notify: VirtioNotify,
    /// The interrupt path.
    pub irq: VirtioIrq,
    /// Offer VIRTIO_RING_F_EVENT_IDX (notification suppression).
    pub event_idx: bool,
}

impl VirtioConfig {
    /// No devices; the fast paths and EVENT_IDX on.
    pub fn new() -> Self {
        Self {
            event_idx: true,
            ..Default::default()
        }
    }

    /// How many virtio-mmio transports the devices take: the disks, then
    /// the network card.
    pub fn device_count(&self) -> usize {
        self.disks.len() + usize::from(self.net.is_some())
    }
}

/// The ACPI hardware model of the PC machine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AcpiMode {
    /// A PC's fixed ACPI hardware: the PM1 blocks and PM timer at 0x600,
    /// the SCI, a FACS (S3 and S5), the 8259s and the PIT's IRQ0 override.
    /// What kvm-unit-tests and firmware-era guests expect.
    #[default]
    Full,
    /// Hardware-reduced ACPI, as QEMU's microvm: no PM blocks, PM timer,
    /// SCI or FACS; no 8259s declared (Linux then skips them, the PIT and
    /// their checks); COM1 declared in the DSDT; power-off through the
    /// FADT's sleep control register. S5 only.
    Reduced,
}

/// How to build a machine.
pub struct MachineConfig {
    /// Guest RAM in MiB (1..=3072).
    pub mem_mib: u64,
    /// Number of vCPUs (1..=64).
    pub vcpus: u32,
    /// The interrupt controllers KVM emulates (`--irqchip`): the full
    /// in-kernel irqchip unless the guest needs less.
    pub irqchip: trapline_kvm::Irqchip,
    /// The in-kernel PIT (needs the full irqchip; `--no-pit` turns it off).
    pub pit: bool,
    /// The ACPI hardware model the PC's tables describe (`--acpi`); `virt`
    /// has no ACPI.
    pub acpi: AcpiMode,
    /// The CPU model (`--cpu`; default `host`).
    pub cpu: trapline_kvm::CpuModel,
    /// The guest image bytes: borrowed for a built-in payload (no copy of
    /// what is already in the binary), a mapped file, or owned.
    pub kernel: crate::ImageBytes,
    /// How the image is named on the guest's command line (argv0).
    pub kernel_name: String,
    /// The rest of the guest command line.
    pub append: String,
    /// An optional Multiboot module.
    pub initrd: Option<crate::ImageBytes>,
    /// Where COM1 output goes.
    pub serial: SerialOutput,
    /// Feed the process's stdin to COM1's receiver (`trapline run` with
    /// the console on stdio); `Some(true)` also handles `Ctrl-A x` (a
    /// terminal in raw mode).
    pub console_input: Option<bool>,
    /// End the run after this long.
    pub timeout: Option<Duration>,
    /// Where ucall messages go (none: dropped).
    pub ucall_sink: Option<Sender<UcallEvent>>,
    /// Devices and fast paths added from outside (the lab's); none for a
    /// plain `trapline run`.
    pub extension: Option<Box<dyn crate::MachineExtension>>,
    /// Add pci-testdev at 00:02.0 (`--device pci-testdev`).
    pub pci_testdev: bool,
    /// Add pc-testdev's ports and MMIO scratch (`--device pc-testdev`).
    pub pc_testdev: bool,
    /// Add chr-testdev on `virt` (`--device chr-testdev`): a virtio
    /// console whose `Nq` ends the run with status `(N << 1) | 1`.
    pub chr_testdev: bool,
    /// Map the ECAM window read-only over a shadow of config space, so
    /// config reads never exit (seed 004's technique).
    pub ecam_ro: bool,
    /// Seccomp filters (on by default).
    pub seccomp: SeccompMode,
    /// Measure resident memory outside guest RAM after the run
    /// (`RunReport::vmm_rss_bytes`); off by default, since it parses
    /// /proc/self/smaps.
    pub measure_footprint: bool,
    /// `--stat`: profile every exit (keys, handling time, KVM's own
    /// counters); off by default, when the run loop adds nothing.
    pub profile: bool,
    /// `--metrics-path`: Firecracker-style metrics lines, one per
    /// interval and one at the end (needs `profile`).
    pub metrics: Option<MetricsSink>,
    /// virtio-mmio devices (`--disk`); announced on the guest command line.
    pub virtio: VirtioConfig,
}

/// Where and how often metrics lines go.
#[derive(Debug)]
pub struct MetricsSink {
    /// An open, writable file (opened before the guest starts, so a bad
    /// path is a usage error and the seccomp filter need not allow open).
    pub file: std::fs::File,
    /// Time between lines.
    pub interval: Duration,
}

impl MachineConfig {
    /// A machine for `kernel` with defaults: 128 MiB, 1 vCPU, irqchip and PIT,
    /// serial to stdout, no timeout.
    pub fn new(kernel: impl Into<crate::ImageBytes>, kernel_name: impl Into<String>) -> Self {
        Self {
            mem_mib: 128,
            vcpus: 1,
            irqchip: trapline_kvm::Irqchip::Kernel,
            // The PIT is the PC's; `virt` has none.
            pit: crate::arch::HAS_PIT,
            acpi: AcpiMode::Full,
            cpu: trapline_kvm::CpuModel::default(),
            kernel: kernel.into(),
            kernel_name: kernel_name.into(),
            append: String::new(),
            initrd: None,
            serial: SerialOutput::Stdout,
            console_input: None,
            timeout: None,
            ucall_sink: None,
            extension: None,
            pci_testdev: false,
            pc_testdev: false,
            chr_testdev: false,
            ecam_ro: false,
            seccomp: SeccompMode::default(),
            measure_footprint: false,
            profile: false,
            metrics: None,
            virtio: VirtioConfig::new(),
        }
    }
}

impl MachineConfig {
    /// Where the console's output goes, taken for the UART (the config
    /// keeps a sink).
    pub(crate) fn take_serial(&mut self) -> trapline_devices::serial::SerialOutput {
        std::mem::replace(
            &mut self.serial,
            trapline_devices::serial::SerialOutput::Sink,
        )
    }
}
