//! QEMU's `-device pc-testdev`: a handful of small test ports used by
//! kvm-unit-tests' emulator, eventinj, ioapic, vmx, lam and cmpxchg8b tests.
//!
//! Several small [`BusDevice`]s, mapped where QEMU maps them; build them all
//! with [`PcTestdev::new`] and insert each of [`PcTestdev::pio_mappings`] and
//! [`PcTestdev::mmio_mappings`] into the matching bus:
//!
//! | bus | range | device | sizes | behaviour |
//! |-----|-------|--------|-------|-----------|
//! | PIO | 0xE0–0xE3 | [`Scratch`] | 1–4 | 32-bit scratch register, lane = port & 3 |
//! | PIO | 0xE4–0xE7 | [`FlushPort`] | 4 only | write: [`PageFlusher::flush`] of the page containing the value |
//! | PIO | 0xE8–0xEB | [`ScratchBytes`] | 1 | the same register, a byte at a time |
//! | PIO | 0x2000–0x2017 | [`IrqPorts`] | 1 | write: [`IrqLine::set_irq`]`(port - 0x2000, value != 0)`; reads 0 |
//! | MMIO | 0xFF000000–0xFF00FFFF | [`IoMem`] | 1–4 | 64 KiB of plain memory behind MMIO exits |
//!
//! The sizes are QEMU's (its `MemoryRegionOps`); the bus cuts wider
//! accesses into them ([`AccessSizes`]): an `outl` to port 0x200b is four
//! byte writes, to lines 11, 12, 13 and 14, as kvm-unit-tests' realmode
//! expects when it raises IRQ 11 that way. A narrower access than the
//! flush port takes (1 or 2 bytes) is dropped.
//!
//! The machine supplies two hooks: a [`PageFlusher`] (mprotect the host
//! page NONE then RW, so KVM must re-fault it) and an [`IrqLine`]
//! (`KVM_IRQ_LINE`).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use trapline_bus::{AccessSizes, BusDevice, IoOutcome};

/// Port of the 32-bit scratch register.
pub const SCRATCH_PORT: u16 = 0xE0;
/// Port of the byte-wise alias of the scratch register.
pub const SCRATCH_BYTE_PORT: u16 = 0xE8;
/// Ports decoded by each scratch mapping.
pub const SCRATCH_LEN: u64 = 4;
/// Port of the "flush page" register.
pub const FLUSH_PORT: u16 = 0xE4;
/// Ports decoded by the flush register.
pub const FLUSH_LEN: u64 = 4;
/// Port of ISA IRQ line 0.
pub const IRQ_PORT_BASE: u16 = 0x2000;
/// ISA IRQ lines reachable (0–23: the IOAPIC's pins).
pub const IRQ_LINES: u64 = 24;
/// Guest-physical base of the MMIO scratch memory.
pub const IOMEM_BASE: u64 = 0xFF00_0000;
/// Its size: 64 KiB.
pub const IOMEM_LEN: u64 = 0x1_0000;

/// Mask giving the 4 KiB page of an address.
const PAGE_MASK: u64 = !0xfff;
/// The flush port takes dwords only (QEMU: `.valid` 4..=4).
const FLUSH_SIZES: AccessSizes = AccessSizes::aligned(4, 4);
/// The IRQ ports are bytes (QEMU: `.valid` 1..=1): wider writes are cut.
const IRQ_SIZES: AccessSizes = AccessSizes::BYTES;

/// Makes KVM re-fault a guest page: the machine mprotects the host mapping
/// of `gpa`'s page PROT_NONE and then back to read/write.
pub trait PageFlusher: Send + Sync {
    /// `gpa` is page aligned.
    fn flush(&self, gpa: u64);
}

/// Drives an ISA interrupt line (the machine calls `KVM_IRQ_LINE`).
pub trait IrqLine: Send + Sync {
    /// Set `line` (0–23) to `level`.
    fn set_irq(&self, line: u32, level: bool);
}

/// The 32-bit scratch register at 0xE0 (and, through [`ScratchBytes`], at
/// 0xE8).
///
/// Byte `i` of an access at offset `o` goes to lane `(o + i) & 3`, which is
/// QEMU's `port & 3` rule; lanes wrap for accesses that straddle the end
/// (the bus never makes one, but a direct caller may). Lock-free: a write
/// replaces its lanes atomically.
#[derive(Debug, Default)]
pub struct Scratch {
    value: AtomicU32,
}

impl Scratch {
    /// The register's current value.
    pub fn value(&self) -> u32 {
        self.value.load(Ordering::Relaxed)
    }
}

/// The lane a byte of an access lands in.
fn lane(offset: u64, i: usize) -> u32 {
    (offset.wrapping_add(i as u64) & 3) as u32
}

impl BusDevice for Scratch {
    fn read(&self, _vcpu: usize, _base: u64, offset: u64, data: &mut [u8]) {
        let value = self.value().to_le_bytes();
        for (i, b) in data.iter_mut().enumerate() {
            *b = value[lane(offset, i) as usize];
        }
    }

    fn write(&self, _vcpu: usize, _base: u64, offset: u64, data: &[u8]) -> IoOutcome {
        let (mut bits, mut mask) = (0u32, 0u32);
        for (i, &byte) in data.iter().enumerate() {
            let shift = lane(offset, i) * 8;
            // Later bytes of a wrapping access win, as if written in order.
            bits = (bits & !(0xff << shift)) | (u32::from(byte) << shift);
            mask |= 0xff << shift;
        }
        if mask != 0 {
            // fetch_update with a closure that always returns Some cannot
            // fail; the result is deliberately ignored.
            let _ = self
                .value
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| {
                    Some((old & !mask) | bits)
                });
        }
        IoOutcome::Continue
    }

    fn access_sizes(&self) -> AccessSizes {
        // QEMU's test_ioport_ops declare no sizes.
        AccessSizes::QEMU_DEFAULT
    }
}

/// QEMU's byte-at-a-time alias of the scratch register at 0xE8: the same
/// register, cut into single bytes (QEMU: `.impl` 1..=1).
pub struct ScratchBytes(pub Arc<Scratch>);

impl BusDevice for ScratchBytes {
    fn read(&self, vcpu: usize, base: u64, offset: u64, data: &mut [u8]) {
        self.0.read(vcpu, base, offset, data);
    }

    fn write(&self, vcpu: usize, base: u64, offset: u64, data: &[u8]) -> IoOutcome {
        self.0.write(vcpu, base, offset, data)
    }

    fn access_sizes(&self) -> AccessSizes {
        AccessSizes::BYTES
    }
}

/// Port 0xE4: a write of a guest-physical address flushes its page.
pub struct FlushPort {
    flusher: Arc<dyn PageFlusher>,
}

impl FlushPort {
    /// A flush port calling `flusher`.
    pub fn new(flusher: Arc<dyn PageFlusher>) -> Self {
        Self { flusher }
    }
}

impl BusDevice for FlushPort {
    fn read(&self, _vcpu: usize, _base: u64, _offset: u64, data: &mut [u8]) {
        // Write-only in QEMU: nothing answers a read.
        data.fill(0xff);
    }

    fn write(&self, _vcpu: usize, _base: u64, _offset: u64, data: &[u8]) -> IoOutcome {
        // QEMU ignores the port offset and uses the value alone (eventinj
        // does a 32-bit OUT). Other widths are invalid there.
        if let Ok(value) = <[u8; FLUSH_SIZES.max()]>::try_from(data) {
            self.flusher
                .flush(u64::from(u32::from_le_bytes(value)) & PAGE_MASK);
        }
        IoOutcome::Continue
    }

    fn access_sizes(&self) -> AccessSizes {
        FLUSH_SIZES
    }
}

/// Ports 0x2000–0x2017: an 8-bit write sets ISA IRQ line `port - 0x2000`.
pub struct IrqPorts {
    irq: Arc<dyn IrqLine>,
}

impl IrqPorts {
    /// IRQ ports driving `irq`.
    pub fn new(irq: Arc<dyn IrqLine>) -> Self {
        Self { irq }
    }
}

impl BusDevice for IrqPorts {
    fn read(&self, _vcpu: usize, _base: u64, _offset: u64, data: &mut [u8]) {
        data.fill(0);
    }

    fn write(&self, _vcpu: usize, _base: u64, offset: u64, data: &[u8]) -> IoOutcome {
        // The bus hands over single bytes; a wider direct call is ignored.
        if data.len() == IRQ_SIZES.max() && offset < IRQ_LINES {
            self.irq.set_irq(offset as u32, data[0] != 0);
        }
        IoOutcome::Continue
    }

    fn access_sizes(&self) -> AccessSizes {
        IRQ_SIZES
    }
}

/// 64 KiB of memory that lives behind MMIO exits, so every access is
/// emulated by KVM's instruction emulator.
///
/// Each access is atomic (one lock around it). Bytes past the end of the
/// 64 KiB read all-ones and are dropped on write.
#[derive(Debug)]
pub struct IoMem {
    buf: Mutex<Box<[u8]>>,
}

impl Default for IoMem {
    fn default() -> Self {
        Self {
            buf: Mutex::new(vec![0u8; IOMEM_LEN as usize].into_boxed_slice()),
        }
    }
}

impl IoMem {
    /// Zero-filled memory.
    pub fn new() -> Self {
        Self::default()
    }

    fn buf(&self) -> std::sync::MutexGuard<'_, Box<[u8]>> {
        // Plain bytes: a panic elsewhere cannot leave them inconsistent.
        self.buf.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The part of `buf` an access of `len` bytes at `offset` covers, as a
/// start index and a byte count (possibly 0).
fn clip(buf_len: usize, offset: u64, len: usize) -> (usize, usize) {
    let start = usize::try_from(offset).unwrap_or(usize::MAX).min(buf_len);
    (start, len.min(buf_len - start))
}

impl BusDevice for IoMem {
    fn read(&self, _vcpu: usize, _base: u64, offset: u64, data: &mut [u8]) {
        let buf = self.buf();
        let (start, n) = clip(buf.len(), offset, data.len());
        data[..n].copy_from_slice(&buf[start..start + n]);
        data[n..].fill(0xff);
    }

    fn write(&self, _vcpu: usize, _base: u64, offset: u64, data: &[u8]) -> IoOutcome {
        let mut buf = self.buf();
        let (start, n) = clip(buf.len(), offset, data.len());
        buf[start..start + n].copy_from_slice(&data[..n]);
        IoOutcome::Continue
    }

    fn access_sizes(&self) -> AccessSizes {
        // QEMU's test_iomem_ops declare no sizes: a quadword is two dwords.
        AccessSizes::QEMU_DEFAULT
    }
}

/// Where one of pc-testdev's devices goes: insert `device` on the bus at
/// `[base, base + len)` under `name`.
#[derive(Clone)]
pub struct Placement {
    /// Name for the bus listing.
    pub name: &'static str,
    /// First port or guest-physical address.
    pub base: u64,
    /// Length of the range.
    pub len: u64,
    /// The device.
    pub device: Arc<dyn BusDevice>,
}

impl std::fmt::Debug for Placement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at {:#x}+{:#x}", self.name, self.base, self.len)
    }
}

/// All of pc-testdev's parts, sharing state where QEMU shares it.
pub struct PcTestdev {
    /// The scratch register (at 0xE0, and at 0xE8 through [`ScratchBytes`]).
    pub scratch: Arc<Scratch>,
    /// The flush port.
    pub flush: Arc<FlushPort>,
    /// The IRQ ports.
    pub irq: Arc<IrqPorts>,
    /// The MMIO memory.
    pub iomem: Arc<IoMem>,
}

impl PcTestdev {
    /// Build the devices with the machine's hooks.
    pub fn new(flusher: Arc<dyn PageFlusher>, irq: Arc<dyn IrqLine>) -> Self {
        Self {
            scratch: Arc::new(Scratch::default()),
            flush: Arc::new(FlushPort::new(flusher)),
            irq: Arc::new(IrqPorts::new(irq)),
            iomem: Arc::new(IoMem::new()),
        }
    }

    /// The port-I/O placements (QEMU's addresses).
    pub fn pio_mappings(&self) -> [Placement; 4] {
        [
            Placement {
                name: "pc-testdev-ioport",
                base: SCRATCH_PORT.into(),
                len: SCRATCH_LEN,
                device: self.scratch.clone(),
            },
            Placement {
                name: "pc-testdev-flush-page",
                base: FLUSH_PORT.into(),
                len: FLUSH_LEN,
                device: self.flush.clone(),
            },
            Placement {
                name: "pc-testdev-ioport-byte",
                base: SCRATCH_BYTE_PORT.into(),
                len: SCRATCH_LEN,
                device: Arc::new(ScratchBytes(self.scratch.clone())),
            },
            Placement {
                name: "pc-testdev-irq-line",
                base: IRQ_PORT_BASE.into(),
                len: IRQ_LINES,
                device: self.irq.clone(),
            },
        ]
    }

    /// The MMIO placement (QEMU's address).
    pub fn mmio_mappings(&self) -> [Placement; 1] {
        [Placement {
            name: "pc-testdev-iomem",
            base: IOMEM_BASE,
            len: IOMEM_LEN,
            device: self.iomem.clone(),
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records every hook call.
    #[derive(Default)]
    struct Recorder {
        flushes: Mutex<Vec<u64>>,
        irqs: Mutex<Vec<(u32, bool)>>,
    }

    impl PageFlusher for Recorder {
        fn flush(&self, gpa: u64) {
            self.flushes.lock().unwrap().push(gpa);
        }
    }

    impl IrqLine for Recorder {
        fn set_irq(&self, line: u32, level: bool) {
            self.irqs.lock().unwrap().push((line, level));
        }
    }

    fn testdev() -> (Arc<Recorder>, PcTestdev) {
        let rec = Arc::new(Recorder::default());
        (rec.clone(), PcTestdev::new(rec.clone(), rec))
    }

    fn rd(dev: &dyn BusDevice, offset: u64, width: usize) -> u64 {
        let mut buf = [0u8; 8];
        dev.read(0, 0, offset, &mut buf[..width]);
        u64::from_le_bytes(buf)
    }

    fn wr(dev: &dyn BusDevice, offset: u64, value: u64, width: usize) {
        assert_eq!(
            dev.write(0, 0, offset, &value.to_le_bytes()[..width]),
            IoOutcome::Continue
        );
    }

    #[test]
    fn scratch_lanes_at_every_width() {
        let s = Scratch::default();
        wr(&s, 0, 0x1122_3344, 4);
        assert_eq!(rd(&s, 0, 4), 0x1122_3344);
        assert_eq!(rd(&s, 0, 2), 0x3344);
        assert_eq!(rd(&s, 2, 2), 0x1122);
        assert_eq!(rd(&s, 1, 2), 0x2233);
        for (port, byte) in [(0, 0x44), (1, 0x33), (2, 0x22), (3, 0x11)] {
            assert_eq!(rd(&s, port, 1), byte);
        }
        // Sub-dword writes replace only their lanes.
        wr(&s, 1, 0xaa, 1);
        assert_eq!(s.value(), 0x1122_aa44);
        wr(&s, 2, 0xbbcc, 2);
        assert_eq!(s.value(), 0xbbcc_aa44);
        wr(&s, 0, 0xdd, 1);
        assert_eq!(rd(&s, 0, 4), 0xbbcc_aadd);
        // Straddling accesses wrap around the lanes.
        wr(&s, 3, 0x0201, 2);
        assert_eq!(s.value(), 0x01cc_aa02);
        assert_eq!(rd(&s, 3, 2), 0x0201);
        assert_eq!(rd(&s, 2, 4), 0xaa02_01cc);
        // Empty accesses are harmless.
        assert_eq!(s.write(0, 0, 0, &[]), IoOutcome::Continue);
        s.read(0, 0, 0, &mut []);
        assert_eq!(s.value(), 0x01cc_aa02);
    }

    #[test]
    fn byte_alias_shares_the_register() {
        let (_, t) = testdev();
        let pio = t.pio_mappings();
        let (e0, e8) = (&pio[0].device, &pio[2].device);
        // String I/O in single bytes at 0xE8..0xEB reads back as a dword at 0xE0.
        for (i, b) in [0xef, 0xbe, 0xad, 0xde].into_iter().enumerate() {
            wr(&**e8, i as u64, b, 1);
        }
        assert_eq!(rd(&**e0, 0, 4), 0xdead_beef);
        wr(&**e0, 0, 0x0102_0304, 4);
        assert_eq!(rd(&**e8, 3, 1), 0x01);
    }

    #[test]
    fn flush_hook_gets_the_page() {
        let (rec, t) = testdev();
        wr(&*t.flush, 0, 0x0012_3456, 4);
        wr(&*t.flush, 0, 0x0040_0000, 4);
        // Only dwords flush (QEMU: `.valid` 4..=4); others do nothing.
        wr(&*t.flush, 0, 0x7f, 1);
        wr(&*t.flush, 0, 0x7f00, 2);
        wr(&*t.flush, 0, 0x5000, 8);
        assert_eq!(t.flush.write(0, 0, 0, &[]), IoOutcome::Continue);
        assert_eq!(*rec.flushes.lock().unwrap(), [0x0012_3000, 0x0040_0000]);
        assert_eq!(rd(&*t.flush, 0, 4), 0xffff_ffff);
    }

    #[test]
    fn irq_hook_gets_line_and_level() {
        let (rec, t) = testdev();
        wr(&*t.irq, 0, 1, 1);
        wr(&*t.irq, 14, 0x80, 1);
        wr(&*t.irq, 23, 0, 1);
        // Wider direct calls are ignored (the bus cuts them into bytes).
        wr(&*t.irq, 5, 1, 2);
        wr(&*t.irq, 5, 1, 4);
        // Out-of-range lines (only if mapped too long) are ignored.
        wr(&*t.irq, 24, 1, 1);
        assert_eq!(
            *rec.irqs.lock().unwrap(),
            [(0, true), (14, true), (23, false)]
        );
        assert_eq!(rd(&*t.irq, 3, 4), 0);
    }

    #[test]
    fn iomem_round_trips() {
        let m = IoMem::new();
        assert_eq!(rd(&m, 0x100, 8), 0);
        wr(&m, 0x100, 0x0807_0605_0403_0201, 8);
        assert_eq!(rd(&m, 0x100, 8), 0x0807_0605_0403_0201);
        assert_eq!(rd(&m, 0x103, 2), 0x0504);
        wr(&m, 0x101, 0xaabb, 2);
        assert_eq!(rd(&m, 0x100, 4), 0x04aa_bb01);
        // Unaligned across a page boundary inside the 64 KiB.
        wr(&m, 0xffe, 0x1122_3344, 4);
        assert_eq!(rd(&m, 0xffe, 4), 0x1122_3344);
        // The last bytes, and a straddle past the end.
        wr(&m, 0xfffe, 0xffff_ffff_5566, 8);
        assert_eq!(rd(&m, 0xfffe, 2), 0x5566);
        assert_eq!(rd(&m, 0xfffe, 4), 0xffff_5566);
        assert_eq!(rd(&m, 0x1_0000, 4), 0xffff_ffff);
        assert_eq!(rd(&m, u64::MAX, 8), u64::MAX);
        // Large (string-like) accesses.
        let big: Vec<u8> = (0..300u32).map(|i| i as u8).collect();
        assert_eq!(m.write(0, 0, 0x2000, &big), IoOutcome::Continue);
        let mut back = vec![0u8; 300];
        m.read(0, 0, 0x2000, &mut back);
        assert_eq!(back, big);
    }

    #[test]
    fn placements_match_qemu() {
        let (_, t) = testdev();
        let pio: Vec<_> = t.pio_mappings().iter().map(|p| (p.base, p.len)).collect();
        assert_eq!(pio, [(0xe0, 4), (0xe4, 4), (0xe8, 4), (0x2000, 0x18)]);
        let mmio = &t.mmio_mappings()[0];
        assert_eq!((mmio.base, mmio.len), (0xff00_0000, 0x1_0000));
        // They fit on a real bus without overlapping.
        let mut bus = trapline_bus::BusBuilder::new();
        for p in t.pio_mappings() {
            bus.insert(p.name, p.base, p.len, p.device).unwrap();
        }
        let bus = bus.build();
        bus.write(0, 0xe9, &[0x5a]);
        let mut b = [0u8; 1];
        bus.read(0, 0xe1, &mut b);
        assert_eq!(b[0], 0x5a);
    }

    #[test]
    fn sizes_match_qemu() {
        let (_, t) = testdev();
        let sizes: Vec<_> = t
            .pio_mappings()
            .iter()
            .chain(&t.mmio_mappings())
            .map(|p| p.device.access_sizes())
            .collect();
        assert_eq!(
            sizes,
            [
                AccessSizes::QEMU_DEFAULT,
                AccessSizes::aligned(4, 4),
                AccessSizes::BYTES,
                AccessSizes::BYTES,
                AccessSizes::QEMU_DEFAULT,
            ]
        );
    }

    #[test]
    fn an_outl_to_an_irq_port_sets_four_lines() {
        // kvm-unit-tests' realmode (test_sti_inhibit) raises IRQ 11 with
        // `outl(0x200b, 1)`; QEMU cuts it into bytes to ports 0x200b-0x200e.
        let (rec, t) = testdev();
        let mut bus = trapline_bus::BusBuilder::new();
        for p in t.pio_mappings() {
            bus.insert(p.name, p.base, p.len, p.device).unwrap();
        }
        let bus = bus.build();
        let _ = bus.write(0, 0x200b, &1u32.to_le_bytes());
        let _ = bus.write(0, 0x2016, &0x0101u16.to_le_bytes());
        assert_eq!(
            *rec.irqs.lock().unwrap(),
            [
                (11, true),
                (12, false),
                (13, false),
                (14, false),
                (22, true),
                (23, true)
            ]
        );
        // A dword to the byte alias lands in all four lanes; a word to the
        // flush port is dropped.
        let _ = bus.write(0, 0xe8, &0xdead_beefu32.to_le_bytes());
        assert_eq!(t.scratch.value(), 0xdead_beef);
        let _ = bus.write(0, 0xe4, &[0, 0x10]);
        assert!(rec.flushes.lock().unwrap().is_empty());
    }

    #[test]
    fn hostile_accesses_never_panic() {
        let (_, t) = testdev();
        let devices: Vec<Arc<dyn BusDevice>> = t
            .pio_mappings()
            .into_iter()
            .chain(t.mmio_mappings())
            .map(|p| p.device)
            .collect();
        crate::hostile::each_access(0x1234_5678_9abc_def1, IOMEM_LEN, 20_000, |a| {
            let dev = &devices[a.extra as usize % devices.len()];
            assert_eq!(dev.write(0, 0, a.offset, a.data), IoOutcome::Continue);
            dev.read(0, 0, a.offset, a.data);
        });
    }
}
