//! Building a machine: memory and image, devices on buses, fast paths,
//! vCPUs.

use std::sync::Arc;

use trapline_bus::{Bus, ExitCounters, ExitProfile};
use trapline_fastpath::CoalescedRing;
#[cfg(target_arch = "x86_64")]
use trapline_fastpath::IrqFd;
use trapline_kvm::{VcpuFd, Vm};

use crate::console::ConsoleRx;
use crate::extension::ExtensionHandle;
use crate::kvm_stats::KvmStats;

/// A built machine, ready to run.
pub struct Machine {
    // Field order is drop order: fast paths and vCPUs go before the VM
    // whose fd they use, and the VM before its memory.
    /// What the extension installed (its fast paths with it), if any.
    pub(crate) extension: Option<ExtensionHandle>,
    /// COM1's interrupt line, held so that its irqfd stays registered.
    #[cfg(target_arch = "x86_64")]
    pub(crate) _uart_irq: Option<IrqFd>,
    /// Helper threads started once vCPU 0 is in the guest (see
    /// [`crate::deferred`]): the RTC's (x86) or PL031's (arm64) timer.
    pub(crate) deferred: Vec<crate::deferred::DeferredStart>,
    pub(crate) virtio: crate::virtio::VirtioSet,
    /// The PC platform's devices (PCI, PM, RTC: what S3 needs).
    #[cfg(target_arch = "x86_64")]
    pub(crate) platform: crate::platform::Platform,
    /// The `virt` machine's PCIe host bridge and its functions.
    #[cfg(target_arch = "aarch64")]
    pub(crate) pci: trapline_devices::pci::PciDevices,
    pub(crate) vcpus: Vec<VcpuFd>,
    pub(crate) ring: Option<Arc<CoalescedRing>>,
    pub(crate) pio: Arc<Bus>,
    pub(crate) mmio: Arc<Bus>,
    pub(crate) counters: Arc<[Arc<ExitCounters>]>,
    /// Per-vCPU exit profiles (`--stat`), else `None`.
    pub(crate) profiles: Option<Vec<Arc<ExitProfile>>>,
    /// Where metrics lines go during the run.
    pub(crate) metrics: Option<crate::config::MetricsSink>,
    /// KVM's stats fds (with the profile).
    pub(crate) kvm_stats: Option<KvmStats>,
    pub(crate) timeout: Option<std::time::Duration>,
    pub(crate) seccomp: crate::SeccompMode,
    pub(crate) measure_footprint: bool,
    /// See [`ExtensionContext::set_fast_port`].
    pub(crate) fast_port: Option<u16>,
    pub(crate) tsc_khz: Option<u32>,
    /// The console UART (COM1 on x86, the PL011 on arm64), for input.
    pub(crate) uart: Arc<dyn ConsoleRx>,
    /// See [`MachineConfig::console_input`].
    pub(crate) console_input: Option<bool>,
    pub(crate) vm: Vm,
}

impl Machine {
    /// The frequency of the cycle counter `--stat` reads, in kHz: the
    /// guest's TSC as KVM reports it (KVM_GET_TSC_KHZ) on x86, CNTFRQ_EL0
    /// on arm64.
    pub fn tsc_khz(&self) -> Option<u32> {
        self.tsc_khz
    }

    /// Host addresses [start, end) of guest RAM.
    pub(crate) fn guest_host_range(&self) -> (u64, u64) {
        use vm_memory::{GuestMemoryBackend, GuestMemoryRegion};
        let mut lo = u64::MAX;
        let mut hi = 0;
        for r in self.vm.memory().iter() {
            let a = r.as_ptr() as u64;
            lo = lo.min(a);
            hi = hi.max(a + r.len());
        }
        (lo, hi)
    }

    /// The VM (for tests and extensions).
    pub fn vm(&self) -> &Vm {
        &self.vm
    }

    /// The handle the machine's extension returned, if there is one and it
    /// is a `T` (its owner reads its devices and fast paths through it).
    pub fn extension<T: 'static>(&self) -> Option<&T> {
        self.extension.as_ref()?.downcast_ref()
    }

    /// The PIO bus, as built.
    pub fn pio_bus(&self) -> &Bus {
        &self.pio
    }

    /// The MMIO bus, as built.
    pub fn mmio_bus(&self) -> &Bus {
        &self.mmio
    }

    /// The PCI subsystem (host-side inspection: BAR assignments, pci-testdev).
    pub fn pci(&self) -> &trapline_devices::pci::PciDevices {
        #[cfg(target_arch = "x86_64")]
        return &self.platform.pci;
        #[cfg(target_arch = "aarch64")]
        return &self.pci;
    }
}
