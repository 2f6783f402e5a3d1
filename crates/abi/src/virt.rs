//! The arm64 `virt` machine: where everything lives, laid out as QEMU's
//! `-machine virt` low memory map (hw/arm/virt.c `base_memmap[]` and
//! `a15irqmap[]`), so guests written for QEMU's machine (kvm-unit-tests,
//! Linux with a device tree) run unchanged. The one definition: the machine,
//! the device tree writer and the arm64 guest runtime (through the generated
//! C header) all read these.
//!
//! Interrupt numbers are written the way a device tree's `interrupts` cells
//! carry them: an SPI number `n` is GIC INTID `32 + n` (and KVM GSI `n` for
//! an irqfd), a PPI number `n` is INTID `16 + n`.

contract! {
VIRT_DEFINES;
// ---------------------------------------------------------------------------
// RAM and images.
// ---------------------------------------------------------------------------

/// Start of RAM (QEMU docs/system/arm/virt.rst: "RAM starts at
/// 0x4000_0000"; guests may hard-code it). Everything below is I/O space.
VIRT_RAM_BASE: u64 = 0x4000_0000;
/// Where a raw image (a kvm-unit-tests `.flat`) is loaded and entered:
/// RAM + 512 KiB, QEMU's `KERNEL64_LOAD_ADDR` (64 KiB aligned, as those
/// images need).
VIRT_RAW_IMAGE_BASE: u64 = VIRT_RAM_BASE + 0x8_0000;
/// Where trapline's own arm64 payloads (ELF) are linked: RAM + 2 MiB. QEMU
/// enters such an image with its device tree (1 MiB, unpacked) at the start
/// of RAM, and loads it only if it fits below the image, so the payloads
/// run on QEMU too.
VIRT_PAYLOAD_BASE: u64 = VIRT_RAM_BASE + 0x20_0000;
/// The exit-stamp mailbox (see `ANATOMY_SLOT_SIZE`): RAM + 64 KiB, below
/// the payloads and the raw images, where nothing is loaded (the device
/// tree goes above the image). Written only when the lab arms it.
VIRT_ANATOMY_MAILBOX: u64 = VIRT_RAM_BASE + 0x1_0000;

// ---------------------------------------------------------------------------
// The GICv3 (KVM's in-kernel vGIC) and its ITS.
// ---------------------------------------------------------------------------

/// GICv3 distributor (KVM_VGIC_V3_ADDR_TYPE_DIST).
VIRT_GIC_DIST_BASE: u64 = 0x0800_0000;
/// Size of the distributor frame (KVM's KVM_VGIC_V3_DIST_SIZE).
VIRT_GIC_DIST_LEN: u64 = 0x1_0000;
/// GICv3 ITS frame (KVM_VGIC_ITS_ADDR_TYPE).
VIRT_GIC_ITS_BASE: u64 = 0x0808_0000;
/// Size of the ITS frame (control + translation pages, 2 x 64 KiB).
VIRT_GIC_ITS_LEN: u64 = 0x2_0000;
/// First redistributor (KVM_VGIC_V3_ADDR_TYPE_REDIST): vCPU `i`'s frames
/// are at `VIRT_GIC_REDIST_BASE + i * VIRT_GIC_REDIST_STRIDE`.
VIRT_GIC_REDIST_BASE: u64 = 0x080A_0000;
/// One vCPU's redistributor (RD_base + SGI_base, 2 x 64 KiB; KVM's
/// KVM_VGIC_V3_REDIST_SIZE).
VIRT_GIC_REDIST_STRIDE: u64 = 0x2_0000;
/// vCPUs whose redistributors fit the low map's window (QEMU: "This
/// redistributor space allows up to 2*64kB*123 CPUs").
VIRT_GIC_REDIST_MAX_VCPUS: u32 = 123;
/// The whole redistributor window (it ends where the UART's page begins).
VIRT_GIC_REDIST_LEN: u64 = VIRT_GIC_REDIST_STRIDE * VIRT_GIC_REDIST_MAX_VCPUS as u64;
/// Interrupt lines the vGIC is given (KVM_DEV_ARM_VGIC_GRP_NR_IRQS): the 32
/// SGIs and PPIs plus 256 SPIs, as QEMU's `NUM_IRQS + 32`.
VIRT_GIC_NR_IRQS: u32 = 288;
/// GIC INTID of PPI 0 (a device tree PPI cell `n` is INTID `16 + n`).
GIC_PPI_INTID_BASE: u32 = 16;
/// GIC INTID of SPI 0 (a device tree SPI cell `n` is INTID `32 + n`).
GIC_SPI_INTID_BASE: u32 = 32;

// ---------------------------------------------------------------------------
// Per-CPU interrupts, as device tree PPI cells.
// ---------------------------------------------------------------------------

/// Architected timer, secure EL1 physical timer (INTID 29).
VIRT_TIMER_SEC_PPI: u32 = 13;
/// Architected timer, non-secure EL1 physical timer (INTID 30).
VIRT_TIMER_PHYS_PPI: u32 = 14;
/// Architected timer, EL1 virtual timer (INTID 27): the one KVM guests use.
VIRT_TIMER_VIRT_PPI: u32 = 11;
/// Architected timer, non-secure EL2 physical timer (INTID 26).
VIRT_TIMER_HYP_PPI: u32 = 10;
/// PMUv3 overflow interrupt (INTID 23; KVM_ARM_VCPU_PMU_V3_IRQ takes the
/// INTID).
VIRT_PMU_PPI: u32 = 7;

// ---------------------------------------------------------------------------
// Platform devices.
// ---------------------------------------------------------------------------

/// PL011 UART (the console; kvm-unit-tests' early printf writes here).
VIRT_PL011_BASE: u64 = 0x0900_0000;
/// Size of the PL011's register page.
VIRT_PL011_LEN: u64 = 0x1000;
/// The PL011's SPI.
VIRT_PL011_SPI: u32 = 1;
/// PL031 real-time clock.
VIRT_PL031_BASE: u64 = 0x0901_0000;
/// Size of the PL031's register page.
VIRT_PL031_LEN: u64 = 0x1000;
/// The PL031's SPI.
VIRT_PL031_SPI: u32 = 2;
/// Frequency of the fixed `apb-pclk` clock the PL011 and PL031 nodes name
/// (24 MHz, as QEMU's).
VIRT_APB_PCLK_HZ: u32 = 24_000_000;

/// First virtio-mmio transport; transport `n` is at
/// `VIRT_VIRTIO_MMIO_BASE + n * VIRT_VIRTIO_MMIO_STRIDE` with SPI
/// `VIRT_VIRTIO_MMIO_FIRST_SPI + n` (edge-triggered).
VIRT_VIRTIO_MMIO_BASE: u64 = 0x0A00_0000;
/// Size of one virtio-mmio transport.
VIRT_VIRTIO_MMIO_STRIDE: u64 = 0x200;
/// Number of transports (QEMU's NUM_VIRTIO_TRANSPORTS).
VIRT_VIRTIO_MMIO_COUNT: u32 = 32;
/// SPI of transport 0.
VIRT_VIRTIO_MMIO_FIRST_SPI: u32 = 16;
/// The whole virtio-mmio window.
VIRT_VIRTIO_MMIO_LEN: u64 = VIRT_VIRTIO_MMIO_STRIDE * VIRT_VIRTIO_MMIO_COUNT as u64;
/// The transport chr-testdev (a legacy virtio console on QEMU's testdev
/// backend, `--device chr-testdev`) takes: the last, which QEMU gives the
/// first virtio-mmio `-device` of a command line (disks take the first).
VIRT_CHR_TESTDEV_TRANSPORT: u32 = VIRT_VIRTIO_MMIO_COUNT - 1;

// ---------------------------------------------------------------------------
// trapline's own test devices. They sit at 0x0B00_0000, in the 32 MiB gap
// QEMU's low map leaves between the last virtio-mmio transport
// (0x0A00_3FFF) and the platform bus (0x0C00_0000): no QEMU version puts a
// device there, so a payload behaves the same on QEMU (where the window is
// unassigned) and kvm-unit-tests images, which only touch devices the device
// tree names, never reach it. Each register has its own 64 KiB page, so a
// guest with 64 KiB pages can map one without the other, and a hostile guest
// can avoid exactly these pages.
// ---------------------------------------------------------------------------

/// Base of trapline's window.
VIRT_TRAPLINE_BASE: u64 = 0x0B00_0000;
/// Size of trapline's window (room for the arm64 probe's pages later).
VIRT_TRAPLINE_LEN: u64 = 0x10_0000;
/// Size of each page in trapline's window.
VIRT_TRAPLINE_PAGE: u64 = 0x1_0000;
/// ucall: a 32-bit store of the guest-physical address of a [`Ucall`]
/// message (below 4 GiB, 8-byte aligned), as the x86 OUT to
/// [`UCALL_PORT`](crate::UCALL_PORT).
///
/// [`Ucall`]: crate::Ucall
VIRT_UCALL_MMIO: u64 = VIRT_TRAPLINE_BASE;
/// Debug exit: a store of V (any width) ends the VM with status
/// `(V << 1) | 1`, as isa-debug-exit on x86.
VIRT_DEBUG_EXIT_MMIO: u64 = VIRT_TRAPLINE_BASE + VIRT_TRAPLINE_PAGE;

// The lab's probe pages (`trapline bench` on arm64; mapped only in the
// lab's VMs), the arm64 counterparts of x86's PROBE_MMIO_* page by page:
// each mechanism on its own 64 KiB page after the ucall and debug exit.

/// A user-space MMIO device (reads return [`PROBE_READ_VALUE`](crate::PROBE_READ_VALUE)).
VIRT_PROBE_MMIO_USER: u64 = VIRT_TRAPLINE_BASE + 2 * VIRT_TRAPLINE_PAGE;
/// A KVM ioeventfd with no datamatch (length 0 where KVM allows any length).
VIRT_PROBE_MMIO_WILDCARD: u64 = VIRT_TRAPLINE_BASE + 3 * VIRT_TRAPLINE_PAGE;
/// A KVM ioeventfd matching [`PROBE_DATAMATCH_VALUE`](crate::PROBE_DATAMATCH_VALUE) (32-bit).
VIRT_PROBE_MMIO_DATAMATCH: u64 = VIRT_TRAPLINE_BASE + 4 * VIRT_TRAPLINE_PAGE;
/// A coalesced MMIO zone covers this page.
VIRT_PROBE_MMIO_COALESCED: u64 = VIRT_TRAPLINE_BASE + 5 * VIRT_TRAPLINE_PAGE;
/// A KVM_MEM_READONLY memslot page: its first u32 reads
/// [`PROBE_READ_VALUE`](crate::PROBE_READ_VALUE); writes exit as MMIO.
VIRT_PROBE_RO_MEMSLOT: u64 = VIRT_TRAPLINE_BASE + 6 * VIRT_TRAPLINE_PAGE;
/// Doorbell (seed 002) served in user space: a store exits to trapline,
/// whose device signals an eventfd for the consumer thread.
VIRT_DOORBELL_MMIO_USER: u64 = VIRT_TRAPLINE_BASE + 7 * VIRT_TRAPLINE_PAGE;
/// Doorbell page with a KVM ioeventfd (any length): KVM signals the eventfd.
VIRT_DOORBELL_MMIO_KERNEL: u64 = VIRT_TRAPLINE_BASE + 8 * VIRT_TRAPLINE_PAGE;
/// The paravirtual doorbell (seed 002's PV row as x86 defines it: the
/// doorbell's identity, [`DOORBELL_PV_IDENTITY`](crate::DOORBELL_PV_IDENTITY),
/// written to one address a 32-bit datamatch ioeventfd watches). x86 uses
/// a port; arm64 has none, so it is this page's first word.
VIRT_DOORBELL_PV_MMIO: u64 = VIRT_TRAPLINE_BASE + 9 * VIRT_TRAPLINE_PAGE;
/// The first probe page.
VIRT_PROBE_FIRST: u64 = VIRT_PROBE_MMIO_USER;
/// The probe pages served by the lab's user-space device (user, wildcard,
/// datamatch, coalesced; the read-only memslot page is its own mapping).
VIRT_PROBE_DEVICE_LEN: u64 = 4 * VIRT_TRAPLINE_PAGE;

/// The SGI (INTID 0-15) the arm64 probe sends between vCPUs and to itself.
VIRT_IPI_SGI: u32 = 1;
/// The SPI the lab binds its irqfd to (KVM GSI = SPI number on arm64; the
/// guest sees INTID 32 + this), clear of every device's SPI.
VIRT_IRQFD_SPI: u32 = 64;
/// The GICv3 distributor's implementer register (GICD_IIDR): the register
/// the `mmio-vgic-read` scenario reads, as kvm-unit-tests' micro-bench
/// `mmio_read_vgic` does; KVM's vGIC answers it without leaving the kernel.
VIRT_GICD_IIDR: u64 = VIRT_GIC_DIST_BASE + 0x8;

// ---------------------------------------------------------------------------
// The PCIe host bridge (QEMU's gpex: `pci-host-ecam-generic` in the device
// tree) and its windows in QEMU's low map. Bus 0 holds the host bridge at
// 00:00.0 and, with `--device pci-testdev`, pci-testdev at 00:02.0.
// ---------------------------------------------------------------------------

/// 32-bit PCIe MMIO window.
VIRT_PCIE_MMIO_BASE: u64 = 0x1000_0000;
/// Size of the 32-bit PCIe MMIO window.
VIRT_PCIE_MMIO_LEN: u64 = 0x2EFF_0000;
/// PCIe I/O port window (memory-mapped).
VIRT_PCIE_PIO_BASE: u64 = 0x3EFF_0000;
/// Size of the PCIe I/O window (64 KiB of ports).
VIRT_PCIE_PIO_LEN: u64 = 0x1_0000;
/// PCIe ECAM (configuration space, 16 buses).
VIRT_PCIE_ECAM_BASE: u64 = 0x3F00_0000;
/// Size of the low ECAM window.
VIRT_PCIE_ECAM_LEN: u64 = 0x0100_0000;
/// Bus numbers the low ECAM window decodes (1 MiB each: `bus-range` 0..15).
VIRT_PCIE_BUSES: u32 = 16;
/// SPI of INTA (INTB..INTD follow).
VIRT_PCIE_FIRST_SPI: u32 = 3;
/// INTx lines the host bridge swizzles onto SPIs (QEMU's PCI_NUM_PINS).
VIRT_PCIE_INTX_PINS: u32 = 4;
/// First port the machine gives I/O BARs (below it the PV doorbell port;
/// Linux's arm64 PCIBIOS_MIN_IO is the same 0x1000).
VIRT_PCIE_IO_BAR_FIRST_PORT: u64 = 0x1000;
}

contract! {
PSCI_DEFINES;
// ---------------------------------------------------------------------------
// PSCI 0.2 (Arm DEN 0022), served by KVM for an EL1 guest through HVC. The
// function ids are the PSCI specification's; the device tree's `psci` node
// names some of them, the guest runtime calls them.
// ---------------------------------------------------------------------------

/// PSCI_VERSION.
PSCI_0_2_FN_PSCI_VERSION: u32 = 0x8400_0000;
/// CPU_SUSPEND, SMC64 calling convention.
PSCI_0_2_FN64_CPU_SUSPEND: u32 = 0xC400_0001;
/// CPU_OFF.
PSCI_0_2_FN_CPU_OFF: u32 = 0x8400_0002;
/// CPU_ON, SMC64: x1 = target MPIDR, x2 = entry point, x3 = context id
/// (the new CPU's x0).
PSCI_0_2_FN64_CPU_ON: u32 = 0xC400_0003;
/// MIGRATE, SMC64.
PSCI_0_2_FN64_MIGRATE: u32 = 0xC400_0005;
/// SYSTEM_OFF: KVM ends KVM_RUN with KVM_SYSTEM_EVENT_SHUTDOWN.
PSCI_0_2_FN_SYSTEM_OFF: u32 = 0x8400_0008;
/// SYSTEM_RESET: KVM ends KVM_RUN with KVM_SYSTEM_EVENT_RESET.
PSCI_0_2_FN_SYSTEM_RESET: u32 = 0x8400_0009;
/// The return value of a call that succeeded.
PSCI_RET_SUCCESS: u32 = 0;
/// An SMCCC function id no firmware or hypervisor service trapline knows
/// defines (a fast SiP-service call): KVM answers it itself with
/// [`SMCCC_RET_NOT_SUPPORTED`], without an exit to user space (the
/// `hypercall` scenario on arm64).
SMCCC_PROBE_UNKNOWN_FN: u32 = 0x8200_ff10;
/// SMCCC's NOT_SUPPORTED (-1) as the 64-bit value x0 holds after the call.
SMCCC_RET_NOT_SUPPORTED: u64 = u64::MAX;
/// The SMCCC function id (a fast SiP-service call next to
/// [`SMCCC_PROBE_UNKNOWN_FN`]) the lab asks KVM's SMCCC filter to forward
/// to trapline (`KVM_SMCCC_FILTER_FWD_TO_USER`, Linux 6.4+): the
/// `hypercall-user` scenario, an HVC answered in user space.
SMCCC_PROBE_USER_FN: u32 = 0x8200_ff11;
/// What trapline answers in x0 to [`SMCCC_PROBE_USER_FN`] (the guest
/// checks it: only trapline can have answered).
SMCCC_PROBE_USER_RET: u64 = 0x7ab1_e5ad_0000_0011;
}

/// One window of the `virt` machine's I/O space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VirtWindow {
    /// What lives there.
    pub name: &'static str,
    /// First address.
    pub base: u64,
    /// Size in bytes.
    pub len: u64,
}

impl VirtWindow {
    /// One past the last address.
    pub const fn end(&self) -> u64 {
        self.base + self.len
    }
}

/// Every window of the `virt` machine below RAM, in address order. The
/// hostile arm64 payload aims at these and at the gaps between them (which
/// trapline leaves unmapped).
pub const VIRT_WINDOWS: &[VirtWindow] = &[
    VirtWindow {
        name: "gic-dist",
        base: VIRT_GIC_DIST_BASE,
        len: VIRT_GIC_DIST_LEN,
    },
    VirtWindow {
        name: "gic-its",
        base: VIRT_GIC_ITS_BASE,
        len: VIRT_GIC_ITS_LEN,
    },
    VirtWindow {
        name: "gic-redist",
        base: VIRT_GIC_REDIST_BASE,
        len: VIRT_GIC_REDIST_LEN,
    },
    VirtWindow {
        name: "pl011",
        base: VIRT_PL011_BASE,
        len: VIRT_PL011_LEN,
    },
    VirtWindow {
        name: "pl031",
        base: VIRT_PL031_BASE,
        len: VIRT_PL031_LEN,
    },
    VirtWindow {
        name: "virtio-mmio",
        base: VIRT_VIRTIO_MMIO_BASE,
        len: VIRT_VIRTIO_MMIO_LEN,
    },
    VirtWindow {
        name: "trapline",
        base: VIRT_TRAPLINE_BASE,
        len: VIRT_TRAPLINE_LEN,
    },
    VirtWindow {
        name: "pcie-mmio",
        base: VIRT_PCIE_MMIO_BASE,
        len: VIRT_PCIE_MMIO_LEN,
    },
    VirtWindow {
        name: "pcie-pio",
        base: VIRT_PCIE_PIO_BASE,
        len: VIRT_PCIE_PIO_LEN,
    },
    VirtWindow {
        name: "pcie-ecam",
        base: VIRT_PCIE_ECAM_BASE,
        len: VIRT_PCIE_ECAM_LEN,
    },
];

/// Whether `windows` are non-empty, in ascending order, pairwise disjoint
/// and all below RAM.
const fn ordered_and_disjoint(windows: &[VirtWindow]) -> bool {
    let mut i = 0;
    while i < windows.len() {
        let w = windows[i];
        if w.len == 0 || w.end() > VIRT_RAM_BASE {
            return false;
        }
        if i > 0 && windows[i - 1].end() > w.base {
            return false;
        }
        i += 1;
    }
    true
}

// The map is consistent (checked at compile time): ordered, disjoint, below
// RAM; the redistributors end where the UART begins, as in QEMU; the
// machine's vCPU limit fits the redistributor window; the test registers
// sit inside trapline's window, on separate pages; payloads load in RAM.
const _: () = assert!(ordered_and_disjoint(VIRT_WINDOWS));
const _: () = assert!(VIRT_GIC_REDIST_BASE + VIRT_GIC_REDIST_LEN == VIRT_PL011_BASE);
const _: () = assert!(VIRT_GIC_DIST_BASE + VIRT_GIC_DIST_LEN <= VIRT_GIC_ITS_BASE);
const _: () = assert!(crate::MAX_VCPUS <= VIRT_GIC_REDIST_MAX_VCPUS);
const _: () =
    assert!(VIRT_DEBUG_EXIT_MMIO + VIRT_TRAPLINE_PAGE <= VIRT_TRAPLINE_BASE + VIRT_TRAPLINE_LEN);
const _: () =
    assert!(VIRT_UCALL_MMIO / VIRT_TRAPLINE_PAGE != VIRT_DEBUG_EXIT_MMIO / VIRT_TRAPLINE_PAGE);
const _: () = assert!(VIRT_TRAPLINE_BASE.is_multiple_of(VIRT_TRAPLINE_PAGE));
// The probe pages follow the debug exit and end inside trapline's window.
const _: () = assert!(VIRT_PROBE_FIRST == VIRT_DEBUG_EXIT_MMIO + VIRT_TRAPLINE_PAGE);
const _: () = assert!(VIRT_PROBE_MMIO_COALESCED < VIRT_PROBE_FIRST + VIRT_PROBE_DEVICE_LEN);
const _: () =
    assert!(VIRT_PROBE_RO_MEMSLOT + VIRT_TRAPLINE_PAGE <= VIRT_TRAPLINE_BASE + VIRT_TRAPLINE_LEN);
const _: () = assert!(
    VIRT_DOORBELL_MMIO_USER == VIRT_PROBE_RO_MEMSLOT + VIRT_TRAPLINE_PAGE
        && VIRT_DOORBELL_MMIO_KERNEL == VIRT_DOORBELL_MMIO_USER + VIRT_TRAPLINE_PAGE
        && VIRT_DOORBELL_MMIO_KERNEL + VIRT_TRAPLINE_PAGE <= VIRT_TRAPLINE_BASE + VIRT_TRAPLINE_LEN
);
const _: () = assert!(
    VIRT_DOORBELL_PV_MMIO == VIRT_DOORBELL_MMIO_KERNEL + VIRT_TRAPLINE_PAGE
        && VIRT_DOORBELL_PV_MMIO + VIRT_TRAPLINE_PAGE <= VIRT_TRAPLINE_BASE + VIRT_TRAPLINE_LEN
);
// The ECAM window holds exactly its buses; the PV doorbell port and the
// I/O BARs fit the I/O window, the port below the BARs.
const _: () = assert!(VIRT_PCIE_ECAM_LEN == VIRT_PCIE_BUSES as u64 * 0x10_0000);
const _: () = assert!(
    (crate::PV_DOORBELL_PORT as u64) + 4 <= VIRT_PCIE_IO_BAR_FIRST_PORT
        && VIRT_PCIE_IO_BAR_FIRST_PORT < VIRT_PCIE_PIO_LEN
);
const _: () = assert!(VIRT_PCIE_FIRST_SPI + VIRT_PCIE_INTX_PINS <= VIRT_VIRTIO_MMIO_FIRST_SPI);
const _: () = assert!(
    VIRT_IRQFD_SPI + GIC_SPI_INTID_BASE < VIRT_GIC_NR_IRQS
        && VIRT_IRQFD_SPI >= VIRT_VIRTIO_MMIO_FIRST_SPI + VIRT_VIRTIO_MMIO_COUNT
);
const _: () = assert!(VIRT_IPI_SGI < 16);
const _: () =
    assert!(VIRT_RAW_IMAGE_BASE.is_multiple_of(0x1_0000) && VIRT_RAW_IMAGE_BASE > VIRT_RAM_BASE);
const _: () = assert!(
    VIRT_PAYLOAD_BASE.is_multiple_of(0x1_0000) && VIRT_PAYLOAD_BASE - VIRT_RAM_BASE >= 0x10_0000
);
const _: () = assert!(
    VIRT_VIRTIO_MMIO_FIRST_SPI + VIRT_VIRTIO_MMIO_COUNT + GIC_SPI_INTID_BASE <= VIRT_GIC_NR_IRQS
);
const _: () = assert!(VIRT_GIC_NR_IRQS.is_multiple_of(32) && VIRT_GIC_NR_IRQS < 1020);
const _: () = assert!(VIRT_CHR_TESTDEV_TRANSPORT < VIRT_VIRTIO_MMIO_COUNT);

/// The (C name, value) pairs of the `virt` map and PSCI, for [`c_header`](crate::c_header).
pub(crate) fn c_defines() -> impl Iterator<Item = &'static (&'static str, u64)> {
    VIRT_DEFINES.iter().chain(PSCI_DEFINES)
}

/// The redistributor frames of vCPU `index`, if it is within the window.
pub const fn virt_gic_redist(index: u32) -> Option<VirtWindow> {
    if index >= VIRT_GIC_REDIST_MAX_VCPUS {
        return None;
    }
    Some(VirtWindow {
        name: "gic-redist",
        base: VIRT_GIC_REDIST_BASE + index as u64 * VIRT_GIC_REDIST_STRIDE,
        len: VIRT_GIC_REDIST_STRIDE,
    })
}

/// The virtio-mmio transport `n`: its window and its SPI.
pub const fn virt_virtio_mmio(n: u32) -> Option<(VirtWindow, u32)> {
    if n >= VIRT_VIRTIO_MMIO_COUNT {
        return None;
    }
    Some((
        VirtWindow {
            name: "virtio-mmio",
            base: VIRT_VIRTIO_MMIO_BASE + n as u64 * VIRT_VIRTIO_MMIO_STRIDE,
            len: VIRT_VIRTIO_MMIO_STRIDE,
        },
        VIRT_VIRTIO_MMIO_FIRST_SPI + n,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_match_qemus_low_map() {
        // Spot checks against hw/arm/virt.c base_memmap[].
        let by_name = |n: &str| VIRT_WINDOWS.iter().find(|w| w.name == n).copied().unwrap();
        assert_eq!(by_name("gic-redist").len, 0x00F6_0000);
        assert_eq!(by_name("pl011").base, 0x0900_0000);
        assert_eq!(by_name("pcie-ecam").end(), VIRT_RAM_BASE);
        assert_eq!(by_name("virtio-mmio").end(), 0x0A00_4000);
        assert!(ordered_and_disjoint(VIRT_WINDOWS));
    }

    #[test]
    fn the_overlap_check_rejects_overlaps_and_disorder() {
        let a = VirtWindow {
            name: "a",
            base: 0x1000,
            len: 0x1000,
        };
        let b = VirtWindow {
            name: "b",
            base: 0x1800,
            len: 0x1000,
        };
        let c = VirtWindow {
            name: "c",
            base: 0x2000,
            len: 0x1000,
        };
        assert!(ordered_and_disjoint(&[a, c]));
        assert!(!ordered_and_disjoint(&[a, b]));
        assert!(!ordered_and_disjoint(&[c, a]));
        let ram = VirtWindow {
            name: "ram",
            base: VIRT_RAM_BASE - 0x1000,
            len: 0x2000,
        };
        assert!(!ordered_and_disjoint(&[ram]));
    }

    #[test]
    fn per_vcpu_and_per_transport_windows() {
        assert_eq!(virt_gic_redist(0).unwrap().base, VIRT_GIC_REDIST_BASE);
        assert_eq!(
            virt_gic_redist(VIRT_GIC_REDIST_MAX_VCPUS - 1)
                .unwrap()
                .end(),
            VIRT_PL011_BASE
        );
        assert!(virt_gic_redist(VIRT_GIC_REDIST_MAX_VCPUS).is_none());
        let (w, spi) = virt_virtio_mmio(31).unwrap();
        assert_eq!((w.base, spi), (0x0A00_3E00, 47));
        assert!(virt_virtio_mmio(32).is_none());
    }
}
