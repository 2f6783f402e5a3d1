//! Shared pieces of trapline's fuzz targets.
//!
//! Every target reads its input as a *stream of operations* with the
//! hand-rolled, byte-oriented format below (not `arbitrary`), so that
//! `examples/seed.rs` can write meaningful seeds with [`Enc`] and a crash
//! file can be read by eye. Decoding never fails: a stream that runs out
//! reads zeros and the target stops at the end of its input.
//!
//! [`Machine`] is the full device set at trapline's real addresses (see
//! `crates/machine/src/assemble.rs` and `layout.rs`), [`Access`] one guest
//! access (PIO or MMIO, any width, optionally a string I/O).

pub mod virtio;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};

use trapline_abi as abi;
// The lab's devices (probe, user-space doorbell) live in their own crate,
// which installs them through the machine's extension point.
use trapline_lab_devices::probe::{ProbeDevice, ProbeSpace};
use trapline_lab_devices::user_doorbell::Doorbell;
use trapline_bus::{AccessSizes, Bus, BusBuilder, BusDevice, ExitCounters};
use trapline_devices::debug_exit::DebugExit;
use trapline_devices::fw_cfg::{FwCfg, FW_CFG_IO_BASE, FW_CFG_IO_LEN};
use trapline_devices::lapic_fallback::{LapicFallback, LAPIC_PAGE_BASE, LAPIC_PAGE_LEN};
use trapline_devices::pc_testdev::{IrqLine, PageFlusher, PcTestdev};
use trapline_devices::pci::{
    PciBuilder, PciDevices, PciLayout, PciTestDev, RecordingRegistry, Space, TESTDEV_DEVFN,
};
use trapline_devices::pm_timer::{Clock, PmIo, PmTimer, PM_IO_BASE, PM_IO_LEN};
use trapline_devices::power::BochsShutdown;
use trapline_devices::rtc::{CmosMemory, Rtc, RTC_PORT, RTC_PORT_LEN};
use trapline_devices::serial::{SerialOutput, Uart, UART_LEN};
use trapline_devices::ucall::{UcallEvent, UcallPort};
use vm_memory::{GuestAddress, GuestMemoryMmap};
use vmm_sys_util::eventfd::{EventFd, EFD_NONBLOCK};

// ---------------------------------------------------------------------------
// How the bus cuts an access, written out plainly (the model the bus
// targets check trapline_bus::AccessSizes against).
// ---------------------------------------------------------------------------

/// One piece of a guest access as the bus should cut it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    /// Index of the piece's first byte in the access.
    pub at: usize,
    /// Its length in bytes.
    pub len: usize,
    /// Its address (meaningless past the top of the address space).
    pub addr: u64,
    /// The base of the mapping at `addr`, if any.
    pub base: Option<u64>,
    /// Whether the device gets it: mapped, and not below its minimum.
    pub delivered: bool,
}

/// The pieces an access of `len` bytes at `addr` is cut into, given a
/// lookup of the mapping (base and sizes) at an address: QEMU's rule. A
/// piece is as wide as it can be without exceeding the sizes' maximum or
/// the rest of the access, a power of two, aligned to its offset unless
/// the sizes allow unaligned pieces; where nothing is mapped, QEMU's
/// default sizes apply at the address itself; past the top of the address
/// space nothing is mapped.
pub fn model_pieces(
    lookup: impl Fn(u64) -> Option<(u64, AccessSizes)>,
    addr: u64,
    len: usize,
) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < len {
        let Some(a) = addr.checked_add(at as u64) else {
            out.push(Piece {
                at,
                len: len - at,
                addr: 0,
                base: None,
                delivered: false,
            });
            break;
        };
        let (base, sizes, offset) = match lookup(a) {
            Some((b, s)) => (Some(b), s, a - b),
            None => (None, AccessSizes::QEMU_DEFAULT, a),
        };
        let mut cap = sizes.max();
        if !sizes.unaligned() {
            let mut align = 1usize;
            while align < cap && offset % (2 * align as u64) == 0 {
                align *= 2;
            }
            cap = align;
        }
        let mut n = 1;
        while n * 2 <= cap.min(len - at) {
            n *= 2;
        }
        out.push(Piece {
            at,
            len: n,
            addr: a,
            base,
            delivered: base.is_some() && n >= sizes.min(),
        });
        at += n;
    }
    out
}

// ---------------------------------------------------------------------------
// Input decoding and encoding.
// ---------------------------------------------------------------------------

/// A cursor over the fuzz input. Reads past the end return zeros.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    /// A cursor at the start of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Self { data }
    }

    /// Whether everything has been consumed.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Bytes left.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Up to `n` bytes (fewer at the end of the input).
    pub fn bytes(&mut self, n: usize) -> &'a [u8] {
        let n = n.min(self.data.len());
        let (head, tail) = self.data.split_at(n);
        self.data = tail;
        head
    }

    /// Everything left.
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.data)
    }

    fn le<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        let b = self.bytes(N);
        out[..b.len()].copy_from_slice(b);
        out
    }

    /// One byte.
    pub fn u8(&mut self) -> u8 {
        self.le::<1>()[0]
    }

    /// A little-endian u16.
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.le())
    }

    /// A little-endian u32.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.le())
    }

    /// A little-endian u64.
    pub fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.le())
    }
}

/// Writes inputs in the format [`Input`] reads (for seeds and tests).
#[derive(Clone, Debug, Default)]
pub struct Enc(pub Vec<u8>);

impl Enc {
    /// An empty stream.
    pub fn new() -> Self {
        Self::default()
    }
    /// Append one byte.
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    /// Append a little-endian u16.
    pub fn u16(&mut self, v: u16) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// Append a little-endian u32.
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// Append a little-endian u64.
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// Append raw bytes.
    pub fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.0.extend_from_slice(v);
        self
    }
}

/// Widest single access the harness generates (a string I/O, or a guest
/// `rep movs` the way a buggy VMM might hand it over in one piece).
pub const MAX_LONG: usize = 4096;

/// Decode an access width from a 3-bit selector: 1, 2, 4, 8, 0, 3, then a
/// byte-sized odd width (0..16) or a long one (0..=4096) read from `input`.
pub fn width(sel: u8, input: &mut Input<'_>) -> usize {
    match sel & 7 {
        0 => 1,
        1 => 2,
        2 => 4,
        3 => 8,
        4 => 0,
        5 => 3,
        6 => usize::from(input.u8() % 16),
        _ => usize::from(input.u16()) % (MAX_LONG + 1),
    }
}

/// The 3-bit selector and trailing bytes [`width`] decodes to `len`.
pub fn encode_width(e: &mut Enc, len: usize) -> u8 {
    match len {
        1 => 0,
        2 => 1,
        4 => 2,
        8 => 3,
        0 => 4,
        3 => 5,
        n if n < 16 => {
            e.u8(n as u8);
            6
        }
        n => {
            e.u16(n as u16);
            7
        }
    }
}

// ---------------------------------------------------------------------------
// Guest accesses.
// ---------------------------------------------------------------------------

/// Where an access goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Mapping number `index` (modulo the bus's mapping count) of the bus,
    /// at `offset` modulo (its length + 16): hits every device, its edges and
    /// just past its end.
    Mapping {
        /// Index into `Bus::mappings()`.
        index: u8,
        /// Offset from the mapping's base.
        offset: u32,
    },
    /// An absolute address (a port for PIO: masked to 16 bits).
    Raw(u64),
    /// pci-testdev's BAR `bar` (0: MMIO, 1: I/O) where it is routed now,
    /// at `offset` modulo (BAR size + 16); the window's base if unrouted.
    Bar {
        /// BAR index.
        bar: u8,
        /// Offset inside the BAR.
        offset: u32,
    },
}

/// One guest access, as the vCPU loop would dispatch it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// OUT / MMIO write (else IN / MMIO read).
    pub write: bool,
    /// Port or memory bus.
    pub space: Space,
    /// Where.
    pub target: Target,
    /// Bytes per element.
    pub len: usize,
    /// Elements (> 1: string I/O, each element one bus access at the same
    /// address, like `pio_out`/`pio_in` in crates/kvm/src/run.rs).
    pub count: usize,
    /// Calling vCPU index (sometimes beyond any real vCPU).
    pub vcpu: usize,
    /// Read: what the buffer holds before the device fills it. Write: the
    /// pattern used for bytes past the first 8.
    pub fill: u8,
    /// Write: the first 8 bytes (little-endian).
    pub value: u64,
}

impl Access {
    /// Decode one access.
    pub fn decode(input: &mut Input<'_>) -> Access {
        let ctl = input.u8();
        let write = ctl & 1 != 0;
        let space = if ctl & 2 != 0 {
            Space::Mmio
        } else {
            Space::Pio
        };
        let target = match (ctl >> 2) & 3 {
            0 => Target::Mapping {
                index: input.u8(),
                offset: input.u16().into(),
            },
            1 => Target::Raw(input.u64()),
            2 => Target::Bar {
                bar: input.u8(),
                offset: input.u16().into(),
            },
            _ => Target::Mapping {
                index: input.u8(),
                offset: input.u32(),
            },
        };
        let len = width(ctl >> 4, input);
        let count = if ctl & 0x80 != 0 {
            1 + usize::from(input.u8() % 16)
        } else {
            1
        };
        let aux = input.u8();
        let vcpu = if aux & 0x80 != 0 {
            usize::from(aux & 0x7f)
        } else {
            usize::from(aux & 3)
        };
        let fill = input.u8();
        let value = if write { input.u64() } else { 0 };
        Access {
            write,
            space,
            target,
            len,
            count,
            vcpu,
            fill,
            value,
        }
    }

    /// Encode so that [`Access::decode`] returns `self` (for `len` up to
    /// [`MAX_LONG`], `count` 1..=16, `vcpu` below 128).
    pub fn encode(&self, e: &mut Enc) {
        let mut tail = Enc::new();
        let mode: u8 = match self.target {
            Target::Mapping { index, offset } if offset <= 0xffff => {
                tail.u8(index).u16(offset as u16);
                0
            }
            Target::Raw(a) => {
                tail.u64(a);
                1
            }
            Target::Bar { bar, offset } => {
                tail.u8(bar).u16(offset as u16);
                2
            }
            Target::Mapping { index, offset } => {
                tail.u8(index).u32(offset);
                3
            }
        };
        let wsel = encode_width(&mut tail, self.len);
        let string = self.count > 1;
        if string {
            tail.u8((self.count - 1) as u8);
        }
        let aux = if self.vcpu < 4 {
            self.vcpu as u8
        } else {
            0x80 | self.vcpu as u8
        };
        tail.u8(aux).u8(self.fill);
        if self.write {
            tail.u64(self.value);
        }
        let ctl = u8::from(self.write)
            | (u8::from(self.space == Space::Mmio) << 1)
            | (mode << 2)
            | (wsel << 4)
            | (u8::from(string) << 7);
        e.u8(ctl).bytes(&tail.0);
    }

    /// A plain (non-string) access to mapping `index` at `offset`.
    pub fn at(space: Space, index: u8, offset: u32, len: usize) -> Access {
        Access {
            write: false,
            space,
            target: Target::Mapping { index, offset },
            len,
            count: 1,
            vcpu: 0,
            fill: 0,
            value: 0,
        }
    }

    /// The same access as a write of `value`.
    pub fn writing(mut self, value: u64) -> Access {
        self.write = true;
        self.value = value;
        self
    }

    /// The bytes a write puts on the bus (all elements of a string write):
    /// `value`'s 8 bytes, then a pattern seeded by `fill`.
    pub fn data(&self) -> Vec<u8> {
        let v = self.value.to_le_bytes();
        (0..self.len * self.count)
            .map(|i| match v.get(i) {
                Some(b) => *b,
                None => self.fill.wrapping_add((i as u8).wrapping_mul(37)),
            })
            .collect()
    }
}

/// Resolve `target` to an address on `bus`; `bar_base(bar)` gives a
/// pci-testdev BAR's routed base and size.
pub fn resolve(
    space: Space,
    target: Target,
    bus: &Bus,
    bar_base: impl Fn(u8) -> Option<(u64, u64)>,
) -> u64 {
    let addr = match target {
        Target::Mapping { index, offset } => match bus.mappings() {
            [] => u64::from(offset),
            maps => {
                let m = &maps[usize::from(index) % maps.len()];
                let span = (m.last - m.base).saturating_add(1).saturating_add(16);
                m.base.wrapping_add(u64::from(offset) % span)
            }
        },
        Target::Raw(a) => a,
        Target::Bar { bar, offset } => match bar_base(bar) {
            Some((base, size)) => base.wrapping_add(u64::from(offset) % (size + 16)),
            None => u64::from(offset),
        },
    };
    match space {
        Space::Pio => addr & 0xffff,
        Space::Mmio => addr,
    }
}

// ---------------------------------------------------------------------------
// The machine's device set.
// ---------------------------------------------------------------------------

/// A clock the input drives (PM timer reads become deterministic).
#[derive(Debug, Default)]
pub struct FakeClock(pub AtomicU64);

impl Clock for FakeClock {
    fn now_ns(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

impl FakeClock {
    /// Move time forward (wrapping: a clock far in the future is fine too).
    pub fn advance(&self, ns: u64) {
        let v = self.0.load(Ordering::Relaxed).wrapping_add(ns);
        self.0.store(v, Ordering::Relaxed);
    }
}

/// pc-testdev's hooks, checking what the device passes them.
#[derive(Debug, Default)]
pub struct Hooks {
    /// Pages flushed.
    pub flushes: AtomicU64,
    /// IRQ line changes.
    pub irqs: AtomicU64,
}

impl PageFlusher for Hooks {
    fn flush(&self, gpa: u64) {
        assert_eq!(
            gpa & 0xfff,
            0,
            "pc-testdev flushed an unaligned gpa {gpa:#x}"
        );
        self.flushes.fetch_add(1, Ordering::Relaxed);
    }
}

impl IrqLine for Hooks {
    fn set_irq(&self, line: u32, _level: bool) {
        assert!(line < 24, "pc-testdev drove ISA IRQ line {line}");
        self.irqs.fetch_add(1, Ordering::Relaxed);
    }
}

/// Guest RAM behind the ucall port (small: the harness only needs a few
/// messages, and every iteration maps it afresh).
pub const GUEST_RAM: u64 = 0x1_0000;
/// vCPUs with exit counters.
pub const VCPUS: usize = 4;
/// trapline's ECAM base (`crates/machine/src/layout.rs`), which differs
/// from `PciLayout::default()`'s.
pub const MACHINE_ECAM_BASE: u64 = abi::ECAM_BASE;
/// A free port for a bare `PmTimer` register (the machine maps only `PmIo`;
/// 0xB008 is where QEMU's PIIX4 PM block puts its timer).
pub const BARE_PM_TIMER_PORT: u64 = 0xb008;

/// Every device trapline has, on a PIO and an MMIO bus at the machine's
/// addresses and under the machine's names: what `Machine::build`
/// (`crates/machine/src/assemble.rs`) and `platform::build`
/// (`crates/machine/src/platform.rs`) map with `--device pci-testdev` and
/// `--device pc-testdev`, plus a bare `PmTimer` at [`BARE_PM_TIMER_PORT`].
/// The hooks that need KVM (ioeventfds, page flushes, IRQ lines) are
/// recorders here.
pub struct Machine {
    /// The port bus.
    pub pio: Bus,
    /// The memory bus.
    pub mmio: Bus,
    /// COM1 output.
    pub serial: Arc<Mutex<Vec<u8>>>,
    /// fw_cfg.
    pub fw_cfg: Arc<FwCfg>,
    /// The PCI subsystem.
    pub pci: PciDevices,
    /// pci-testdev.
    pub testdev: Arc<PciTestDev>,
    /// Its ioeventfd registry (plays KVM).
    pub registry: RecordingRegistry,
    /// pc-testdev.
    pub pc: PcTestdev,
    /// pc-testdev's hooks.
    pub hooks: Arc<Hooks>,
    /// The MMIO doorbell and the eventfd it signals.
    pub doorbell: (Arc<Doorbell>, EventFd),
    /// Guest RAM for ucall messages.
    pub memory: GuestMemoryMmap,
    /// Per-vCPU exit counters (the ucall port bumps BadUcall).
    pub counters: Arc<[Arc<ExitCounters>]>,
    /// ucall messages that made it through.
    pub ucalls: Receiver<UcallEvent>,
    /// The PM timer's clock.
    pub clock: Arc<FakeClock>,
}

impl Machine {
    /// Build it all.
    pub fn new() -> Machine {
        let serial = Arc::new(Mutex::new(Vec::new()));
        let memory =
            GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(0), GUEST_RAM as usize)]).unwrap();
        let counters: Arc<[Arc<ExitCounters>]> = (0..VCPUS)
            .map(|_| Arc::new(ExitCounters::default()))
            .collect::<Vec<_>>()
            .into();
        let (tx, ucalls) = channel();
        let clock = Arc::new(FakeClock::default());
        let hooks = Arc::new(Hooks::default());
        let registry = RecordingRegistry::new();
        let fw_cfg = Arc::new(FwCfg::builder().ram(GUEST_RAM).cpus(VCPUS as u16).build());
        let fd = EventFd::new(EFD_NONBLOCK).expect("eventfd");
        let doorbell = Arc::new(Doorbell::new(fd.try_clone().expect("eventfd")));
        let probe_pio = Arc::new(ProbeDevice::new(ProbeSpace::Pio));
        let probe_mmio = Arc::new(ProbeDevice::new(ProbeSpace::Mmio));

        let mut pci = PciBuilder::new(PciLayout {
            ecam_base: MACHINE_ECAM_BASE,
            ..PciLayout::default()
        });
        let testdev = pci.pci_testdev(Arc::new(registry.clone()));
        let pci = pci.build().expect("PCI build");
        let pc = PcTestdev::new(hooks.clone(), hooks.clone());

        let mut pio = BusBuilder::new();
        let mut mmio = BusBuilder::new();
        let p: [(&'static str, u64, u64, Arc<dyn BusDevice>); 9] = [
            (
                "com1",
                abi::COM1_PORT.into(),
                UART_LEN,
                Arc::new(Uart::new(SerialOutput::Capture(serial.clone()))),
            ),
            (
                "isa-debug-exit",
                abi::DEBUG_EXIT_PORT.into(),
                abi::DEBUG_EXIT_LEN.into(),
                Arc::new(DebugExit),
            ),
            (
                "bochs-shutdown",
                abi::BOCHS_SHUTDOWN_PORT.into(),
                1,
                Arc::new(BochsShutdown::default()),
            ),
            (
                "ucall",
                abi::UCALL_PORT.into(),
                4,
                Arc::new(UcallPort::new(memory.clone(), counters.clone(), Some(tx))),
            ),
            (
                "probe",
                abi::PROBE_PIO_USER_PORT.into(),
                u64::from(abi::PV_DOORBELL_PORT - abi::PROBE_PIO_USER_PORT),
                probe_pio,
            ),
            (
                "fw_cfg",
                FW_CFG_IO_BASE.into(),
                FW_CFG_IO_LEN,
                fw_cfg.clone(),
            ),
            (
                "acpi-pm",
                PM_IO_BASE.into(),
                PM_IO_LEN,
                Arc::new(PmIo::with_clock(clock.clone())),
            ),
            (
                "pm-timer",
                BARE_PM_TIMER_PORT,
                4,
                Arc::new(PmTimer::with_clock(clock.clone())),
            ),
            (
                "rtc",
                RTC_PORT.into(),
                RTC_PORT_LEN,
                // 2026-01-01 when the input's clock reads 0.
                Arc::new(Rtc::with_clock(
                    clock.clone(),
                    1_767_225_600_000_000_000,
                    CmosMemory {
                        ram_below_4g: 128 << 20,
                        ram_above_4g: 0,
                        cpus: 1,
                    },
                )),
            ),
        ];
        for (name, base, len, dev) in p {
            pio.insert(name, base, len, dev).unwrap();
        }
        let m: [(&'static str, u64, u64, Arc<dyn BusDevice>); 4] = [
            (
                "probe",
                abi::PROBE_MMIO_BASE,
                abi::DOORBELL_MMIO_USER - abi::PROBE_MMIO_BASE,
                probe_mmio.clone(),
            ),
            (
                "probe-ro-memslot",
                abi::PROBE_RO_MEMSLOT,
                abi::PROBE_PAGE_SIZE,
                probe_mmio,
            ),
            (
                "doorbell",
                abi::DOORBELL_MMIO_USER,
                2 * abi::PROBE_PAGE_SIZE,
                doorbell.clone(),
            ),
            (
                "lapic-fallback",
                LAPIC_PAGE_BASE,
                LAPIC_PAGE_LEN,
                Arc::new(LapicFallback),
            ),
        ];
        for (name, base, len, dev) in m {
            mmio.insert(name, base, len, dev).unwrap();
        }
        pci.insert_into(&mut pio, &mut mmio).unwrap();
        pio.insert(
            "pv-doorbell",
            abi::PV_DOORBELL_PORT.into(),
            4,
            pci.pv_doorbell().unwrap(),
        )
        .unwrap();
        for pl in pc.pio_mappings() {
            pio.insert(pl.name, pl.base, pl.len, pl.device).unwrap();
        }
        for pl in pc.mmio_mappings() {
            mmio.insert(pl.name, pl.base, pl.len, pl.device).unwrap();
        }

        Machine {
            pio: pio.build(),
            mmio: mmio.build(),
            serial,
            fw_cfg,
            pci,
            testdev,
            registry,
            pc,
            hooks,
            doorbell: (doorbell, fd),
            memory,
            counters,
            ucalls,
            clock,
        }
    }

    /// The bus of `space`.
    pub fn bus(&self, space: Space) -> &Bus {
        match space {
            Space::Pio => &self.pio,
            Space::Mmio => &self.mmio,
        }
    }

    /// pci-testdev's BAR `bar % 2`: (routed base, size); `None` when it is
    /// not decoding.
    pub fn testdev_bar(&self, bar: u8) -> Option<(u64, u64)> {
        let bar = usize::from(bar % 2);
        let base = self.pci.bus.bar_routed(TESTDEV_DEVFN, bar)?;
        let size = self.pci.bus.config_snapshot(TESTDEV_DEVFN)?.bar(bar)?.size;
        Some((base, size))
    }

    /// The address `a` goes to.
    pub fn resolve(&self, a: &Access) -> u64 {
        resolve(a.space, a.target, self.bus(a.space), |b| {
            self.testdev_bar(b)
        })
    }
}

impl Default for Machine {
    fn default() -> Self {
        Self::new()
    }
}

/// Index of the mapping called `name` on `bus` (for seeds).
pub fn mapping_index(bus: &Bus, name: &str) -> u8 {
    bus.mappings()
        .iter()
        .position(|m| m.name == name)
        .unwrap_or_else(|| panic!("no mapping {name}")) as u8
}
