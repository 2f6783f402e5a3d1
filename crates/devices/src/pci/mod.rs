//! PCI: bus 0 with a host bridge and (optionally) pci-testdev, its two
//! configuration front ends, BAR routing windows, and the read-only ECAM
//! shadow.
//!
//! # How the machine uses it
//!
//! ```ignore
//! let mut pci = PciBuilder::new(PciLayout::default());
//! if args.pci_testdev {
//!     pci.pci_testdev(Arc::new(MyKvmIoEvents::new(vm.clone())));
//! }
//! let pci = pci.build()?;               // BARs assigned, decoding on
//! pci.insert_into(&mut pio, &mut mmio)?; // CF8/CFC, ECAM, both windows
//! if args.ecam_ro {
//!     let ro = ReadOnlyRegion::map(vm, slot, pci.layout.ecam_base, pci.shadow.len())?;
//!     pci.shadow.attach(Arc::new(RoSink(ro)))?; // kept current on every write
//! }
//!
//! // In the machine crate (orphan rule: a newtype around fastpath's region).
//! struct RoSink(ReadOnlyRegion);
//! impl ShadowSink for RoSink {
//!     fn write(&self, offset: usize, bytes: &[u8]) { self.0.write(offset, bytes) }
//! }
//! ```
//!
//! `MyKvmIoEvents` implements [`IoEventRegistry`] with
//! `trapline_fastpath::IoEvent` (see [`registry`] for the datamatch
//! mapping); its handle's `fired()` accumulates `IoEvent::take_count()`.
//!
//! # Address choices ([`PciLayout::default`])
//!
//! | what | where | why |
//! |------|-------|-----|
//! | CF8/CFC | ports 0xCF8..=0xCFF | configuration mechanism #1 (§3.6) |
//! | ECAM | 0xC000_0000, 1 MiB (bus 0) | right above the most RAM trapline maps (3 GiB), below the probe window |
//! | PCI MMIO window | 0xE000_0000..0xFEC0_0000 | below the IOAPIC; top-down allocation gives BAR0 = 0xFEBF_F000 as QEMU |
//! | PCI I/O window | 0xC000..0x1_0000 | SeaBIOS's I/O BAR base, so BAR1 = 0xC000 as QEMU |
//! | host bridge | 00:00.0 | class 0x0600 |
//! | pci-testdev | 00:02.0 (devfn 0x10) | where QEMU puts it with `-vga none` |
//!
//! The ECAM window must not overlap guest RAM: RAM ends at 3 GiB at most
//! (`trapline_abi::MAX_RAM_MIB`), where ECAM begins; `trapline_abi` asserts
//! that order at compile time.
//!
//! # Design
//!
//! - [`PciBus`] holds a fixed function table; config access locks one
//!   function, BAR routing is lock-free (atomics in a small route table).
//! - The front ends ([`PciConfigIo`], [`PciConfigMmio`]) and the windows
//!   ([`PciMmioWindow`], [`PciIoWindow`]) are ordinary `BusDevice`s, so the
//!   frozen buses never change even when the guest moves BARs.
//! - Devices ask for KVM ioeventfds through [`IoEventRegistry`] and follow
//!   their BARs when they move.

mod alloc;
mod bus;
mod config;
mod device;
mod ecam;
mod host_bridge;
mod io_front;
#[cfg(any(test, feature = "test-utils"))]
mod recording;
pub mod registry;
mod shadow;
mod shadow_sink;
mod testdev;
mod window;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_virt;

use std::sync::{Arc, Mutex, MutexGuard};

use trapline_bus::{BusBuilder, BusDevice, BusError};

pub use alloc::{assign_bars, AllocOrder, BarAssignment};
pub use bus::{devfn, PciBus, PciBusBuilder, Window, DEVFNS, ECAM_BUS_SIZE, ECAM_FUNCTION_SIZE};
pub use config::*;
pub use device::{BarMap, PciDevice};
pub use ecam::PciConfigMmio;
pub use host_bridge::{HostBridge, HOST_BRIDGE_CLASS, HOST_BRIDGE_DEVICE, REDHAT_VENDOR};
pub use io_front::{PciConfigIo, CONFIG_ADDRESS_PORT, CONFIG_DATA_PORT, CONFIG_IO_LEN};
#[cfg(any(test, feature = "test-utils"))]
pub use recording::{RecordingRegistry, Registration, RegistryEvent};
pub use registry::{IoEventHandle, IoEventRegistration, IoEventRegistry, NoIoEvents, Space};
pub use shadow::ShadowHandle;
pub use shadow_sink::{MemoryShadow, ShadowSink};
pub use testdev::{PciTestDev, TestKind, TestSpec, TESTDEV_CLASS, TESTDEV_DEVICE, TESTS};
pub use window::{PciIoWindow, PciMmioWindow};

/// Default ECAM base.
pub const ECAM_BASE: u64 = trapline_abi::ECAM_BASE;
/// Default PCI MMIO window base.
pub const PCI_MMIO_BASE: u64 = trapline_abi::PCI_MMIO_BASE;
/// Default PCI MMIO window end (exclusive): the IOAPIC starts here.
pub const PCI_MMIO_END: u64 = trapline_abi::PCI_MMIO_END;
/// Default PCI I/O window base.
pub const PCI_IO_BASE: u64 = trapline_abi::PCI_IO_BASE;
/// Default PCI I/O window end (exclusive): the top of port space.
pub const PCI_IO_END: u64 = trapline_abi::PCI_IO_END;
/// The host bridge's devfn (00:00.0).
pub const HOST_BRIDGE_DEVFN: u8 = devfn(0, 0);
/// pci-testdev's devfn (00:02.0).
pub const TESTDEV_DEVFN: u8 = devfn(2, 0);

/// Errors while building the PCI subsystem.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PciError {
    /// Two functions at one devfn.
    #[error("PCI {name} at devfn {devfn:#04x}: already taken by {old}")]
    DevfnTaken {
        /// devfn asked for.
        devfn: u8,
        /// The new function.
        name: &'static str,
        /// The function already there.
        old: &'static str,
    },
    /// A BAR declaration a device model got wrong.
    #[error("PCI BAR{index}: {why}")]
    BadBar {
        /// BAR index.
        index: usize,
        /// What is wrong.
        why: String,
    },
    /// A BAR that does not fit in its window.
    #[error("PCI {devfn:#04x} BAR{bar} ({size:#x} bytes): no room in window {:#x}..{:#x}", window.base, window.end())]
    NoRoom {
        /// Function.
        devfn: u8,
        /// BAR index.
        bar: usize,
        /// BAR size.
        size: u64,
        /// The window it had to fit in.
        window: Window,
    },
    /// A second ECAM shadow sink.
    #[error("an ECAM shadow sink is already attached")]
    ShadowAttached,
    /// A layout that cannot work.
    #[error("PCI layout: {0}")]
    BadLayout(String),
}

/// Lock, ignoring poisoning: the state a panicking holder left is still
/// bytes we can serve, and a device must never propagate a panic.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where the PCI pieces live in the guest's address spaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PciLayout {
    /// ECAM base (1 MiB aligned).
    pub ecam_base: u64,
    /// Bus numbers the ECAM window decodes (1 MiB each); only bus 0 has
    /// functions.
    pub ecam_buses: u16,
    /// Guest-physical range routed to memory BARs (the PCI hole).
    pub mmio_window: Window,
    /// Port range routed to I/O BARs.
    pub io_window: Window,
    /// How memory BARs are placed.
    pub mmio_order: AllocOrder,
    /// How the CPU reaches configuration space besides ECAM, and where
    /// the I/O window lives.
    pub io_space: IoSpace,
}

/// How the CPU reaches PCI port space: the only thing about the bus that
/// differs between the PC and arm64's `virt` (config space, BARs and the
/// devices are the same code).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoSpace {
    /// x86: CPU ports are PCI ports. The machine maps CF8/CFC and the I/O
    /// window on its port bus.
    Ports,
    /// arm64: no CPU ports, no CF8/CFC. PCI port `p` is MMIO at
    /// `cpu_base + p` (QEMU virt's PCI I/O window, the device tree's
    /// `ranges` entry of type I/O); configuration goes through ECAM only.
    MemoryMapped {
        /// MMIO address of PCI port 0.
        cpu_base: u64,
        /// Bytes of port space the MMIO window covers (from port 0).
        len: u64,
    },
}

impl IoSpace {
    /// Where PCI port `port` is for the CPU: (its bus, its address).
    pub fn cpu_address(&self, port: u64) -> (Space, u64) {
        match *self {
            IoSpace::Ports => (Space::Pio, port),
            IoSpace::MemoryMapped { cpu_base, .. } => (Space::Mmio, cpu_base.wrapping_add(port)),
        }
    }
}

impl Default for PciLayout {
    fn default() -> Self {
        Self {
            ecam_base: ECAM_BASE,
            ecam_buses: 1,
            mmio_window: Window::new(PCI_MMIO_BASE, PCI_MMIO_END - PCI_MMIO_BASE),
            io_window: Window::new(PCI_IO_BASE, PCI_IO_END - PCI_IO_BASE),
            mmio_order: AllocOrder::TopDown,
            io_space: IoSpace::Ports,
        }
    }
}

impl PciLayout {
    /// The `virt` machine's bus (arm64, QEMU's low map from
    /// `trapline_abi::virt`): 16 buses of ECAM, the 32-bit MMIO window
    /// with BARs placed upwards from its base (as Linux and kvm-unit-tests
    /// place them there), and the memory-mapped I/O window with I/O BARs
    /// from port 0x1000.
    pub fn virt() -> Self {
        use trapline_abi as abi;
        Self {
            ecam_base: abi::VIRT_PCIE_ECAM_BASE,
            ecam_buses: abi::VIRT_PCIE_BUSES as u16,
            mmio_window: Window::new(abi::VIRT_PCIE_MMIO_BASE, abi::VIRT_PCIE_MMIO_LEN),
            io_window: Window::new(
                abi::VIRT_PCIE_IO_BAR_FIRST_PORT,
                abi::VIRT_PCIE_PIO_LEN - abi::VIRT_PCIE_IO_BAR_FIRST_PORT,
            ),
            mmio_order: AllocOrder::BottomUp,
            io_space: IoSpace::MemoryMapped {
                cpu_base: abi::VIRT_PCIE_PIO_BASE,
                len: abi::VIRT_PCIE_PIO_LEN,
            },
        }
    }

    /// Bytes of the ECAM window.
    pub fn ecam_len(&self) -> u64 {
        u64::from(self.ecam_buses.clamp(1, 256)) * ECAM_BUS_SIZE as u64
    }

    fn validate(&self) -> Result<(), PciError> {
        let bad = |s: &str| Err(PciError::BadLayout(s.to_string()));
        let ecam = Window::new(self.ecam_base, self.ecam_len());
        if !(1..=256).contains(&self.ecam_buses) {
            return bad("ECAM must decode 1..=256 buses");
        }
        if self.ecam_base & (ECAM_BUS_SIZE as u64 - 1) != 0
            || ecam.base.checked_add(ecam.size).is_none()
        {
            return bad("ECAM base must be 1 MiB aligned and the window must fit");
        }
        if self.mmio_window.size == 0
            || self
                .mmio_window
                .base
                .checked_add(self.mmio_window.size)
                .is_none()
        {
            return bad("empty or wrapping MMIO window");
        }
        if self.io_window.size == 0 || self.io_window.end() > PCI_IO_END {
            return bad("I/O window must be non-empty and below 0x10000");
        }
        if ecam.base < self.mmio_window.end() && self.mmio_window.base < ecam.end() {
            return bad("ECAM overlaps the MMIO window");
        }
        if let IoSpace::MemoryMapped { cpu_base, len } = self.io_space {
            let io = Window::new(cpu_base, len);
            if len == 0 || cpu_base.checked_add(len).is_none() {
                return bad("empty or wrapping memory-mapped I/O window");
            }
            if self.io_window.end() > len {
                return bad("the I/O BAR window runs past the memory-mapped I/O window");
            }
            let overlaps = |w: Window| io.base < w.end() && w.base < io.end();
            if overlaps(ecam) || overlaps(self.mmio_window) {
                return bad("the memory-mapped I/O window overlaps ECAM or the MMIO window");
            }
        }
        Ok(())
    }
}

/// Assembles the PCI subsystem: host bridge at 00:00.0 always, other
/// functions as asked, then BAR assignment.
pub struct PciBuilder {
    layout: PciLayout,
    functions: Vec<(u8, Arc<dyn PciDevice>)>,
    testdev: Option<Arc<PciTestDev>>,
}

impl PciBuilder {
    /// A bus with just the host bridge.
    pub fn new(layout: PciLayout) -> Self {
        Self {
            layout,
            functions: vec![(
                HOST_BRIDGE_DEVFN,
                Arc::new(HostBridge) as Arc<dyn PciDevice>,
            )],
            testdev: None,
        }
    }

    /// Add pci-testdev at 00:02.0 (`--device pci-testdev`), registering its
    /// ioeventfds with `registry`. Returns the model for host-side checks
    /// (its `count()`, current test).
    pub fn pci_testdev(&mut self, registry: Arc<dyn IoEventRegistry>) -> Arc<PciTestDev> {
        let dev = Arc::new(PciTestDev::new(registry));
        self.functions.push((TESTDEV_DEVFN, dev.clone()));
        self.testdev = Some(dev.clone());
        dev
    }

    /// Add any other function model.
    pub fn device(&mut self, devfn: u8, device: Arc<dyn PciDevice>) {
        self.functions.push((devfn, device));
    }

    /// Build the bus, assign BARs, enable decoding, and make the front ends.
    pub fn build(self) -> Result<PciDevices, PciError> {
        let layout = self.layout;
        layout.validate()?;
        let mut b = PciBusBuilder::new(layout.mmio_window, layout.io_window);
        for (devfn, dev) in self.functions {
            b.add(devfn, dev)?;
        }
        let bus = b.build();
        let assignments = assign_bars(
            &bus,
            layout.mmio_window,
            layout.io_window,
            layout.mmio_order,
        )?;
        Ok(PciDevices {
            layout,
            config_io: Arc::new(PciConfigIo::new(bus.clone())),
            ecam: Arc::new(PciConfigMmio::new(bus.clone(), layout.ecam_buses)),
            mmio_window: Arc::new(PciMmioWindow::new(bus.clone())),
            io_window: Arc::new(match layout.io_space {
                IoSpace::Ports => PciIoWindow::new(bus.clone()),
                IoSpace::MemoryMapped { cpu_base, .. } => {
                    PciIoWindow::memory_mapped(bus.clone(), cpu_base)
                }
            }),
            shadow: ShadowHandle::new(bus.clone()),
            testdev: self.testdev,
            assignments,
            bus,
        })
    }
}

/// The built PCI subsystem: what the machine maps.
pub struct PciDevices {
    /// The layout it was built with.
    pub layout: PciLayout,
    /// The bus (host-side inspection).
    pub bus: Arc<PciBus>,
    /// Ports 0xCF8..=0xCFF ([`CONFIG_IO_LEN`] bytes at [`CONFIG_ADDRESS_PORT`]).
    pub config_io: Arc<dyn BusDevice>,
    /// MMIO at `layout.ecam_base`, `layout.ecam_len()` bytes.
    pub ecam: Arc<dyn BusDevice>,
    /// MMIO over `layout.mmio_window`.
    pub mmio_window: Arc<dyn BusDevice>,
    /// Over `layout.io_window`: on the port bus, or on the MMIO bus at
    /// the ports' CPU addresses (see [`IoSpace`]).
    pub io_window: Arc<dyn BusDevice>,
    /// The ECAM read-only shadow (`--ecam-ro`).
    pub shadow: ShadowHandle,
    /// pci-testdev, if added.
    pub testdev: Option<Arc<PciTestDev>>,
    /// Where the BARs went, by (devfn, bar).
    pub assignments: Vec<BarAssignment>,
}

impl std::fmt::Debug for PciDevices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PciDevices")
            .field("layout", &self.layout)
            .field("bus", &self.bus)
            .field("assignments", &self.assignments)
            .finish()
    }
}

impl PciDevices {
    /// Insert the front-end devices into the machine's buses: ECAM and
    /// the MMIO window; with [`IoSpace::Ports`] CF8/CFC and the I/O window
    /// on the port bus, with [`IoSpace::MemoryMapped`] the I/O window on
    /// the MMIO bus (ports outside it stay unmapped there).
    pub fn insert_into(&self, pio: &mut BusBuilder, mmio: &mut BusBuilder) -> Result<(), BusError> {
        let l = &self.layout;
        if l.io_space == IoSpace::Ports {
            pio.insert(
                "pci-config",
                CONFIG_ADDRESS_PORT.into(),
                CONFIG_IO_LEN,
                self.config_io.clone(),
            )?;
        }
        let (io_bus, io_base) = l.io_space.cpu_address(l.io_window.base);
        let io_bus = match io_bus {
            Space::Pio => pio,
            Space::Mmio => &mut *mmio,
        };
        io_bus.insert(
            "pci-io-window",
            io_base,
            l.io_window.size,
            self.io_window.clone(),
        )?;
        mmio.insert("pci-ecam", l.ecam_base, l.ecam_len(), self.ecam.clone())?;
        mmio.insert(
            "pci-mmio-window",
            l.mmio_window.base,
            l.mmio_window.size,
            self.mmio_window.clone(),
        )?;
        Ok(())
    }

    /// pci-testdev's user-space PV doorbell counter, to map at
    /// `trapline_abi::PV_DOORBELL_PORT` (4 ports) if the machine has
    /// nothing else there (see [`PciTestDev::doorbell`]).
    pub fn pv_doorbell(&self) -> Option<Arc<dyn BusDevice>> {
        self.testdev.as_ref().map(PciTestDev::doorbell)
    }

    /// Map [`Self::pv_doorbell`] where the CPU reaches the PV doorbell
    /// port: on the port bus, or in the memory-mapped I/O window (below
    /// the I/O BARs' window, so nothing else is there). Does nothing
    /// without pci-testdev.
    pub fn insert_pv_doorbell(
        &self,
        pio: &mut BusBuilder,
        mmio: &mut BusBuilder,
    ) -> Result<(), BusError> {
        let Some(doorbell) = self.pv_doorbell() else {
            return Ok(());
        };
        let (space, addr) = self
            .layout
            .io_space
            .cpu_address(trapline_abi::PV_DOORBELL_PORT.into());
        let bus = match space {
            Space::Pio => pio,
            Space::Mmio => mmio,
        };
        bus.insert("pv-doorbell", addr, 4, doorbell)
    }
}
