//! pci-testdev (QEMU `hw/misc/pci-testdev.c`, 1b36:0005), plus the
//! paravirtual doorbell variants of seed 003.
//!
//! Both BARs (BAR0: 4 KiB MMIO, BAR1: 256 B I/O) expose the same header
//! (spec §3.7), with QEMU's 1-byte granularity: wider guest accesses are
//! handled as the equivalent run of byte accesses.
//!
//! | offset | size | field  |
//! |--------|------|--------|
//! | 0      | u8   | test: write selects (per BAR type), read = global index |
//! | 1      | u8   | width the guest must use (0 = no test selected) |
//! | 4      | u32  | offset inside this BAR to write to |
//! | 8      | u32  | data to write |
//! | 12     | u32  | count of writes seen since the test was selected |
//! | 16     | str  | NUL-terminated name |
//!
//! Tests, by global index (what `test` reads back):
//!
//! | # | selected by        | name                       | offset | data |
//! |---|--------------------|----------------------------|--------|------|
//! | 0 | 0 on BAR0          | `mmio-no-eventfd`          | 0x800  | 0xfa |
//! | 1 | 1 on BAR0          | `mmio-wildcard-eventfd`    | 0x801  | 0xce |
//! | 2 | 2 on BAR0          | `mmio-datamatch-eventfd`   | 0x802  | 0xfa |
//! | 3 | 0 on BAR1          | `portio-no-eventfd`        | 0x83   | 0xfa |
//! | 4 | 1 on BAR1          | `portio-wildcard-eventfd`  | 0x84   | 0xce |
//! | 5 | 2 on BAR1          | `portio-datamatch-eventfd` | 0x85   | 0xfa |
//! | 6 | 0x80 on BAR0       | `mmio-pv-eventfd`          | 0x8000_0718 | 0x5056_0006 |
//! | 7 | 0x80 on BAR1       | `portio-pv-eventfd`        | 0x8000_0718 | 0x5056_0007 |
//!
//! Any other selector deselects, so kvm-unit-tests' vmexit, which selects
//! 0, 1, 2, 3… until `width` reads 0, sees exactly QEMU's three tests per
//! BAR. The PV tests exist because KVM never merged PV MMIO: their `width`
//! is 4 and their `offset` has bit 31 set, meaning "absolute port, not a BAR
//! offset": the guest does a 32-bit OUT of `data` to
//! [`trapline_abi::PV_DOORBELL_PORT`], where selecting the test registered a
//! PIO ioeventfd with that datamatch.
//!
//! `count` is the number of counted writes that reached this model (QEMU's
//! rule: for no-eventfd/datamatch a byte equal to `data`, for wildcard any
//! byte, at the test's offset in the test's own BAR) plus, unlike QEMU
//! (which never reads its eventfds), how many times the test's ioeventfd
//! fired, so the host can check count == iterations for every variant.
//!
//! Deliberate difference from QEMU: QEMU compares the write offset with the
//! current test's offset whatever BAR the write arrived on; here the write
//! must arrive on the test's own BAR (the one its offset refers to).

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use trapline_abi::PV_DOORBELL_PORT;
use trapline_bus::{fill_all_ones, AccessSizes, BusDevice, IoOutcome};

use super::config::{BarDef, BarKind, ConfigSpace};
use super::device::{BarMap, PciDevice};
use super::host_bridge::{QEMU_SUBSYSTEM_ID, QEMU_SUBSYSTEM_VENDOR, REDHAT_VENDOR};
use super::lock;
use super::registry::{IoEventHandle, IoEventRegistry, Space};

/// pci-testdev's device ID (vendor is Red Hat, 0x1b36): the high half of
/// the vendor/device dword the payloads check, defined in trapline-abi.
pub const TESTDEV_DEVICE: u16 = (trapline_abi::PCI_TESTDEV_ID >> 16) as u16;
// The abi's dword and the vendor this device reports must agree.
const _: () = assert!(trapline_abi::PCI_TESTDEV_ID & 0xffff == REDHAT_VENDOR as u32);
/// Class 0xff ("other"), subclass 0, prog-if 0.
pub const TESTDEV_CLASS: u32 = 0xff_00_00;
/// BAR index of the MMIO header.
pub const MMIO_BAR: usize = 0;
/// BAR index of the I/O header.
pub const IO_BAR: usize = 1;
/// Size of BAR0.
pub const MMIO_BAR_SIZE: u64 = 4096;
/// Size of BAR1.
pub const IO_BAR_SIZE: u64 = 256;
/// The `test` value selecting a BAR type's PV doorbell test.
pub const PV_SELECT: u8 = 0x80;
/// Bit 31 of `offset`: the rest is an absolute port, not a BAR offset.
pub const OFFSET_ABSOLUTE_PORT: u32 = 1 << 31;
/// PV doorbell identities are this | global test index ("PV").
pub const PV_DOORBELL_ID: u32 = 0x5056_0000;
/// `data` of the no-eventfd and datamatch tests (QEMU's IOTEST_DATAMATCH).
pub const DATAMATCH_VALUE: u8 = 0xfa;
/// `data` of the wildcard tests (QEMU's IOTEST_NOMATCH).
pub const WILDCARD_VALUE: u8 = 0xce;

/// Header field offsets.
const HDR_TEST: usize = 0;
const HDR_WIDTH: usize = 1;
const HDR_OFFSET: usize = 4;
const HDR_DATA: usize = 8;
const HDR_COUNT: usize = 12;
const HDR_NAME: usize = 16;
/// Room for the longest header (16 + 24 name bytes + NUL).
const HDR_MAX: usize = 48;

/// The `current` value meaning "no test selected".
const NONE: u8 = u8::MAX;

/// How a test's writes are delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestKind {
    /// Every write exits to this model.
    NoEventfd,
    /// A KVM ioeventfd without datamatch at the test address.
    WildcardEventfd,
    /// A KVM ioeventfd matching `data` (1 byte) at the test address.
    DatamatchEventfd,
    /// A PIO ioeventfd on the PV doorbell port matching `data` (4 bytes).
    PvEventfd,
}

/// One pci-testdev test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TestSpec {
    /// Global index: what `test` reads back.
    pub index: u8,
    /// The BAR type that selects it (and, except PV, that it writes to).
    pub space: Space,
    /// Delivery.
    pub kind: TestKind,
    /// Header name.
    pub name: &'static str,
    /// Header width.
    pub width: u8,
    /// Header offset.
    pub offset: u32,
    /// Header data.
    pub data: u32,
}

const fn test(index: u8, space: Space, kind: TestKind, name: &'static str) -> TestSpec {
    let (width, offset, data) = match kind {
        TestKind::PvEventfd => (
            4,
            OFFSET_ABSOLUTE_PORT | PV_DOORBELL_PORT as u32,
            PV_DOORBELL_ID | index as u32,
        ),
        _ => {
            // QEMU: IOTEST_SIZE(i) + i * width, IOTEST_SIZE = 2048 / 128.
            let base = match space {
                Space::Mmio => 0x800,
                Space::Pio => 0x80,
            };
            let data = match kind {
                TestKind::WildcardEventfd => WILDCARD_VALUE,
                _ => DATAMATCH_VALUE,
            };
            (1, base + index as u32, data as u32)
        }
    };
    TestSpec {
        index,
        space,
        kind,
        name,
        width,
        offset,
        data,
    }
}

/// Every test, by global index.
pub const TESTS: [TestSpec; 8] = [
    test(0, Space::Mmio, TestKind::NoEventfd, "mmio-no-eventfd"),
    test(
        1,
        Space::Mmio,
        TestKind::WildcardEventfd,
        "mmio-wildcard-eventfd",
    ),
    test(
        2,
        Space::Mmio,
        TestKind::DatamatchEventfd,
        "mmio-datamatch-eventfd",
    ),
    test(3, Space::Pio, TestKind::NoEventfd, "portio-no-eventfd"),
    test(
        4,
        Space::Pio,
        TestKind::WildcardEventfd,
        "portio-wildcard-eventfd",
    ),
    test(
        5,
        Space::Pio,
        TestKind::DatamatchEventfd,
        "portio-datamatch-eventfd",
    ),
    test(6, Space::Mmio, TestKind::PvEventfd, "mmio-pv-eventfd"),
    test(7, Space::Pio, TestKind::PvEventfd, "portio-pv-eventfd"),
];

impl TestSpec {
    /// The test a write of `value` to `test` on a BAR of `space` selects.
    pub fn select(space: Space, value: u8) -> Option<&'static TestSpec> {
        let first = match space {
            Space::Mmio => 0,
            Space::Pio => 3,
        };
        match value {
            0..=2 => TESTS.get(first + usize::from(value)),
            PV_SELECT => TESTS.get(6 + first / 3),
            _ => None,
        }
    }

    /// The KVM registration this test wants when its BAR is routed at
    /// `bar_base`: (space, address, len, datamatch).
    pub fn registration(&self, bar_base: Option<u64>) -> Option<(Space, u64, u32, Option<u64>)> {
        let at = |b: u64| b.checked_add(u64::from(self.offset));
        match self.kind {
            TestKind::NoEventfd => None,
            // QEMU asks for "any length" on MMIO (the fast-MMIO bus) and
            // one byte on PIO.
            TestKind::WildcardEventfd => {
                let len = if self.space == Space::Mmio { 0 } else { 1 };
                Some((self.space, at(bar_base?)?, len, None))
            }
            TestKind::DatamatchEventfd => {
                Some((self.space, at(bar_base?)?, 1, Some(u64::from(self.data))))
            }
            TestKind::PvEventfd => Some((
                Space::Pio,
                u64::from(PV_DOORBELL_PORT),
                4,
                Some(u64::from(self.data)),
            )),
        }
    }

    /// Whether a byte write of `value` at the test's offset is counted.
    fn counts(&self, value: u8) -> bool {
        match self.kind {
            TestKind::WildcardEventfd => true,
            TestKind::NoEventfd | TestKind::DatamatchEventfd => u32::from(value) == self.data,
            TestKind::PvEventfd => false,
        }
    }

    /// The header bytes and their length (name NUL included).
    fn header(&self, count: u64) -> ([u8; HDR_MAX], usize) {
        let mut h = [0u8; HDR_MAX];
        h[HDR_TEST] = self.index;
        h[HDR_WIDTH] = self.width;
        h[HDR_OFFSET..HDR_OFFSET + 4].copy_from_slice(&self.offset.to_le_bytes());
        h[HDR_DATA..HDR_DATA + 4].copy_from_slice(&self.data.to_le_bytes());
        h[HDR_COUNT..HDR_COUNT + 4].copy_from_slice(&(count as u32).to_le_bytes());
        let name = self.name.as_bytes();
        h[HDR_NAME..HDR_NAME + name.len()].copy_from_slice(name);
        (h, HDR_NAME + name.len() + 1)
    }
}

/// State changed only when tests are selected or BARs move.
#[derive(Default)]
struct Inner {
    /// The live ioeventfd of the current test.
    handle: Option<IoEventHandle>,
    /// Fires of earlier registrations of the current test (it is
    /// re-registered when its BAR moves).
    carried: u64,
    /// Routed bases of BAR0 and BAR1.
    bars: [Option<u64>; 2],
    /// The last registration error, for diagnostics.
    last_error: Option<String>,
}

/// The pci-testdev model.
pub struct PciTestDev {
    registry: Arc<dyn IoEventRegistry>,
    /// Global index of the current test, or [`NONE`]. Written under
    /// `inner`'s lock, read lock-free on the write hot path.
    current: AtomicU8,
    /// Counted writes that reached the model since the test was selected.
    user_count: AtomicU64,
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for PciTestDev {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PciTestDev(current {:?})",
            self.current_test().map(|t| t.name)
        )
    }
}

impl PciTestDev {
    /// A testdev that registers its ioeventfds with `registry`.
    pub fn new(registry: Arc<dyn IoEventRegistry>) -> Self {
        Self {
            registry,
            current: AtomicU8::new(NONE),
            user_count: AtomicU64::new(0),
            inner: Mutex::new(Inner::default()),
        }
    }

    /// The selected test.
    pub fn current_test(&self) -> Option<&'static TestSpec> {
        TESTS.get(usize::from(self.current.load(Ordering::Acquire)))
    }

    /// The current test's count (0 when none is selected): counted writes
    /// that exited to us plus ioeventfd fires.
    pub fn count(&self) -> u64 {
        let inner = lock(&self.inner);
        self.count_locked(&inner)
    }

    fn count_locked(&self, inner: &Inner) -> u64 {
        if self.current.load(Ordering::Acquire) == NONE {
            return 0;
        }
        self.user_count.load(Ordering::Acquire)
            + inner.carried
            + inner.handle.as_ref().map_or(0, IoEventHandle::fired)
    }

    /// Whether the current test has a live ioeventfd.
    pub fn has_ioeventfd(&self) -> bool {
        lock(&self.inner).handle.is_some()
    }

    /// The last ioeventfd registration error (the test then still runs,
    /// with every write exiting).
    pub fn last_error(&self) -> Option<String> {
        lock(&self.inner).last_error.clone()
    }

    /// Deselect (device reset): drops the ioeventfd.
    pub fn reset(&self) {
        let mut inner = lock(&self.inner);
        self.current.store(NONE, Ordering::Release);
        inner.handle = None;
    }

    /// A bus device for [`PV_DOORBELL_PORT`] (4 ports) that counts doorbell
    /// writes reaching user space, i.e. when the ioeventfd could not be
    /// registered. Optional: without it those writes go wherever the
    /// machine sends that port, and `count` misses them.
    pub fn doorbell(self: &Arc<Self>) -> Arc<dyn BusDevice> {
        Arc::new(PvDoorbell { dev: self.clone() })
    }

    /// Select by a write of `value` to `test` on a BAR of `space`. One
    /// current test for the whole device: the previous one is torn down
    /// first, whatever BAR selected it.
    fn select(&self, space: Space, value: u8) {
        let mut inner = lock(&self.inner);
        self.current.store(NONE, Ordering::Release);
        inner.handle = None;
        let Some(t) = TestSpec::select(space, value) else {
            return;
        };
        self.user_count.store(0, Ordering::Release);
        inner.carried = 0;
        self.register(&mut inner, t);
        self.current.store(t.index, Ordering::Release);
    }

    fn register(&self, inner: &mut Inner, t: &TestSpec) {
        let bar = match t.space {
            Space::Mmio => inner.bars[0],
            Space::Pio => inner.bars[1],
        };
        // A BAR that is not routed gets no registration: no guest write
        // can reach it, and a stale address could swallow someone else's.
        let Some((space, addr, len, datamatch)) = t.registration(bar) else {
            return;
        };
        match self.registry.add(space, addr, len, datamatch) {
            Ok(h) => inner.handle = Some(h),
            Err(e) => inner.last_error = Some(format!("{}: {e}", t.name)),
        }
    }

    fn write_byte(&self, space: Space, offset: u64, value: u8) {
        if offset == HDR_TEST as u64 {
            self.select(space, value);
            return;
        }
        let Some(t) = self.current_test() else { return };
        if t.space == space && offset == u64::from(t.offset) && t.counts(value) {
            self.user_count.fetch_add(1, Ordering::AcqRel);
        }
    }
}

fn bar_space(bar: usize) -> Option<(Space, u64)> {
    match bar {
        MMIO_BAR => Some((Space::Mmio, MMIO_BAR_SIZE)),
        IO_BAR => Some((Space::Pio, IO_BAR_SIZE)),
        _ => None,
    }
}

impl PciDevice for PciTestDev {
    fn name(&self) -> &'static str {
        "pci-testdev"
    }

    fn config_template(&self) -> ConfigSpace {
        let mut c = ConfigSpace::new(REDHAT_VENDOR, TESTDEV_DEVICE, TESTDEV_CLASS, 0);
        c.set_subsystem(QEMU_SUBSYSTEM_VENDOR, QEMU_SUBSYSTEM_ID);
        let mem = BarDef {
            kind: BarKind::Mem32 {
                prefetchable: false,
            },
            size: MMIO_BAR_SIZE,
        };
        let io = BarDef {
            kind: BarKind::Io,
            size: IO_BAR_SIZE,
        };
        // Constant, valid declarations: these cannot fail.
        let _ = c.set_bar(MMIO_BAR, mem);
        let _ = c.set_bar(IO_BAR, io);
        c
    }

    fn bar_read(&self, _vcpu: usize, bar: usize, offset: u64, data: &mut [u8]) {
        if bar_space(bar).is_none() {
            fill_all_ones(data);
            return;
        }
        // Under the lock so the header is one consistent snapshot.
        let inner = lock(&self.inner);
        let Some(t) = self.current_test() else {
            data.fill(0);
            return;
        };
        let (hdr, len) = t.header(self.count_locked(&inner));
        drop(inner);
        for (i, b) in data.iter_mut().enumerate() {
            // QEMU: `addr + size >= bufsize` reads 0 (size is 1 here).
            let o = offset.saturating_add(i as u64);
            *b = if o.saturating_add(1) < len as u64 {
                hdr[o as usize]
            } else {
                0
            };
        }
    }

    fn bar_write(&self, _vcpu: usize, bar: usize, offset: u64, data: &[u8]) -> IoOutcome {
        let Some((space, size)) = bar_space(bar) else {
            return IoOutcome::Continue;
        };
        for (i, &v) in data.iter().enumerate() {
            let o = offset.saturating_add(i as u64);
            if o >= size {
                break;
            }
            self.write_byte(space, o, v);
        }
        IoOutcome::Continue
    }

    fn bars_changed(&self, map: &BarMap) {
        let mut inner = lock(&self.inner);
        let old = inner.bars;
        inner.bars = [map[MMIO_BAR], map[IO_BAR]];
        let Some(t) = self.current_test() else { return };
        let moved = match t.space {
            Space::Mmio => old[0] != inner.bars[0],
            Space::Pio => old[1] != inner.bars[1],
        };
        if !moved
            || !matches!(
                t.kind,
                TestKind::WildcardEventfd | TestKind::DatamatchEventfd
            )
        {
            return;
        }
        // Follow the BAR (QEMU's eventfds follow the region's address);
        // keep what the old registration counted.
        if let Some(h) = inner.handle.take() {
            inner.carried += h.fired();
        }
        self.register(&mut inner, t);
    }
}

/// User-space fallback for the PV doorbell port (see
/// [`PciTestDev::doorbell`]). Reads all-ones.
struct PvDoorbell {
    dev: Arc<PciTestDev>,
}

impl BusDevice for PvDoorbell {
    fn read(&self, _vcpu: usize, _base: u64, _offset: u64, data: &mut [u8]) {
        fill_all_ones(data);
    }

    fn write(&self, _vcpu: usize, _base: u64, offset: u64, data: &[u8]) -> IoOutcome {
        let Ok(v) = <[u8; 4]>::try_from(data) else {
            return IoOutcome::Continue;
        };
        if let Some(t) = self.dev.current_test() {
            // Same rule KVM's datamatch applies: 4 bytes, exact value.
            if offset == 0 && t.kind == TestKind::PvEventfd && u32::from_le_bytes(v) == t.data {
                self.dev.user_count.fetch_add(1, Ordering::AcqRel);
            }
        }
        IoOutcome::Continue
    }

    fn access_sizes(&self) -> AccessSizes {
        // trapline's own port: the guest's 32-bit OUT arrives whole.
        AccessSizes::ANY
    }
}
