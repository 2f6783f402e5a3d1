//! The device tree of trapline's arm64 `virt` machine.
//!
//! [`write()`] turns a [`VirtMachine`] description into a DTB (with rust-vmm's
//! `vm-fdt`), naming nodes and properties as QEMU's `-machine virt` does
//! (hw/arm/virt.c; checked against the tree QEMU 7.2 dumps with
//! `-machine virt,gic-version=3,dumpdtb=`), so Linux and kvm-unit-tests find
//! the devices they look for on QEMU. It is plain Rust with no KVM in it: the
//! machine reads the vCPUs' MPIDRs from KVM and passes them in, and this crate
//! builds and tests on any host.
//!
//! [`VirtMachine::qemu_virt`] fills in the addresses and interrupts of
//! `trapline-abi`'s `virt` map; a machine changes only what it has (ITS,
//! virtio transports, PMU, initrd, bootargs).

use trapline_abi as abi;
use vm_fdt::FdtWriter;

/// The test-only reader; the fuzz targets read blobs back with it too.
#[cfg(any(test, feature = "test-utils"))]
pub mod reader;
#[cfg(test)]
mod tests;

/// Largest DTB an arm64 kernel accepts (Documentation/arch/arm64/booting.rst:
/// "must not exceed 2 megabytes in size").
pub const MAX_DTB_SIZE: usize = 2 << 20;

/// The affinity fields of MPIDR_EL1 (Aff3 in bits 39:32, Aff2..Aff0 in bits
/// 23:0): what a cpu node's `reg` holds. The rest (RES1 bit 31, U, MT) is not
/// part of the CPU's identity.
pub const MPIDR_AFFINITY_MASK: u64 = 0xFF_00FF_FFFF;

/// Interrupt specifier cell: shared peripheral interrupt.
const GIC_FDT_IRQ_TYPE_SPI: u32 = 0;
/// Interrupt specifier cell: per-processor interrupt.
const GIC_FDT_IRQ_TYPE_PPI: u32 = 1;
/// Interrupt specifier flags: rising edge.
const IRQ_TYPE_EDGE_RISING: u32 = 1;
/// Interrupt specifier flags: active-high level.
const IRQ_TYPE_LEVEL_HIGH: u32 = 4;

/// Phandles (any distinct non-zero values do).
const PHANDLE_GIC: u32 = 1;
const PHANDLE_ITS: u32 = 2;
const PHANDLE_APB_PCLK: u32 = 3;

/// A range of guest-physical addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// First address.
    pub base: u64,
    /// Size in bytes.
    pub len: u64,
}

impl Window {
    /// `len` bytes from `base`.
    pub const fn new(base: u64, len: u64) -> Self {
        Self { base, len }
    }

    /// One past the last address, `None` if that overflows.
    pub fn end(&self) -> Option<u64> {
        self.base.checked_add(self.len)
    }
}

/// The vGICv3: distributor, one redistributor region, optional ITS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GicV3 {
    /// Distributor frame.
    pub dist: Window,
    /// Redistributor region (room for every vCPU's frames).
    pub redist: Window,
    /// The ITS frame, when the machine has one (MSIs, kvm-unit-tests' `its`
    /// tests and micro-bench's `lpi`).
    pub its: Option<Window>,
}

/// A memory-mapped device with one SPI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmioDevice {
    /// Its registers.
    pub window: Window,
    /// Its SPI (device tree cell; GIC INTID = 32 + spi).
    pub spi: u32,
}

/// The PCIe host bridge (QEMU's gpex, `pci-host-ecam-generic`): its ECAM
/// window, the memory-mapped PCI I/O window (PCI port 0 at `io.base`), the
/// 32-bit MMIO window (PCI and CPU addresses equal) and INTA..INTD on four
/// level SPIs from `first_spi`, swizzled by slot as QEMU does. No MSIs: the
/// node has no `msi-map`, so guests use INTx.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcieHost {
    /// Configuration space, 1 MiB per bus from bus 0.
    pub ecam: Window,
    /// The PCI I/O space as the CPU sees it.
    pub io: Window,
    /// The 32-bit memory window.
    pub mmio: Window,
    /// SPI of INTA at slot 0.
    pub first_spi: u32,
}

impl PcieHost {
    /// QEMU virt's low-map host bridge from `trapline-abi`.
    pub const fn qemu_virt() -> Self {
        Self {
            ecam: Window::new(abi::VIRT_PCIE_ECAM_BASE, abi::VIRT_PCIE_ECAM_LEN),
            io: Window::new(abi::VIRT_PCIE_PIO_BASE, abi::VIRT_PCIE_PIO_LEN),
            mmio: Window::new(abi::VIRT_PCIE_MMIO_BASE, abi::VIRT_PCIE_MMIO_LEN),
            first_spi: abi::VIRT_PCIE_FIRST_SPI,
        }
    }

    /// Buses the ECAM window decodes.
    pub fn buses(&self) -> u64 {
        self.ecam.len >> 20
    }
}

/// How the guest reaches PSCI (the `psci` node's `method`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PsciMethod {
    /// HVC: KVM serves PSCI for an EL1 guest.
    Hvc,
    /// SMC: for a guest that runs at EL2 itself.
    Smc,
}

impl PsciMethod {
    fn as_str(self) -> &'static str {
        match self {
            PsciMethod::Hvc => "hvc",
            PsciMethod::Smc => "smc",
        }
    }
}

/// The architected timer's four PPIs, in the order of the `timer` node's
/// `interrupts`: secure EL1 physical, non-secure EL1 physical, EL1 virtual,
/// EL2 physical (device tree PPI cells).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerPpis {
    /// Secure EL1 physical timer.
    pub secure_phys: u32,
    /// Non-secure EL1 physical timer.
    pub phys: u32,
    /// EL1 virtual timer.
    pub virt: u32,
    /// EL2 physical timer.
    pub hyp_phys: u32,
}

/// Where an initrd lies in guest memory (`linux,initrd-start`/`-end`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Initrd {
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
}

/// What the device tree describes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VirtMachine {
    /// Guest RAM (one range).
    pub ram: Window,
    /// MPIDR_EL1 of each vCPU, in vCPU order (vCPU 0 boots; the others wait
    /// for PSCI CPU_ON). Only the affinity bits are written.
    pub mpidrs: Vec<u64>,
    /// The interrupt controller.
    pub gic: GicV3,
    /// The architected timer's interrupts.
    pub timer: TimerPpis,
    /// The PMUv3 overflow PPI, when the vCPUs have a PMU.
    pub pmu_ppi: Option<u32>,
    /// The PSCI conduit.
    pub psci: PsciMethod,
    /// The PL011 console, which `chosen/stdout-path` names.
    pub uart: Option<MmioDevice>,
    /// The PL031 real-time clock.
    pub rtc: Option<MmioDevice>,
    /// virtio-mmio transports (edge-triggered SPIs, DMA-coherent).
    pub virtio: Vec<MmioDevice>,
    /// The PCIe host bridge.
    pub pcie: Option<PcieHost>,
    /// The kernel command line (`chosen/bootargs`; left out when empty).
    pub bootargs: String,
    /// The initrd, if one was loaded.
    pub initrd: Option<Initrd>,
}

impl VirtMachine {
    /// QEMU's `virt` layout from `trapline-abi`: `ram_size` bytes of RAM at
    /// `VIRT_RAM_BASE`, a GICv3 with an ITS, the PL011 and PL031, the timer,
    /// the PCIe host bridge, PSCI through HVC; no PMU, no virtio transports, no initrd.
    pub fn qemu_virt(ram_size: u64, mpidrs: Vec<u64>) -> Self {
        Self {
            ram: Window::new(abi::VIRT_RAM_BASE, ram_size),
            mpidrs,
            gic: GicV3 {
                dist: Window::new(abi::VIRT_GIC_DIST_BASE, abi::VIRT_GIC_DIST_LEN),
                redist: Window::new(abi::VIRT_GIC_REDIST_BASE, abi::VIRT_GIC_REDIST_LEN),
                its: Some(Window::new(abi::VIRT_GIC_ITS_BASE, abi::VIRT_GIC_ITS_LEN)),
            },
            timer: TimerPpis {
                secure_phys: abi::VIRT_TIMER_SEC_PPI,
                phys: abi::VIRT_TIMER_PHYS_PPI,
                virt: abi::VIRT_TIMER_VIRT_PPI,
                hyp_phys: abi::VIRT_TIMER_HYP_PPI,
            },
            pmu_ppi: None,
            psci: PsciMethod::Hvc,
            uart: Some(MmioDevice {
                window: Window::new(abi::VIRT_PL011_BASE, abi::VIRT_PL011_LEN),
                spi: abi::VIRT_PL011_SPI,
            }),
            rtc: Some(MmioDevice {
                window: Window::new(abi::VIRT_PL031_BASE, abi::VIRT_PL031_LEN),
                spi: abi::VIRT_PL031_SPI,
            }),
            virtio: Vec::new(),
            pcie: Some(PcieHost::qemu_virt()),
            bootargs: String::new(),
            initrd: None,
        }
    }

    /// The path `chosen/stdout-path` names: the PL011's node.
    pub fn stdout_path(&self) -> Option<String> {
        self.uart
            .map(|u| format!("/{}", node_name("pl011", u.window.base)))
    }
}

/// Why a device tree could not be written.
#[derive(Debug, thiserror::Error)]
pub enum FdtError {
    /// No vCPUs.
    #[error("the device tree needs at least one vCPU")]
    NoCpus,
    /// More vCPUs than redistributor frames.
    #[error(
        "{cpus} vCPUs need {need:#x} bytes of GICv3 redistributors, but the region at {base:#x} has {have:#x}"
    )]
    RedistributorsTooSmall {
        /// vCPUs asked for.
        cpus: usize,
        /// Bytes they need.
        need: u64,
        /// Region base.
        base: u64,
        /// Bytes it has.
        have: u64,
    },
    /// An empty or wrapping window.
    #[error(
        "{what} at {base:#x} with size {len:#x} is empty or runs past the end of the address space"
    )]
    BadWindow {
        /// Which window.
        what: &'static str,
        /// Its base.
        base: u64,
        /// Its size.
        len: u64,
    },
    /// An ECAM window that is not whole buses.
    #[error("the PCIe ECAM window at {base:#x} with size {len:#x} must be 1 to 256 whole MiB-aligned buses")]
    BadEcam {
        /// Its base.
        base: u64,
        /// Its size.
        len: u64,
    },
    /// The initrd is not inside RAM.
    #[error("the initrd [{start:#x}, {end:#x}) is not inside RAM [{ram_start:#x}, {ram_end:#x})")]
    InitrdOutsideRam {
        /// Initrd start.
        start: u64,
        /// Initrd end.
        end: u64,
        /// RAM start.
        ram_start: u64,
        /// RAM end.
        ram_end: u64,
    },
    /// The command line cannot be a device tree string.
    #[error("the kernel command line contains a NUL byte")]
    NulInBootargs,
    /// The blob is larger than a kernel accepts.
    #[error("the device tree is {size} bytes, more than the {MAX_DTB_SIZE} an arm64 kernel accepts (is the command line that long?)")]
    TooLarge {
        /// Its size.
        size: usize,
    },
    /// vm-fdt refused something (a bug in this crate, not in the input).
    #[error("writing the device tree: {0}")]
    Writer(#[from] vm_fdt::Error),
}

/// `name@hexaddress`, the node naming QEMU uses.
fn node_name(name: &str, base: u64) -> String {
    format!("{name}@{base:x}")
}

/// A `reg` with two address and two size cells.
fn reg(windows: &[Window]) -> Vec<u64> {
    windows.iter().flat_map(|w| [w.base, w.len]).collect()
}

fn check_window(what: &'static str, w: Window) -> Result<(), FdtError> {
    if w.len == 0 || w.end().is_none() {
        return Err(FdtError::BadWindow {
            what,
            base: w.base,
            len: w.len,
        });
    }
    Ok(())
}

/// Refuses a description no guest could use, before anything is written.
fn validate(m: &VirtMachine) -> Result<(), FdtError> {
    if m.mpidrs.is_empty() {
        return Err(FdtError::NoCpus);
    }
    check_window("RAM", m.ram)?;
    check_window("the GIC distributor", m.gic.dist)?;
    check_window("the GIC redistributor region", m.gic.redist)?;
    if let Some(its) = m.gic.its {
        check_window("the GIC ITS", its)?;
    }
    let need = m.mpidrs.len() as u64 * abi::VIRT_GIC_REDIST_STRIDE;
    if need > m.gic.redist.len {
        return Err(FdtError::RedistributorsTooSmall {
            cpus: m.mpidrs.len(),
            need,
            base: m.gic.redist.base,
            have: m.gic.redist.len,
        });
    }
    for (what, dev) in [("the PL011", m.uart), ("the PL031", m.rtc)] {
        if let Some(d) = dev {
            check_window(what, d.window)?;
        }
    }
    for v in &m.virtio {
        check_window("a virtio-mmio transport", v.window)?;
    }
    if let Some(p) = m.pcie {
        check_window("the PCIe ECAM window", p.ecam)?;
        check_window("the PCI I/O window", p.io)?;
        check_window("the PCI MMIO window", p.mmio)?;
        if p.ecam.base % (1 << 20) != 0
            || !(1..=256).contains(&p.buses())
            || p.ecam.len % (1 << 20) != 0
        {
            return Err(FdtError::BadEcam {
                base: p.ecam.base,
                len: p.ecam.len,
            });
        }
        if p.io.len > 1 << 32 || p.mmio.end().is_some_and(|e| e > 1 << 32) {
            return Err(FdtError::BadWindow {
                what: "a 32-bit PCI window",
                base: p.mmio.base,
                len: p.mmio.len,
            });
        }
    }
    if let Some(i) = m.initrd {
        // RAM was checked above, so its end does not overflow.
        let ram_end = m.ram.base + m.ram.len;
        if i.start > i.end || i.start < m.ram.base || i.end > ram_end {
            return Err(FdtError::InitrdOutsideRam {
                start: i.start,
                end: i.end,
                ram_start: m.ram.base,
                ram_end,
            });
        }
    }
    if m.bootargs.contains('\0') {
        return Err(FdtError::NulInBootargs);
    }
    Ok(())
}

/// Writes the device tree blob for `m`.
pub fn write(m: &VirtMachine) -> Result<Vec<u8>, FdtError> {
    validate(m)?;
    let mut fdt = FdtWriter::new()?;
    // The boot CPU's `reg` (a u32 in the header; Aff3 cannot be expressed
    // there, and arm64 kernels do not read it).
    fdt.set_boot_cpuid_phys((m.mpidrs[0] & MPIDR_AFFINITY_MASK) as u32);

    let root = fdt.begin_node("")?;
    fdt.property_string("compatible", "linux,dummy-virt")?;
    fdt.property_string("model", "linux,dummy-virt")?;
    fdt.property_u32("#address-cells", 2)?;
    fdt.property_u32("#size-cells", 2)?;
    fdt.property_u32("interrupt-parent", PHANDLE_GIC)?;

    psci(&mut fdt, m.psci)?;
    memory(&mut fdt, m.ram)?;
    cpus(&mut fdt, &m.mpidrs)?;
    timer(&mut fdt, m.timer)?;
    gic(&mut fdt, &m.gic)?;
    apb_pclk(&mut fdt)?;
    if let Some(uart) = m.uart {
        primecell(
            &mut fdt,
            "pl011",
            uart,
            &["uartclk", "apb_pclk"],
            &[PHANDLE_APB_PCLK, PHANDLE_APB_PCLK],
        )?;
    }
    if let Some(rtc) = m.rtc {
        primecell(&mut fdt, "pl031", rtc, &["apb_pclk"], &[PHANDLE_APB_PCLK])?;
    }
    for v in &m.virtio {
        virtio_mmio(&mut fdt, *v)?;
    }
    if let Some(p) = m.pcie {
        pcie(&mut fdt, p)?;
    }
    if let Some(ppi) = m.pmu_ppi {
        let node = fdt.begin_node("pmu")?;
        fdt.property_string("compatible", "arm,armv8-pmuv3")?;
        fdt.property_array_u32(
            "interrupts",
            &[GIC_FDT_IRQ_TYPE_PPI, ppi, IRQ_TYPE_LEVEL_HIGH],
        )?;
        fdt.end_node(node)?;
    }
    chosen(&mut fdt, m)?;
    fdt.end_node(root)?;

    let blob = fdt.finish()?;
    if blob.len() > MAX_DTB_SIZE {
        return Err(FdtError::TooLarge { size: blob.len() });
    }
    Ok(blob)
}

fn psci(fdt: &mut FdtWriter, method: PsciMethod) -> Result<(), FdtError> {
    let node = fdt.begin_node("psci")?;
    // KVM's PSCI is 0.2 or later; "arm,psci-0.2" is what kvm-unit-tests
    // requires, "arm,psci" what PSCI 0.1 guests look for.
    fdt.property_string_list(
        "compatible",
        vec!["arm,psci-0.2".to_owned(), "arm,psci".to_owned()],
    )?;
    fdt.property_string("method", method.as_str())?;
    // The PSCI 0.1 binding's function ids, which QEMU writes as well.
    fdt.property_u32("cpu_suspend", abi::PSCI_0_2_FN64_CPU_SUSPEND)?;
    fdt.property_u32("cpu_off", abi::PSCI_0_2_FN_CPU_OFF)?;
    fdt.property_u32("cpu_on", abi::PSCI_0_2_FN64_CPU_ON)?;
    fdt.property_u32("migrate", abi::PSCI_0_2_FN64_MIGRATE)?;
    fdt.end_node(node)?;
    Ok(())
}

fn memory(fdt: &mut FdtWriter, ram: Window) -> Result<(), FdtError> {
    let node = fdt.begin_node(&node_name("memory", ram.base))?;
    fdt.property_string("device_type", "memory")?;
    fdt.property_array_u64("reg", &reg(&[ram]))?;
    fdt.end_node(node)?;
    Ok(())
}

fn cpus(fdt: &mut FdtWriter, mpidrs: &[u64]) -> Result<(), FdtError> {
    let node = fdt.begin_node("cpus")?;
    // One address cell unless some CPU has an Aff3 (QEMU's rule, from the
    // arm cpus binding).
    let two_cells = mpidrs
        .iter()
        .any(|m| m & MPIDR_AFFINITY_MASK > u64::from(u32::MAX));
    fdt.property_u32("#address-cells", if two_cells { 2 } else { 1 })?;
    fdt.property_u32("#size-cells", 0)?;
    for (i, mpidr) in mpidrs.iter().enumerate() {
        let id = mpidr & MPIDR_AFFINITY_MASK;
        let cpu = fdt.begin_node(&format!("cpu@{i}"))?;
        fdt.property_string("device_type", "cpu")?;
        fdt.property_string("compatible", "arm,arm-v8")?;
        // PSCI CPU_ON brings every secondary up (and is harmless with one).
        fdt.property_string("enable-method", "psci")?;
        if two_cells {
            fdt.property_u64("reg", id)?;
        } else {
            fdt.property_u32("reg", id as u32)?;
        }
        fdt.end_node(cpu)?;
    }
    fdt.end_node(node)?;
    Ok(())
}

fn timer(fdt: &mut FdtWriter, t: TimerPpis) -> Result<(), FdtError> {
    let node = fdt.begin_node("timer")?;
    fdt.property_string_list(
        "compatible",
        vec!["arm,armv8-timer".to_owned(), "arm,armv7-timer".to_owned()],
    )?;
    fdt.property_null("always-on")?;
    let mut cells = Vec::with_capacity(12);
    for ppi in [t.secure_phys, t.phys, t.virt, t.hyp_phys] {
        cells.extend([GIC_FDT_IRQ_TYPE_PPI, ppi, IRQ_TYPE_LEVEL_HIGH]);
    }
    fdt.property_array_u32("interrupts", &cells)?;
    fdt.end_node(node)?;
    Ok(())
}

fn gic(fdt: &mut FdtWriter, g: &GicV3) -> Result<(), FdtError> {
    let node = fdt.begin_node(&node_name("intc", g.dist.base))?;
    fdt.property_string("compatible", "arm,gic-v3")?;
    fdt.property_u32("#interrupt-cells", 3)?;
    fdt.property_null("interrupt-controller")?;
    fdt.property_array_u64("reg", &reg(&[g.dist, g.redist]))?;
    fdt.property_u32("#redistributor-regions", 1)?;
    // The ITS child's `reg` is in the parent's address space.
    fdt.property_u32("#address-cells", 2)?;
    fdt.property_u32("#size-cells", 2)?;
    fdt.property_null("ranges")?;
    fdt.property_phandle(PHANDLE_GIC)?;
    if let Some(its) = g.its {
        let child = fdt.begin_node(&node_name("its", its.base))?;
        fdt.property_string("compatible", "arm,gic-v3-its")?;
        fdt.property_null("msi-controller")?;
        fdt.property_u32("#msi-cells", 1)?;
        fdt.property_array_u64("reg", &reg(&[its]))?;
        fdt.property_phandle(PHANDLE_ITS)?;
        fdt.end_node(child)?;
    }
    fdt.end_node(node)?;
    Ok(())
}

fn apb_pclk(fdt: &mut FdtWriter) -> Result<(), FdtError> {
    // Linux's PL011 and PL031 drivers refuse to probe without a clock.
    let node = fdt.begin_node("apb-pclk")?;
    fdt.property_string("compatible", "fixed-clock")?;
    fdt.property_u32("#clock-cells", 0)?;
    fdt.property_u32("clock-frequency", abi::VIRT_APB_PCLK_HZ)?;
    fdt.property_string("clock-output-names", "clk24mhz")?;
    fdt.property_phandle(PHANDLE_APB_PCLK)?;
    fdt.end_node(node)?;
    Ok(())
}

/// A PrimeCell device (`arm,<name>` + `arm,primecell`), level SPI, clocks.
fn primecell(
    fdt: &mut FdtWriter,
    name: &str,
    dev: MmioDevice,
    clock_names: &[&str],
    clocks: &[u32],
) -> Result<(), FdtError> {
    let node = fdt.begin_node(&node_name(name, dev.window.base))?;
    fdt.property_string_list(
        "compatible",
        vec![format!("arm,{name}"), "arm,primecell".to_owned()],
    )?;
    fdt.property_array_u64("reg", &reg(&[dev.window]))?;
    fdt.property_array_u32(
        "interrupts",
        &[GIC_FDT_IRQ_TYPE_SPI, dev.spi, IRQ_TYPE_LEVEL_HIGH],
    )?;
    fdt.property_array_u32("clocks", clocks)?;
    fdt.property_string_list(
        "clock-names",
        clock_names.iter().map(|s| (*s).to_owned()).collect(),
    )?;
    fdt.end_node(node)?;
    Ok(())
}

fn virtio_mmio(fdt: &mut FdtWriter, dev: MmioDevice) -> Result<(), FdtError> {
    let node = fdt.begin_node(&node_name("virtio_mmio", dev.window.base))?;
    fdt.property_string("compatible", "virtio,mmio")?;
    fdt.property_array_u64("reg", &reg(&[dev.window]))?;
    fdt.property_array_u32(
        "interrupts",
        &[GIC_FDT_IRQ_TYPE_SPI, dev.spi, IRQ_TYPE_EDGE_RISING],
    )?;
    fdt.property_null("dma-coherent")?;
    fdt.end_node(node)?;
    Ok(())
}

/// The first cell of a PCI address (the PCI bus binding's `phys.hi`):
/// the space code in bits 25:24.
const PCI_SPACE_IO: u32 = 0x0100_0000;
/// See [`PCI_SPACE_IO`]: 32-bit memory.
const PCI_SPACE_MEM32: u32 = 0x0200_0000;

/// The `pci-host-ecam-generic` node, as QEMU's `create_pcie` writes it for
/// the low map (without the high windows and MSIs).
fn pcie(fdt: &mut FdtWriter, p: PcieHost) -> Result<(), FdtError> {
    let node = fdt.begin_node(&node_name("pcie", p.mmio.base))?;
    fdt.property_string("compatible", "pci-host-ecam-generic")?;
    fdt.property_string("device_type", "pci")?;
    fdt.property_u32("#address-cells", 3)?;
    fdt.property_u32("#size-cells", 2)?;
    fdt.property_u32("linux,pci-domain", 0)?;
    fdt.property_array_u32("bus-range", &[0, (p.buses() - 1) as u32])?;
    fdt.property_null("dma-coherent")?;
    fdt.property_array_u64("reg", &reg(&[p.ecam]))?;
    // (PCI address: 3 cells, CPU address: 2, size: 2) per window.
    let hi = |v: u64| (v >> 32) as u32;
    let lo = |v: u64| v as u32;
    fdt.property_array_u32(
        "ranges",
        &[
            PCI_SPACE_IO,
            0,
            0,
            hi(p.io.base),
            lo(p.io.base),
            hi(p.io.len),
            lo(p.io.len),
            PCI_SPACE_MEM32,
            hi(p.mmio.base),
            lo(p.mmio.base),
            hi(p.mmio.base),
            lo(p.mmio.base),
            hi(p.mmio.len),
            lo(p.mmio.len),
        ],
    )?;
    // INTx: one cell (the pin, 1..=4). A child's unit address is
    // (devfn << 8) in phys.hi; only the slot's low two bits (mask 0x1800)
    // and the pin pick the SPI: (pin + slot) % 4, QEMU's swizzle. Each
    // entry then names the GIC with its two address cells (zero) and its
    // three interrupt cells.
    let pins = abi::VIRT_PCIE_INTX_PINS;
    fdt.property_u32("#interrupt-cells", 1)?;
    fdt.property_array_u32("interrupt-map-mask", &[0x1800, 0, 0, 7])?;
    let mut map = Vec::with_capacity((pins * pins * 10) as usize);
    for slot in 0..pins {
        for pin in 0..pins {
            map.extend([
                slot << 11,
                0,
                0,
                pin + 1,
                PHANDLE_GIC,
                0,
                0,
                GIC_FDT_IRQ_TYPE_SPI,
                p.first_spi + (pin + slot) % pins,
                IRQ_TYPE_LEVEL_HIGH,
            ]);
        }
    }
    fdt.property_array_u32("interrupt-map", &map)?;
    fdt.end_node(node)?;
    Ok(())
}

fn chosen(fdt: &mut FdtWriter, m: &VirtMachine) -> Result<(), FdtError> {
    let node = fdt.begin_node("chosen")?;
    if !m.bootargs.is_empty() {
        fdt.property_string("bootargs", &m.bootargs)?;
    }
    if let Some(path) = m.stdout_path() {
        fdt.property_string("stdout-path", &path)?;
    }
    if let Some(i) = m.initrd {
        // Two cells each, as the root's #address-cells (QEMU does the same).
        fdt.property_u64("linux,initrd-start", i.start)?;
        fdt.property_u64("linux,initrd-end", i.end)?;
    }
    fdt.end_node(node)?;
    Ok(())
}
