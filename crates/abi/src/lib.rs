//! The contract between trapline's own guest payloads and the host.
//!
//! This crate is the ONE definition of that contract. The host side uses it
//! directly; the guest side (C and assembly, built by `trapline-guest`'s
//! build script) gets a generated header, `trapline_abi.h`, written from the
//! tables below by [`c_header`]. Change a value here and both sides follow.
//!
//! Everything is `no_std` and `const` so the guest build script can depend on
//! it without pulling in anything else.
#![no_std]

extern crate alloc;

use alloc::string::String;
use core::fmt::Write as _;

/// Defines each constant once, for both sides: the `pub const` the host
/// crates import, and a (name, value) entry of `$table`, from which
/// [`c_header`] writes the same name as a C `#define`.
macro_rules! contract {
    ($table:ident; $( $(#[$attr:meta])* $name:ident : $ty:ty = $value:expr; )*) => {
        $( $(#[$attr])* pub const $name: $ty = $value; )*
        /// Every constant of this table as its C name and value.
        const $table: &[(&str, u64)] = &[ $( (stringify!($name), $name as u64) ),* ];
    };
}

/// Declares a C-visible enum once: the Rust enum (`#[repr(u32)]`), its
/// `ALL` list and each variant's C name, which [`c_header`] writes as a
/// `#define` of the variant's value.
macro_rules! c_enum {
    ($(#[$attr:meta])* pub enum $name:ident { $( $(#[$vattr:meta])* $variant:ident = $value:literal $c:literal, )* }) => {
        $(#[$attr])*
        #[repr(u32)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name { $( $(#[$vattr])* $variant = $value, )* }

        impl $name {
            /// Every variant, in value order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The `#define` name the generated C header gives this variant.
            pub const fn c_name(self) -> &'static str {
                match self { $($name::$variant => $c,)* }
            }
        }
    };
}

mod anatomy;
mod hist;
mod kvmtool;
mod virt;
pub use anatomy::*;
pub use hist::*;
pub use kvmtool::*;
pub use virt::*;

contract! {
CONTRACT_DEFINES;
// ---------------------------------------------------------------------------
// Standard PC ports trapline models (shared with kvm-unit-tests' machine).
// ---------------------------------------------------------------------------

/// COM1 16550 UART base port.
COM1_PORT: u16 = 0x3f8;
/// isa-debug-exit port: a 32-bit OUT of V ends the VM with status (V << 1) | 1.
DEBUG_EXIT_PORT: u16 = 0xf4;
/// Width of the isa-debug-exit register window (QEMU `iosize=0x4`).
DEBUG_EXIT_LEN: u16 = 4;
/// Bochs/QEMU power-off port: writing the bytes "Shutdown" powers the VM off.
BOCHS_SHUTDOWN_PORT: u16 = 0x8900;

// ---------------------------------------------------------------------------
// trapline's own ports (0x700..0x71f), unused by PC hardware and by QEMU's pc
// machine, so the same payload runs on QEMU (where they read all-ones).
// ---------------------------------------------------------------------------

/// ucall: a 32-bit OUT of the guest-physical address of a [`Ucall`] message.
UCALL_PORT: u16 = 0x700;
/// A user-space device: reads return [`PROBE_READ_VALUE`], writes are counted.
PROBE_PIO_USER_PORT: u16 = 0x704;
/// Served by trapline's minimal in-loop handler, bypassing buses and devices
/// (the `vmm-floor-pio` scenario); a plain bus device otherwise.
PROBE_PIO_FLOOR_PORT: u16 = 0x708;
/// A KVM ioeventfd with no datamatch (wildcard) is registered here.
PROBE_PIO_WILDCARD_PORT: u16 = 0x70c;
/// A KVM ioeventfd matching [`PROBE_DATAMATCH_VALUE`] (32-bit) is registered here.
PROBE_PIO_DATAMATCH_PORT: u16 = 0x710;
/// A coalesced PIO zone covers this port.
PROBE_PIO_COALESCED_PORT: u16 = 0x714;
/// The paravirtual doorbell port (PCI/doorbell issues): the guest writes a
/// doorbell identity and KVM signals the matching ioeventfd.
PV_DOORBELL_PORT: u16 = 0x718;
/// Doorbell port with a KVM ioeventfd (any length).
DOORBELL_PIO_PORT: u16 = 0x71c;
/// What a paravirtual doorbell write carries: the doorbell's identity,
/// matched by a datamatch ioeventfd on [`PV_DOORBELL_PORT`].
DOORBELL_PV_IDENTITY: u32 = 0x0000_d00b;
/// Number of trapline-owned ports starting at [`UCALL_PORT`].
TRAPLINE_PORTS_LEN: u16 = 0x20;

/// The value every probe user-space device returns on a read, so a scenario
/// can verify that its read really reached the device.
PROBE_READ_VALUE: u32 = 0x7ab1_e5ad;
/// The value the datamatch scenarios write (and KVM matches on).
PROBE_DATAMATCH_VALUE: u32 = 0x0000_00fa;
/// The value the wildcard scenarios write (anything would do).
PROBE_WILDCARD_VALUE: u32 = 0x0000_00ce;

// ---------------------------------------------------------------------------
// trapline's probe MMIO window: one 4 KiB page per mechanism. Placed below the
// PCI hole and above any RAM trapline allows (RAM is capped at 3 GiB).
// ---------------------------------------------------------------------------

/// Base of the probe MMIO window.
PROBE_MMIO_BASE: u64 = 0xd000_0000;
/// A user-space MMIO device (reads return [`PROBE_READ_VALUE`]).
PROBE_MMIO_USER: u64 = PROBE_MMIO_BASE;
/// A KVM ioeventfd with no datamatch (length 0 where KVM allows any length).
PROBE_MMIO_WILDCARD: u64 = PROBE_MMIO_BASE + 0x1000;
/// A KVM ioeventfd matching [`PROBE_DATAMATCH_VALUE`] (32-bit).
PROBE_MMIO_DATAMATCH: u64 = PROBE_MMIO_BASE + 0x2000;
/// A coalesced MMIO zone covers this page.
PROBE_MMIO_COALESCED: u64 = PROBE_MMIO_BASE + 0x3000;
/// A page of host memory mapped as a KVM_MEM_READONLY memslot. Its first u32
/// reads [`PROBE_READ_VALUE`]; writes exit as MMIO.
PROBE_RO_MEMSLOT: u64 = PROBE_MMIO_BASE + 0x10000;
/// Doorbell (seed 002) served in user space: a store exits to trapline,
/// whose device signals an eventfd for the consumer thread (QEMU's path).
DOORBELL_MMIO_USER: u64 = PROBE_MMIO_BASE + 0x4000;
/// Doorbell page with a KVM ioeventfd (any length): KVM signals the eventfd.
DOORBELL_MMIO_KERNEL: u64 = PROBE_MMIO_BASE + 0x5000;
/// Size of each probe page.
PROBE_PAGE_SIZE: u64 = 0x1000;
/// Size of the whole probe window.
PROBE_MMIO_LEN: u64 = 0x20000;
/// The exit-stamp mailbox (see [`anatomy`](crate::ANATOMY_SLOT_SIZE)): a
/// page of conventional memory below the EBDA that neither the loader's
/// boot area (below 64 KiB) nor any payload (linked at 4 MiB, or below
/// 0x9000) uses. The run loop writes it only when the lab arms it.
ANATOMY_MAILBOX: u64 = 0x9_e000;

/// PCI ECAM (MMCONFIG) window base: bus 0 occupies the first 1 MiB
/// (offset = bus << 20 | device << 15 | function << 12 | register).
ECAM_BASE: u64 = 0xc000_0000;
/// PCI configuration mechanism #1 address port.
PCI_CONFIG_ADDRESS_PORT: u16 = 0xcf8;
/// PCI configuration mechanism #1 data port.
PCI_CONFIG_DATA_PORT: u16 = 0xcfc;
/// pci-testdev's vendor and device id as one config dword (device << 16 | vendor).
PCI_TESTDEV_ID: u32 = 0x0005_1b36;
/// The pci-testdev header's `test` value that selects the paravirtual
/// variant of a BAR's tests (kept out of the range QEMU's scan walks).
PCI_TESTDEV_PV_SELECT: u8 = 0x80;
/// Bit set in a pci-testdev header `offset` meaning "an absolute port,
/// not an offset in this BAR" (the PV doorbell).
PCI_TESTDEV_OFFSET_ABSOLUTE: u32 = 0x8000_0000;

/// Vector of the IPIs the probe sends between vCPUs and to itself.
IPI_VECTOR: u8 = 0x40;
/// IOAPIC pin (GSI) the lab binds an irqfd to.
IRQFD_GSI: u32 = 10;
/// Vector the probe programs for [`IRQFD_GSI`].
IRQFD_VECTOR: u8 = 0x50;

/// Highest amount of guest RAM trapline maps (it sits below the probe window
/// and the PCI hole, so there is no RAM above 4 GiB to describe).
MAX_RAM_MIB: u64 = 3072;

// ---------------------------------------------------------------------------
// The rest of the guest-physical address map and the machine's limits: the
// one definition every crate imports (trapline-machine's layout module adds
// the list of holes built from these).
// ---------------------------------------------------------------------------

/// Most vCPUs a machine has (KVM's per-VM limit on the hosts trapline
/// targets is far higher; the payloads' per-CPU arrays are sized by this).
MAX_VCPUS: u32 = 64;
/// Size of the ECAM window: bus 0 only (1 MiB).
ECAM_LEN: u64 = 0x10_0000;
/// First virtio-mmio device window (4 KiB each, consecutive).
VIRTIO_MMIO_BASE: u64 = 0xd800_0000;
/// Size of the virtio-mmio window (room for 256 devices; 8 are used).
VIRTIO_MMIO_WINDOW: u64 = 0x10_0000;
/// PCI MMIO BAR window (top-down allocation gives BAR0 = 0xFEBF_F000, as
/// QEMU's pc machine).
PCI_MMIO_BASE: u64 = 0xe000_0000;
/// End (exclusive) of the PCI MMIO BAR window: the IOAPIC page.
PCI_MMIO_END: u64 = 0xfec0_0000;
/// First port of the PCI I/O BAR window.
PCI_IO_BASE: u64 = 0xc000;
/// End (exclusive) of the PCI I/O window.
PCI_IO_END: u64 = 0x1_0000;
/// KVM's in-kernel IOAPIC page.
IOAPIC_BASE: u64 = 0xfec0_0000;
/// The page the machine keeps for the IOAPIC.
IOAPIC_LEN: u64 = 0x1000;
/// The xAPIC page (KVM's in-kernel LAPIC, or trapline's fallback page).
LAPIC_BASE: u64 = 0xfee0_0000;
/// Size of the xAPIC page.
LAPIC_LEN: u64 = 0x1000;
/// KVM's identity-map page (KVM_SET_IDENTITY_MAP_ADDR; Intel real mode).
KVM_IDENTITY_MAP_ADDR: u64 = 0xfeff_c000;
/// KVM's TSS pages (KVM_SET_TSS_ADDR; three pages after the identity map).
KVM_TSS_ADDR: u64 = 0xfeff_d000;
/// Size of the range KVM keeps for itself from [`KVM_IDENTITY_MAP_ADDR`].
KVM_PRIVATE_LEN: u64 = 0x4000;
/// Where the ACPI tables live (the BIOS area QEMU's firmware uses too).
ACPI_AREA_BASE: u64 = 0xe_0000;
/// Size of the ACPI area (up to 1 MiB).
ACPI_AREA_LEN: u64 = 0x2_0000;

// virtio-net (`trapline run --net`): what a guest driver needs to find and
// drive the device. Its transport is not fixed: a driver scans the
// virtio-mmio transports for DeviceID VIRTIO_NET_DEVICE_ID.
/// virtio DeviceID of a network card.
VIRTIO_NET_DEVICE_ID: u32 = 1;
/// The receive queue's index.
VIRTIO_NET_RX_QUEUE: u32 = 0;
/// The transmit queue's index.
VIRTIO_NET_TX_QUEUE: u32 = 1;
/// Entries each queue may have (QueueNumMax).
VIRTIO_NET_QUEUE_SIZE: u32 = 256;
/// Bytes of `struct virtio_net_hdr_v1` before every frame on both queues.
VIRTIO_NET_HDR_LEN: u32 = 12;
/// Largest Ethernet frame (no FCS) either queue carries: a 1500-byte MTU.
VIRTIO_NET_MAX_FRAME: u32 = 1514;
/// Smallest frame the device transmits: an Ethernet header.
VIRTIO_NET_MIN_FRAME: u32 = 14;
/// The device's MAC address (config space bytes 0..6, most significant
/// byte first): 52:54:00:12:34:56, a locally administered address.
VIRTIO_NET_MAC: u64 = 0x5254_0012_3456;
}

// RAM must end below every device window, and the windows must not overlap
// (checked at compile time).
const _: () = assert!(MAX_RAM_MIB << 20 <= ECAM_BASE && ECAM_BASE + ECAM_LEN <= PROBE_MMIO_BASE);
const _: () = assert!(PROBE_MMIO_BASE + PROBE_MMIO_LEN <= VIRTIO_MMIO_BASE);
const _: () = assert!(VIRTIO_MMIO_BASE + VIRTIO_MMIO_WINDOW <= PCI_MMIO_BASE);
const _: () = assert!(PCI_MMIO_END <= IOAPIC_BASE && IOAPIC_BASE < LAPIC_BASE);
const _: () = assert!(LAPIC_BASE + LAPIC_LEN <= KVM_IDENTITY_MAP_ADDR);
const _: () = assert!(ACPI_AREA_BASE + ACPI_AREA_LEN <= 0x10_0000);

// ---------------------------------------------------------------------------
// The ucall message.
// ---------------------------------------------------------------------------

contract! {
UCALL_DEFINES;
/// Magic in the first word of every [`Ucall`] ("TRPL").
UCALL_MAGIC: u32 = 0x4c50_5254;
/// Bytes of text a ucall carries (NUL-terminated inside this space).
UCALL_TEXT_LEN: usize = 64;
/// Number of u64 arguments a ucall carries.
UCALL_ARGS: usize = 6;
/// Iterations a scenario's recorded pass (its tails) stamps at most: the
/// probe records min(final batch's iterations, this) after the timed
/// batches, each iteration stamped alone into a [`GuestHist`].
TAILS_SAMPLE_CAP: u64 = 4096;
}

/// A structured message from a guest payload to the host runner.
///
/// The guest fills one of these in its own RAM (8-byte aligned) and does a
/// 32-bit OUT of its guest-physical address to [`UCALL_PORT`]. The host reads
/// it back from guest memory; a message that is out of RAM, misaligned or
/// lacks [`UCALL_MAGIC`] is counted as malformed and otherwise ignored.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ucall {
    /// Always [`UCALL_MAGIC`].
    pub magic: u32,
    /// One of the [`UcallKind`] values.
    pub kind: u32,
    /// Meaning depends on `kind`; see [`UcallKind`].
    pub args: [u64; UCALL_ARGS],
    /// NUL-terminated text (assert message, scenario name, …).
    pub text: [u8; UCALL_TEXT_LEN],
}

/// Size of a [`Ucall`] in guest memory.
pub const UCALL_SIZE: usize = core::mem::size_of::<Ucall>();

c_enum! {
    /// What a ucall says. Arguments are `args[0..]`.
    pub enum UcallKind {
        /// A progress marker: `args[0]` = stage number.
        Sync = 1 "UCALL_SYNC",
        /// A scenario's timed loop is about to start: `args[0]` = scenario id.
        /// The host snapshots the calling vCPU's exit counters.
        Begin = 2 "UCALL_BEGIN",
        /// A scenario finished: `args[0]` = scenario id, `args[1]` = iterations,
        /// `args[2]` = total TSC cycles of the timed loop, `args[3]` = the value the
        /// scenario checks (read-back value, or 0), `args[4]` = [`ResultStatus`].
        Result = 3 "UCALL_RESULT",
        /// A guest assertion failed: `args[0]` = line, text = message.
        Assert = 4 "UCALL_ASSERT",
        /// The payload is done: `args[0]` = exit code it is about to report.
        Done = 5 "UCALL_DONE",
        /// A vCPU checked in (SMP payloads): `args[0]` = APIC ID, `args[1]` = number
        /// of vCPUs the guest believes it has.
        Checkin = 6 "UCALL_CHECKIN",
        /// A count the guest reports: `args[0]` = what (payload specific),
        /// `args[1]` = the count.
        Count = 7 "UCALL_COUNT",
        /// Clock probe: the host writes its TSC (u64) to guest-physical
        /// `args[0]` while handling the exit, so the guest can estimate the
        /// offset between its TSC and the host's (Cristian's method: the
        /// host stamp lies between the guest's readings before and after).
        Clock = 8 "UCALL_CLOCK",
        /// Start a host-driven interrupt run (irqfd): `args[0]` = injections,
        /// `args[1]` = GPA of a u64 array where the host stamps its TSC just
        /// before each injection, `args[2]` = GPA of the u64 counter the guest's
        /// handler increments (the host waits for it before the next one).
        /// The guest must not reset a counter the host may still be polling:
        /// each run uses a fresh (or alternating) counter, else the host can
        /// miss the last acknowledgement of the previous run.
        IrqfdStart = 9 "UCALL_IRQFD_START",
        /// A scenario's recorded pass (its tails) is done: `args[0]` = scenario
        /// id, `args[1]` = GPA of its [`GuestHist`] (one value per
        /// iteration, in the probe's clock), `args[2]` = GPA of a u64 the host
        /// sets to 1 once it has read the block (the guest reuses the block
        /// only then), `args[3]` = the stamp pair's own cost (the median
        /// empty stamped iteration), `args[4]` = iterations the pass meant to
        /// record.
        Hist = 10 "UCALL_HIST",
        /// One path's anatomy (see [`AnatomyHeader`]): `args[0]` = scenario
        /// id, `args[1]` = GPA of its block (an [`AnatomyHeader`], then
        /// [`ANATOMY_LEGS`] `struct guest_hist`s: exit, VMM, entry, round
        /// trip), `args[2]` = [`ResultStatus`]. The guest never reuses a
        /// block, so the host may read it after the run.
        Anatomy = 11 "UCALL_ANATOMY",
    }
}

impl UcallKind {
    /// Decode a raw kind, `None` for values this ABI does not define.
    pub const fn from_raw(raw: u32) -> Option<Self> {
        Some(match raw {
            1 => Self::Sync,
            2 => Self::Begin,
            3 => Self::Result,
            4 => Self::Assert,
            5 => Self::Done,
            6 => Self::Checkin,
            7 => Self::Count,
            8 => Self::Clock,
            9 => Self::IrqfdStart,
            10 => Self::Hist,
            11 => Self::Anatomy,
            _ => return None,
        })
    }
}

c_enum! {
    /// How a scenario's own check came out (`args[4]` of a Result ucall).
    pub enum ResultStatus {
        /// Ran and its check passed.
        Ok = 0 "RESULT_OK",
        /// Ran but read back a wrong value.
        BadValue = 1 "RESULT_BAD_VALUE",
        /// The guest could not run it (missing CPU feature, …).
        Unsupported = 2 "RESULT_UNSUPPORTED",
    }
}

impl ResultStatus {
    /// Decode a raw status, `None` for values this ABI does not define.
    pub const fn from_raw(raw: u64) -> Option<Self> {
        Some(match raw {
            0 => Self::Ok,
            1 => Self::BadValue,
            2 => Self::Unsupported,
            _ => return None,
        })
    }
}

/// KVM's own per-vCPU exit counters (its binary statistics) a ucall can be
/// stamped with, so the lab sees in-kernel exits beside trapline's; the
/// raw-KVM floor reads the same ones around its loops. Host-side only: the
/// guest never sees these names.
pub const KERNEL_EXIT_COUNTERS: [&str; 10] = [
    "exits",
    "io_exits",
    "mmio_exits",
    "halt_exits",
    "irq_exits",
    "signal_exits",
    "irq_window_exits",
    "request_irq_exits",
    "insn_emulation",
    "hypercalls",
];

// ---------------------------------------------------------------------------
// Scenarios the probe payload knows. The host selects them on the Multiboot
// command line (so the same binary runs on QEMU): `s=<id>[,<id>…] goal=<tsc
// cycles> min=<iterations> max=<iterations>`.
// ---------------------------------------------------------------------------

c_enum! {
    /// Which of the probe's routines runs a scenario: its set-up before the
    /// warm-up, its timed loop and its teardown. The probe's harness picks
    /// them by this field of the scenario's table entry, never by id; the
    /// routine itself may tell its own variants apart by id.
    pub enum Routine {
        /// `exits.c`: one asm loop around one (trapping or not) instruction;
        /// no set-up or teardown.
        Exits = 0 "ROUTINE_EXITS",
        /// `pci.c`: finds pci-testdev (and ECAM) and selects the test before
        /// the warm-up, deselects it afterwards.
        Pci = 1 "ROUTINE_PCI",
        /// `ipi.c`: puts the APICs (and vCPU 1) in the mode the scenario
        /// needs; each iteration waits for an interrupt handler.
        Ipi = 2 "ROUTINE_IPI",
        /// `irqfd.c`: routes the irqfd's IOAPIC pin, estimates the
        /// guest-host TSC offset, lets the host inject; batches are capped
        /// at the probe's stamp arrays.
        Irqfd = 3 "ROUTINE_IRQFD",
    }
}

c_enum! {
    /// The value a scenario's loop must leave in the Result's `value` for
    /// the guest's own check to pass (anything else is
    /// [`ResultStatus::BadValue`]).
    pub enum Expect {
        /// No value check (the routine may still report `BadValue` itself,
        /// e.g. a handler count that is off).
        Any = 0 "EXPECT_ANY",
        /// [`PROBE_READ_VALUE`]: a read that really reached the probe device
        /// (or the RAM word, or the read-only memslot, holding it).
        ProbeReadValue = 1 "EXPECT_PROBE_READ_VALUE",
        /// [`PCI_TESTDEV_ID`]: a config read of pci-testdev's vendor/device dword.
        PciTestdevId = 2 "EXPECT_PCI_TESTDEV_ID",
    }
}

impl Expect {
    /// The value the check requires, `None` for [`Expect::Any`].
    pub const fn value(self) -> Option<u64> {
        match self {
            Expect::Any => None,
            Expect::ProbeReadValue => Some(PROBE_READ_VALUE as u64),
            Expect::PciTestdevId => Some(PCI_TESTDEV_ID as u64),
        }
    }
}

/// One measurable guest operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScenarioId {
    /// The number on the command line and in Result ucalls.
    pub id: u32,
    /// The name in the CLI, JSON and reports.
    pub name: &'static str,
    /// The C identifier suffix in the generated header.
    pub c_name: &'static str,
    /// The probe routine that runs it.
    pub routine: Routine,
    /// The value the guest checks its loop read back.
    pub expect: Expect,
}

/// Rows `id C_NAME "name" Routine Expect;`: one per scenario.
macro_rules! scenarios {
    ($($id:literal $c:ident $name:literal $routine:ident $expect:ident;)*) => {
        /// Each scenario by its C name (`scenario::PIO_USER_OUT`), for the
        /// host's catalog to name the very record the probe is built from.
        pub mod scenario {
            use super::{Expect, Routine, ScenarioId};
            $(
                #[doc = concat!("`", $name, "` (id ", stringify!($id), ").")]
                pub const $c: ScenarioId = ScenarioId {
                    id: $id,
                    name: $name,
                    c_name: stringify!($c),
                    routine: Routine::$routine,
                    expect: Expect::$expect,
                };
            )*
        }
        /// Every scenario the probe payload implements, by id.
        pub const SCENARIOS: &[ScenarioId] = &[$(scenario::$c,)*];
    };
}

scenarios! {
    // id C_NAME "name"; then its Routine (the probe file that runs it) and
    // its Expect (the value its loop must read back).
    0 NOOP "noop"                                                     Exits Any;
    1 HYPERCALL "hypercall"                                           Exits Any;
    2 CPUID "cpuid"                                                   Exits Any;
    3 HLT "hlt"                                                       Exits Any;
    4 PIO_USER_OUT "pio-user-out"                                     Exits Any;
    5 PIO_USER_IN "pio-user-in"                                       Exits ProbeReadValue;
    6 PIO_KERNEL_WILDCARD "pio-kernel-wildcard"                       Exits Any;
    7 PIO_KERNEL_DATAMATCH "pio-kernel-datamatch"                     Exits Any;
    8 MMIO_USER_READ "mmio-user-read"                                 Exits ProbeReadValue;
    9 MMIO_USER_WRITE "mmio-user-write"                               Exits Any;
    10 MMIO_KERNEL_WILDCARD "mmio-kernel-wildcard"                    Exits Any;
    11 MMIO_KERNEL_DATAMATCH "mmio-kernel-datamatch"                  Exits Any;
    12 COALESCED_MMIO "coalesced-mmio"                                Exits Any;
    13 COALESCED_PIO "coalesced-pio"                                  Exits Any;
    14 RAM_READ "ram-read"                                            Exits ProbeReadValue;
    15 RO_MEMSLOT_READ "ro-memslot-read"                              Exits ProbeReadValue;
    16 RO_MEMSLOT_WRITE "ro-memslot-write"                            Exits Any;
    17 VMM_FLOOR_PIO "vmm-floor-pio"                                  Exits Any;
    18 PIO_KERNEL_PIC "pio-kernel-pic"                                Exits Any;
    // pci-testdev (seed 003), named and ordered as in the seed. The guest
    // finds the device by scanning bus 0 through CF8/CFC, selects the test
    // (PV ones with PCI_TESTDEV_PV_SELECT), and writes `data` at `offset`
    // of the BAR (or to the absolute port for PV); the Result value is the
    // header's `count` read after the batch.
    19 PCI_MMIO_NO_EVENTFD "mmio-no-eventfd:pci-mem"                  Pci   Any;
    20 PCI_MMIO_WILDCARD_EVENTFD "mmio-wildcard-eventfd:pci-mem"      Pci   Any;
    21 PCI_MMIO_DATAMATCH_EVENTFD "mmio-datamatch-eventfd:pci-mem"    Pci   Any;
    22 PCI_MMIO_PV_EVENTFD "mmio-pv-eventfd:pci-mem"                  Pci   Any;
    23 PCI_PORTIO_NO_EVENTFD "portio-no-eventfd:pci-io"               Pci   Any;
    24 PCI_PORTIO_WILDCARD_EVENTFD "portio-wildcard-eventfd:pci-io"   Pci   Any;
    25 PCI_PORTIO_DATAMATCH_EVENTFD "portio-datamatch-eventfd:pci-io" Pci   Any;
    26 PCI_PORTIO_PV_EVENTFD "portio-pv-eventfd:pci-io"               Pci   Any;
    // PCI config reads (seed 004): one iteration reads pci-testdev's
    // vendor/device dword (value checked == PCI_TESTDEV_ID).
    27 PCI_CONFIG_READ_CF8 "pci-config-read-cf8"                      Pci   PciTestdevId;
    28 PCI_CONFIG_READ_ECAM "pci-config-read-ecam"                    Pci   PciTestdevId;
    29 PCI_CONFIG_READ_ECAM_RO "pci-config-read-ecam-ro"              Pci   PciTestdevId;
    // One iteration enumerates bus 0: 256 devfn, vendor+device dword each;
    // the Result value is the number of functions found.
    30 PCI_SCAN_CF8 "pci-scan-cf8"                                    Pci   Any;
    31 PCI_SCAN_ECAM "pci-scan-ecam"                                  Pci   Any;
    32 PCI_SCAN_ECAM_RO "pci-scan-ecam-ro"                            Pci   Any;
    // Interrupts (seeds 000/001: IPI and EOI). The probe runs these with
    // `cpus=2`: vCPU 1 sits in its IPI handler loop. `ipi`: vCPU 1 spins
    // with interrupts on; `ipi-halt`: vCPU 1 waits in HLT; the loop body on
    // vCPU 0 sends IPI_VECTOR and waits for vCPU 1's handler to count it
    // (a round trip). `self-ipi`: send to self, wait for the handler.
    // `eoi`: self-IPI, but the Result cycles are the sum of the EOI writes
    // timed inside the handler. `-x2apic`: the same through x2APIC MSRs.
    33 IPI "ipi"                                                      Ipi   Any;
    34 IPI_HALT "ipi-halt"                                            Ipi   Any;
    35 SELF_IPI "self-ipi"                                            Ipi   Any;
    36 EOI "eoi"                                                      Ipi   Any;
    37 IPI_X2APIC "ipi-x2apic"                                        Ipi   Any;
    38 IPI_HALT_X2APIC "ipi-halt-x2apic"                              Ipi   Any;
    39 SELF_IPI_X2APIC "self-ipi-x2apic"                              Ipi   Any;
    40 EOI_X2APIC "eoi-x2apic"                                        Ipi   Any;
    // irqfd: the guest routes IRQFD_GSI to IRQFD_VECTOR on the IOAPIC,
    // estimates the TSC offset with Clock ucalls, then sends IrqfdStart;
    // a host thread injects through the irqfd. The Result cycles are the
    // sum over injections of (guest handler TSC − host stamp, in guest
    // TSC terms); value = the offset's uncertainty in cycles.
    41 IRQFD "irqfd"                                                  Irqfd Any;
    // Doorbells (seed 002): each iteration is one ring; a host consumer
    // thread reads the eventfd and counts; the host checks its count
    // equals every ring.
    42 DOORBELL_USER_MMIO "doorbell-user-mmio"                        Exits Any;
    43 DOORBELL_IOEVENTFD_MMIO "doorbell-ioeventfd-mmio"              Exits Any;
    44 DOORBELL_IOEVENTFD_PIO "doorbell-ioeventfd-pio"                Exits Any;
    45 DOORBELL_PV "doorbell-pv"                                      Exits Any;
    // A byte written to COM1's scratch register (port COM1_PORT + 7): one
    // exit into the 16550 model (vm-superio behind its lock), no output.
    46 PIO_UART_OUT "pio-uart-out"                                    Exits Any;
    // arm64 only (the arm64 probe, payloads/aarch64/probe/). An MRS of
    // ID_AA64PFR0_EL1: KVM traps every ID register read (HCR_EL2.TID3)
    // and emulates it in the kernel, as x86 KVM intercepts CPUID; the
    // arm64 stand-in for the paper's "Trap" row.
    47 SYSREG_TRAP "sysreg-trap"                                      Exits Any;
    // arm64 only: a load of the vGIC distributor's GICD_IIDR, an MMIO
    // access KVM's in-kernel vGIC answers (seed 000's mmio_read_vgic, the
    // paper's "I/O Kernel" on ARM).
    48 MMIO_VGIC_READ "mmio-vgic-read"                                Exits Any;
    // arm64 only: an HVC that KVM's SMCCC filter forwards to trapline
    // (KVM_EXIT_HYPERCALL, Linux 6.4+), answered in user space: the
    // paper's Hypercall served by the VMM. (60: clear of the ids other
    // arm64 work may take next to 48.)
    60 HYPERCALL_USER "hypercall-user"                                Exits Any;
}

/// Look a scenario up by its CLI/JSON name.
pub fn scenario_by_name(name: &str) -> Option<&'static ScenarioId> {
    SCENARIOS.iter().find(|s| s.name == name)
}

/// Look a scenario up by id.
pub fn scenario_by_id(id: u32) -> Option<&'static ScenarioId> {
    SCENARIOS.iter().find(|s| s.id == id)
}

/// Renders the C header the guest payloads include. Called by the guest
/// build script; the output is deterministic.
pub fn c_header() -> String {
    let mut h = String::new();
    let mut def = |name: &str, value: u64| {
        let _ = writeln!(h, "#define {name} 0x{value:x}ULL");
    };
    for (name, value) in CONTRACT_DEFINES
        .iter()
        .chain(UCALL_DEFINES)
        .chain(virt::c_defines())
        .chain(hist::HIST_DEFINES)
        .chain(anatomy::C_DEFINES)
    {
        def(name, *value);
    }
    for k in UcallKind::ALL {
        def(k.c_name(), *k as u64);
    }
    for r in ResultStatus::ALL {
        def(r.c_name(), *r as u64);
    }
    for a in ClockAlign::ALL {
        def(a.c_name(), *a as u64);
    }
    for r in Routine::ALL {
        def(r.c_name(), *r as u64);
    }
    for e in Expect::ALL {
        def(e.c_name(), *e as u64);
    }
    for s in SCENARIOS {
        def(&alloc::format!("SCENARIO_{}", s.c_name), s.id.into());
    }
    def("SCENARIO_COUNT", SCENARIOS.len() as u64);
    let mut out = String::from(
        "/* Generated by trapline-abi's c_header(); do not edit. */\n#ifndef TRAPLINE_ABI_H\n#define TRAPLINE_ABI_H\n",
    );
    out.push_str(&h);
    let _ = writeln!(
        out,
        "struct ucall {{\n    unsigned int magic;\n    unsigned int kind;\n    unsigned long long args[{UCALL_ARGS}];\n    char text[{UCALL_TEXT_LEN}];\n}} __attribute__((aligned(8)));\n_Static_assert(sizeof(struct ucall) == {UCALL_SIZE}, \"ucall layout\");"
    );
    out.push_str(anatomy::C_STRUCTS);
    let _ = writeln!(
        out,
        "struct guest_hist {{\n    unsigned long long magic, count, min, max, sum;\n    unsigned int counts[{HIST_BUCKETS}];\n}} __attribute__((aligned(8)));\n_Static_assert(sizeof(struct guest_hist) == {GUEST_HIST_SIZE}, \"guest_hist layout\");"
    );
    out.push_str("#endif\n");
    out
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    #[test]
    fn ucall_layout_is_stable() {
        assert_eq!(UCALL_SIZE, 4 + 4 + 8 * UCALL_ARGS + UCALL_TEXT_LEN);
        assert_eq!(core::mem::align_of::<Ucall>(), 8);
    }

    #[test]
    fn scenario_ids_and_names_are_unique() {
        for (i, a) in SCENARIOS.iter().enumerate() {
            for b in &SCENARIOS[i + 1..] {
                assert_ne!(a.id, b.id);
                assert_ne!(a.name, b.name);
            }
        }
        assert_eq!(scenario_by_name("pio-user-out").unwrap().id, 4);
        assert!(scenario_by_name("nope").is_none());
    }

    #[test]
    fn header_defines_every_scenario_and_the_struct() {
        let h = c_header();
        for s in SCENARIOS {
            assert!(h.contains(&alloc::format!(
                "#define SCENARIO_{} 0x{:x}ULL",
                s.c_name,
                s.id
            )));
        }
        for r in Routine::ALL {
            assert!(h.contains(&alloc::format!(
                "#define {} 0x{:x}ULL",
                r.c_name(),
                *r as u32
            )));
        }
        for e in Expect::ALL {
            assert!(h.contains(&alloc::format!(
                "#define {} 0x{:x}ULL",
                e.c_name(),
                *e as u32
            )));
        }
        for k in UcallKind::ALL {
            assert!(h.contains(&alloc::format!(
                "#define {} 0x{:x}ULL",
                k.c_name(),
                *k as u32
            )));
        }
        for r in ResultStatus::ALL {
            assert!(h.contains(&alloc::format!(
                "#define {} 0x{:x}ULL",
                r.c_name(),
                *r as u32
            )));
        }
        assert!(h.contains("#define UCALL_IRQFD_START 0x9ULL"));
        assert!(h.contains("#define RESULT_BAD_VALUE 0x1ULL"));
        assert!(h.contains("#define ROUTINE_PCI 0x1ULL"));
        assert!(h.contains("#define EXPECT_PCI_TESTDEV_ID 0x2ULL"));
        assert!(h.contains("struct ucall"));
        assert!(h.contains("#define UCALL_PORT 0x700ULL"));
        assert!(h.contains("#define VIRT_PL011_BASE 0x9000000ULL"));
        assert!(h.contains("#define VIRT_UCALL_MMIO 0xb000000ULL"));
        assert!(h.contains("#define PSCI_0_2_FN64_CPU_ON 0xc4000003ULL"));
    }

    #[test]
    fn routine_and_expect_c_names_and_values_are_distinct() {
        for (i, a) in Routine::ALL.iter().enumerate() {
            assert_eq!(*a as usize, i, "Routine::ALL is in value order");
            for b in &Routine::ALL[i + 1..] {
                assert_ne!(a.c_name(), b.c_name());
            }
        }
        for (i, a) in Expect::ALL.iter().enumerate() {
            assert_eq!(*a as usize, i, "Expect::ALL is in value order");
            for b in &Expect::ALL[i + 1..] {
                assert_ne!(a.c_name(), b.c_name());
            }
        }
    }

    #[test]
    fn ucall_kinds_and_statuses_decode_what_the_header_defines() {
        for (i, k) in UcallKind::ALL.iter().enumerate() {
            assert_eq!(
                *k as usize,
                i + 1,
                "UcallKind::ALL is in value order from 1"
            );
            assert_eq!(UcallKind::from_raw(*k as u32), Some(*k));
            for b in &UcallKind::ALL[i + 1..] {
                assert_ne!(k.c_name(), b.c_name());
            }
        }
        assert_eq!(UcallKind::from_raw(0), None);
        assert_eq!(UcallKind::from_raw(UcallKind::ALL.len() as u32 + 1), None);
        for (i, r) in ResultStatus::ALL.iter().enumerate() {
            assert_eq!(*r as usize, i, "ResultStatus::ALL is in value order");
            assert_eq!(ResultStatus::from_raw(*r as u64), Some(*r));
            for b in &ResultStatus::ALL[i + 1..] {
                assert_ne!(r.c_name(), b.c_name());
            }
        }
        assert_eq!(ResultStatus::from_raw(ResultStatus::ALL.len() as u64), None);
    }

    #[test]
    fn the_value_checks_are_the_abi_values() {
        let s = |name| scenario_by_name(name).unwrap();
        assert_eq!(
            s("pio-user-in").expect.value(),
            Some(PROBE_READ_VALUE.into())
        );
        assert_eq!(s("ram-read").expect.value(), Some(PROBE_READ_VALUE.into()));
        assert_eq!(
            s("pci-config-read-ecam").expect.value(),
            Some(PCI_TESTDEV_ID.into())
        );
        assert_eq!(s("pci-config-read-ecam").routine, Routine::Pci);
        assert_eq!(s("pio-user-out").expect.value(), None);
        assert_eq!(s("irqfd").routine, Routine::Irqfd);
    }

    #[test]
    fn probe_pages_sit_inside_the_window_and_above_ram() {
        for p in [
            PROBE_MMIO_USER,
            PROBE_MMIO_WILDCARD,
            PROBE_MMIO_DATAMATCH,
            PROBE_MMIO_COALESCED,
            PROBE_RO_MEMSLOT,
            DOORBELL_MMIO_USER,
            DOORBELL_MMIO_KERNEL,
        ] {
            assert!(
                p >= PROBE_MMIO_BASE && p + PROBE_PAGE_SIZE <= PROBE_MMIO_BASE + PROBE_MMIO_LEN
            );
        }
    }
}
