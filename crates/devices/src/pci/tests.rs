//! End-to-end tests of the PCI subsystem through the machine's frozen
//! buses, with a recording registry playing KVM's ioeventfd part.

use std::sync::Arc;

use trapline_abi::PV_DOORBELL_PORT;
use trapline_bus::{Bus, BusBuilder, BusDevice};

use super::*;

/// A tiny deterministic PRNG (xorshift64*), so hostile tests are
/// reproducible without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A machine in miniature: the PCI devices inserted into frozen buses.
struct Machine {
    pci: PciDevices,
    reg: RecordingRegistry,
    pio: Bus,
    mmio: Bus,
}

impl Machine {
    fn new() -> Self {
        Self::with_layout(PciLayout::default())
    }

    fn with_layout(layout: PciLayout) -> Self {
        let reg = RecordingRegistry::new();
        let mut b = PciBuilder::new(layout);
        b.pci_testdev(Arc::new(reg.clone()));
        let pci = b.build().unwrap();
        let (mut pio, mut mmio) = (BusBuilder::new(), BusBuilder::new());
        pci.insert_into(&mut pio, &mut mmio).unwrap();
        pci.insert_pv_doorbell(&mut pio, &mut mmio).unwrap();
        Machine {
            pci,
            reg,
            pio: pio.build(),
            mmio: mmio.build(),
        }
    }

    fn testdev(&self) -> &PciTestDev {
        self.pci.testdev.as_deref().unwrap()
    }

    fn inn(&self, port: u64, len: usize) -> u64 {
        let mut d = [0u8; 8];
        self.pio.read(0, port, &mut d[..len]);
        u64::from_le_bytes(d)
    }

    fn out(&self, port: u64, len: usize, v: u64) {
        let _ = self.pio.write(0, port, &v.to_le_bytes()[..len]);
    }

    fn mrd(&self, addr: u64, len: usize) -> u64 {
        let mut d = [0u8; 8];
        self.mmio.read(0, addr, &mut d[..len]);
        u64::from_le_bytes(d)
    }

    fn mwr(&self, addr: u64, len: usize, v: u64) {
        let _ = self.mmio.write(0, addr, &v.to_le_bytes()[..len]);
    }

    /// A guest write as KVM would handle it: a matching ioeventfd consumes
    /// it, otherwise it exits to the buses.
    fn guest_write(&self, space: Space, addr: u64, len: usize, v: u64) {
        if self.reg.fire(space, addr, len as u32, v) {
            return;
        }
        match space {
            Space::Pio => self.out(addr, len, v),
            Space::Mmio => self.mwr(addr, len, v),
        }
    }

    /// kvm-unit-tests' `pci_config_read*`: CF8 with bits 1:0, data at 0xCFC.
    fn cfg_read(&self, devfn: u8, reg: u8, len: usize) -> u64 {
        self.out(
            0xcf8,
            4,
            0x8000_0000 | u64::from(devfn) << 8 | u64::from(reg),
        );
        self.inn(0xcfc, len)
    }

    fn cfg_write(&self, devfn: u8, reg: u8, len: usize, v: u64) {
        self.out(
            0xcf8,
            4,
            0x8000_0000 | u64::from(devfn) << 8 | u64::from(reg),
        );
        self.out(0xcfc, len, v);
    }

    fn ecam(&self, devfn: u8, reg: u64) -> u64 {
        ECAM_BASE + (u64::from(devfn) << 12) + reg
    }

    fn bar0(&self) -> u64 {
        self.cfg_read(TESTDEV_DEVFN, 0x10, 4) & !0xf
    }

    fn bar1(&self) -> u64 {
        self.cfg_read(TESTDEV_DEVFN, 0x14, 4) & !0x3
    }
}

#[test]
fn pci_cf8_low_bits_read_device_id() {
    let m = Machine::new();
    // Exactly kvm-unit-tests' sequence for the device ID.
    m.out(0xcf8, 4, 0x8000_1002);
    assert_eq!(m.inn(0xcfc, 2), 0x0005);
    m.out(0xcf8, 4, 0x8000_1000);
    assert_eq!(m.inn(0xcfc, 2), 0x1b36);
    assert_eq!(m.inn(0xcfe, 2), 0x0005, "port bits 1:0 work too");
    assert_eq!(m.inn(0xcfc, 4), 0x0005_1b36);
    // CF8 bits 1:0 and port bits 1:0 are ORed, as QEMU does.
    m.out(0xcf8, 4, 0x8000_1001);
    assert_eq!(m.inn(0xcfd, 1), 0x1b, "(1|1) = register 1");
    assert_eq!(m.inn(0xcfe, 1), 0x00, "(1|2) = register 3");
    assert_eq!(m.inn(0xcfc, 2), 0x051b, "register 1, two bytes: 0x1b, 0x05");
}

#[test]
fn pci_cf8_and_ecam_agree_on_every_register() {
    let m = Machine::new();
    for devfn in 0..=255u8 {
        for reg in 0..=255u8 {
            for len in [1usize, 2, 4] {
                let cf8 = m.cfg_read(devfn, reg, len);
                // Spec-style: dword address in CF8, byte lane in the port.
                m.out(
                    0xcf8,
                    4,
                    0x8000_0000 | u64::from(devfn) << 8 | u64::from(reg & 0xfc),
                );
                let lane_port = usize::from(reg & 3);
                let lane = m.inn(0xcfc + lane_port as u64, len);
                let ecam = m.mrd(m.ecam(devfn, reg.into()), len);
                assert_eq!(cf8, ecam, "devfn {devfn:#x} reg {reg:#x} len {len}");
                // Bytes past port 0xCFF are nobody's (all-ones), as in QEMU.
                let inside = len.min(4 - lane_port);
                let mask = (1u64 << (inside * 8)) - 1;
                let full = (1u64 << (len * 8)) - 1;
                assert_eq!(
                    lane,
                    (ecam & mask) | (full & !mask),
                    "devfn {devfn:#x} reg {reg:#x} len {len}"
                );
            }
        }
        let vendor = m.cfg_read(devfn, 0, 2);
        match devfn {
            HOST_BRIDGE_DEVFN => assert_eq!(m.cfg_read(devfn, 0, 4), 0x0008_1b36),
            TESTDEV_DEVFN => assert_eq!(vendor, 0x1b36),
            _ => {
                assert_eq!(vendor, 0xffff, "absent {devfn:#x}");
                assert_eq!(m.cfg_read(devfn, 2, 2), 0xffff);
            }
        }
    }
    assert_eq!(
        m.cfg_read(HOST_BRIDGE_DEVFN, 0x0a, 2),
        0x0600,
        "host bridge class"
    );
    assert_eq!(
        m.cfg_read(TESTDEV_DEVFN, 0x08, 4),
        0xff00_0000,
        "testdev class/rev"
    );
    assert_eq!(m.cfg_read(TESTDEV_DEVFN, 0x3d, 1), 0, "no interrupt pin");
    // ECAM's extended space and further buses read all-ones.
    assert_eq!(m.mrd(m.ecam(TESTDEV_DEVFN, 0x100), 4), 0xffff_ffff);
    assert_eq!(m.mrd(m.ecam(0, 0xffc), 8), u64::MAX);
}

#[test]
fn pci_cf8_disabled_or_other_bus_reads_all_ones() {
    let m = Machine::new();
    m.out(0xcf8, 4, 0x0000_1000);
    assert_eq!(m.inn(0xcfc, 4), 0xffff_ffff, "bit 31 clear");
    m.out(0xcf8, 4, 0x8001_1000);
    assert_eq!(m.inn(0xcfc, 4), 0xffff_ffff, "bus 1");
    m.out(0xcfc, 4, 0);
    assert_eq!(m.cfg_read(TESTDEV_DEVFN, 0, 4), 0x0005_1b36);
    // The latch reads back; partial writes to it are dropped.
    m.out(0xcf8, 4, 0x8000_1234);
    assert_eq!(m.inn(0xcf8, 4), 0x8000_1234);
    assert_eq!(m.inn(0xcfa, 2), 0x8000);
    m.out(0xcfb, 1, 0x01);
    assert_eq!(m.inn(0xcf8, 4), 0x8000_1234);
    // A 2-byte read at 0xCFF (past the ports) does not panic.
    m.out(0xcf8, 4, 0x8000_10fe);
    assert_eq!(
        m.inn(0xcfe, 4),
        0xffff_0000 | 0xffff & m.cfg_read(TESTDEV_DEVFN, 0xfe, 2)
    );
    let mut big = [0u8; 32];
    m.pio.read(0, 0xcfc, &mut big);
    let _ = m.pio.write(0, 0xcf8, &big);
}

#[test]
fn pci_bar_sizing_and_preassigned_addresses() {
    let m = Machine::new();
    // lib/pci.c's pci_dev_init for each BAR.
    let mut sizes = Vec::new();
    for bar in 0..6u8 {
        let reg = 0x10 + 4 * bar;
        let old = m.cfg_read(TESTDEV_DEVFN, reg, 4);
        m.cfg_write(TESTDEV_DEVFN, reg, 4, 0xffff_ffff);
        sizes.push(m.cfg_read(TESTDEV_DEVFN, reg, 4));
        m.cfg_write(TESTDEV_DEVFN, reg, 4, old);
    }
    assert_eq!(sizes, [0xffff_f000, 0xffff_ff01, 0, 0, 0, 0]);
    // Where QEMU+SeaBIOS put them, decoding on.
    assert_eq!(m.cfg_read(TESTDEV_DEVFN, 0x10, 4), 0xfebf_f000);
    assert_eq!(m.cfg_read(TESTDEV_DEVFN, 0x14, 4), 0xc001);
    assert_eq!(m.cfg_read(TESTDEV_DEVFN, 4, 2) & 3, 3);
    assert_eq!(
        m.cfg_read(HOST_BRIDGE_DEVFN, 4, 2),
        0,
        "no BARs, no decode bits"
    );
    assert_eq!(m.pci.bus.bar_routed(TESTDEV_DEVFN, 0), Some(0xfebf_f000));
    assert_eq!(m.pci.bus.bar_routed(TESTDEV_DEVFN, 1), Some(0xc000));
    // Sizing did not leave registrations behind, and the BARs still work.
    m.mwr(0xfebf_f000, 1, 0);
    assert_eq!(m.mrd(0xfebf_f000 + 1, 1), 1, "width");
}

#[test]
fn pci_bottom_up_allocation_and_layout_checks() {
    let layout = PciLayout {
        mmio_order: AllocOrder::BottomUp,
        ..PciLayout::default()
    };
    let m = Machine::with_layout(layout);
    assert_eq!(m.bar0(), PCI_MMIO_BASE);
    assert_eq!(m.bar1(), PCI_IO_BASE);

    let bad = |l: PciLayout| PciBuilder::new(l).build().unwrap_err();
    let d = PciLayout::default();
    assert!(matches!(
        bad(PciLayout {
            ecam_base: 0xb000_1000,
            ..d
        }),
        PciError::BadLayout(_)
    ));
    assert!(matches!(
        bad(PciLayout { ecam_buses: 0, ..d }),
        PciError::BadLayout(_)
    ));
    assert!(matches!(
        bad(PciLayout {
            ecam_base: 0xe000_0000,
            ..d
        }),
        PciError::BadLayout(_)
    ));
    assert!(matches!(
        bad(PciLayout {
            io_window: Window::new(0xc000, 0x1_0000),
            ..d
        }),
        PciError::BadLayout(_)
    ));
    // A window too small for BAR0.
    let mut b = PciBuilder::new(PciLayout {
        mmio_window: Window::new(0xe000_0800, 0x1000),
        ..d
    });
    b.pci_testdev(Arc::new(NoIoEvents));
    assert!(matches!(
        b.build().unwrap_err(),
        PciError::NoRoom { bar: 0, .. }
    ));
    // A 32-bit BAR cannot be placed where it would reach 4 GiB - 1.
    let mut b = PciBuilder::new(PciLayout {
        mmio_window: Window::new(0xffff_0000, 0x1_0000),
        ..d
    });
    b.pci_testdev(Arc::new(NoIoEvents));
    assert!(matches!(b.build().unwrap_err(), PciError::NoRoom { .. }));
    // Two functions at one devfn.
    let mut b = PciBuilder::new(d);
    b.pci_testdev(Arc::new(NoIoEvents));
    b.device(TESTDEV_DEVFN, Arc::new(HostBridge));
    assert!(matches!(
        b.build().unwrap_err(),
        PciError::DevfnTaken { .. }
    ));
    // A 4-bus ECAM window.
    let m = Machine::with_layout(PciLayout { ecam_buses: 4, ..d });
    assert_eq!(
        m.mmio.find(ECAM_BASE + (4 << 20) - 1).unwrap().name,
        "pci-ecam"
    );
    assert_eq!(m.mrd(ECAM_BASE + (3 << 20), 4), 0xffff_ffff);
}

#[test]
fn pci_decoding_is_gated_by_command() {
    let m = Machine::new();
    let (b0, b1) = (m.bar0(), m.bar1());
    m.mwr(b0, 1, 0);
    assert_eq!(m.mrd(b0 + 1, 1), 1);
    assert_eq!(
        m.inn(b1 + 1, 1),
        1,
        "the I/O BAR sees the same current test"
    );
    m.cfg_write(TESTDEV_DEVFN, 4, 2, 0x0001); // IO only
    assert_eq!(m.mrd(b0 + 1, 1), 0xff, "memory decode off");
    assert_eq!(m.inn(b1 + 1, 1), 1);
    m.cfg_write(TESTDEV_DEVFN, 4, 2, 0x0002); // MEM only
    assert_eq!(m.mrd(b0 + 1, 1), 1);
    assert_eq!(m.inn(b1 + 1, 1), 0xff, "I/O decode off");
    m.mwr(b0, 1, 0xff); // deselect via MMIO
    m.out(b1, 1, 1); // dropped: not decoding
    assert_eq!(m.testdev().current_test(), None);
    m.cfg_write(TESTDEV_DEVFN, 4, 2, 0x0000);
    m.mwr(b0, 1, 1);
    assert_eq!(m.testdev().current_test(), None);
    assert_eq!(m.pci.bus.bar_routed(TESTDEV_DEVFN, 0), None);
}

type ReadFn = fn(&Machine, u64, usize) -> u64;
type WriteFn = fn(&Machine, u64, usize, u64);

/// vmexit's `pci-mem` / `pci-io` loop, with `iters` writes per test.
fn run_vmexit_loop(m: &Machine, space: Space, iters: u64) -> Vec<(String, u64)> {
    let (bar, rd, wr): (u64, ReadFn, WriteFn) = match space {
        Space::Mmio => (m.bar0(), Machine::mrd, Machine::mwr),
        Space::Pio => (m.bar1(), Machine::inn, Machine::out),
    };
    let mut seen = Vec::new();
    for idx in 0u64.. {
        wr(m, bar, 1, idx);
        let width = rd(m, bar + 1, 1);
        if ![1, 2, 4].contains(&width) {
            break;
        }
        let data = rd(m, bar + 8, 4);
        let offset = rd(m, bar + 4, 4);
        let mut name = String::new();
        for i in 16.. {
            match rd(m, bar + i, 1) as u8 {
                0 => break,
                c => name.push(c as char),
            }
        }
        for _ in 0..iters {
            m.guest_write(space, bar + offset, width as usize, data);
        }
        // The host-side check the brief asks for.
        assert_eq!(m.testdev().count(), iters, "{name}");
        assert_eq!(rd(m, bar + 12, 4), iters, "{name} header count");
        seen.push((name, m.testdev().current_test().unwrap().index.into()));
    }
    seen
}

#[test]
fn pci_testdev_vmexit_scan_sees_qemus_three_tests_per_bar() {
    let m = Machine::new();
    let mem = run_vmexit_loop(&m, Space::Mmio, 50);
    let names: Vec<_> = mem.iter().map(|(n, i)| (n.as_str(), *i)).collect();
    assert_eq!(
        names,
        [
            ("mmio-no-eventfd", 0),
            ("mmio-wildcard-eventfd", 1),
            ("mmio-datamatch-eventfd", 2)
        ]
    );
    let io = run_vmexit_loop(&m, Space::Pio, 50);
    let names: Vec<_> = io.iter().map(|(n, i)| (n.as_str(), *i)).collect();
    assert_eq!(
        names,
        [
            ("portio-no-eventfd", 3),
            ("portio-wildcard-eventfd", 4),
            ("portio-datamatch-eventfd", 5)
        ]
    );
    // Registrations exactly as QEMU makes them, each removed on deselect.
    let b0 = 0xfebf_f000;
    let adds: Vec<_> = m
        .reg
        .events()
        .into_iter()
        .filter_map(|e| match e {
            RegistryEvent::Add(r) => Some((r.space, r.addr, r.len, r.datamatch)),
            RegistryEvent::Remove(_) => None,
        })
        .collect();
    assert_eq!(
        adds,
        [
            (Space::Mmio, b0 + 0x801, 0, None),
            (Space::Mmio, b0 + 0x802, 1, Some(0xfa)),
            (Space::Pio, 0xc084, 1, None),
            (Space::Pio, 0xc085, 1, Some(0xfa)),
        ]
    );
    assert!(
        m.reg.live().is_empty(),
        "the final deselect removed the last one"
    );
    assert_eq!(m.testdev().count(), 0);
}

#[test]
fn pci_testdev_header_fields_and_counting_rules() {
    let m = Machine::new();
    let b0 = m.bar0();
    let hdr = |off: u64, len| m.mrd(b0 + off, len);
    assert_eq!(hdr(0, 8), 0, "nothing selected reads 0");
    m.mwr(b0, 1, 2);
    assert_eq!(hdr(0, 1), 2);
    assert_eq!(hdr(1, 1), 1);
    assert_eq!(hdr(4, 4), 0x802);
    assert_eq!(hdr(8, 4), 0xfa);
    assert_eq!(hdr(16, 8), u64::from_le_bytes(*b"mmio-dat"));
    assert_eq!(hdr(0x800, 4), 0, "past the header");
    assert_eq!(hdr(16 + 22, 1), 0, "the NUL");
    // Fields other than `test` are read-only.
    for off in [1u64, 4, 8, 12, 16, 20] {
        m.mwr(b0 + off, 4, 0xdead_beef);
    }
    assert_eq!(hdr(4, 4), 0x802);
    assert_eq!(hdr(12, 4), 0);
    assert_eq!(hdr(16, 4), u64::from(u32::from_le_bytes(*b"mmio")));
    // Datamatch counting in user space (a write KVM did not match):
    // only bytes equal to data, only at the offset, only on BAR0.
    m.mwr(b0 + 0x802, 1, 0xfb);
    m.mwr(b0 + 0x801, 1, 0xfa);
    assert_eq!(hdr(12, 4), 0);
    m.mwr(b0 + 0x802, 1, 0xfa);
    // A wider write is split: its first byte lands on the offset.
    m.mwr(b0 + 0x802, 4, 0x1234_56fa);
    // ... and a write starting below the offset reaches it with its 2nd byte.
    m.mwr(b0 + 0x801, 2, 0xfa00);
    assert_eq!(hdr(12, 4), 3);
    // Wildcard counts any byte at its offset.
    m.mwr(b0, 1, 1);
    assert_eq!(hdr(12, 4), 0, "count restarts on select");
    m.mwr(b0 + 0x801, 1, 0x00);
    m.mwr(b0 + 0x801, 1, 0x55);
    assert_eq!(m.testdev().count(), 2);
    // A multi-byte write to `test` selects with its low byte.
    m.mwr(b0, 4, 0xffff_ff00);
    assert_eq!(m.testdev().current_test().unwrap().index, 0);
    // Out-of-range selectors deselect; the header then reads 0.
    for sel in [3u64, 4, 0x7f, 0x81, 0xff] {
        m.mwr(b0, 1, 0);
        m.mwr(b0, 1, sel);
        assert_eq!(m.testdev().current_test(), None, "selector {sel:#x}");
        assert_eq!(hdr(0, 8), 0);
    }
    // PIO tests read their global index through either BAR.
    m.out(m.bar1(), 1, 2);
    assert_eq!(hdr(0, 1), 5);
    assert_eq!(m.inn(m.bar1() + 4, 4), 0x85);
    assert_eq!(
        m.inn(m.bar1() + 16, 4),
        u64::from(u32::from_le_bytes(*b"port"))
    );
    // A PIO test's offset written on the MMIO BAR is not its address.
    m.mwr(b0 + 0x85, 1, 0xfa);
    assert_eq!(m.testdev().count(), 0);
    m.out(m.bar1() + 0x85, 1, 0xfa);
    assert_eq!(m.testdev().count(), 1);
    m.testdev().reset();
    assert!(m.reg.live().is_empty());
}

#[test]
fn pci_testdev_pv_variants() {
    let m = Machine::new();
    let (b0, b1) = (m.bar0(), m.bar1());
    for (space, expect_index, expect_name) in [
        (Space::Mmio, 6u64, "mmio-pv-eventfd"),
        (Space::Pio, 7, "portio-pv-eventfd"),
    ] {
        match space {
            Space::Mmio => m.mwr(b0, 1, 0x80),
            Space::Pio => m.out(b1, 1, 0x80),
        }
        assert_eq!(m.mrd(b0, 1), expect_index);
        assert_eq!(m.mrd(b0 + 1, 1), 4, "width");
        let offset = m.mrd(b0 + 4, 4);
        assert_eq!(offset, 0x8000_0000 | u64::from(PV_DOORBELL_PORT));
        let data = m.mrd(b0 + 8, 4);
        assert_eq!(data, 0x5056_0000 | expect_index);
        let name: Vec<u8> = (16..16 + expect_name.len() as u64)
            .map(|i| m.mrd(b0 + i, 1) as u8)
            .collect();
        assert_eq!(name, expect_name.as_bytes());
        let live = m.reg.live();
        assert_eq!(live.len(), 1);
        assert_eq!(
            (live[0].space, live[0].addr, live[0].len, live[0].datamatch),
            (Space::Pio, 0x718, 4, Some(data))
        );
        let port = offset & 0xffff;
        for _ in 0..10 {
            m.guest_write(Space::Pio, port, 4, data);
        }
        // A wrong identity is not matched by KVM and not counted.
        m.guest_write(Space::Pio, port, 4, data ^ 1);
        assert_eq!(m.testdev().count(), 10);
        assert_eq!(m.mrd(b0 + 12, 4), 10);
    }
    m.mwr(b0, 1, 0xff);
    assert!(m.reg.live().is_empty());
    // Without ioeventfds the doorbell exits and the fallback counts it.
    m.reg.set_failing(true);
    m.out(b1, 1, 0x80);
    assert!(!m.testdev().has_ioeventfd());
    assert!(m
        .testdev()
        .last_error()
        .unwrap()
        .contains("portio-pv-eventfd"));
    for _ in 0..7 {
        m.guest_write(Space::Pio, 0x718, 4, 0x5056_0007);
    }
    m.guest_write(Space::Pio, 0x718, 4, 0x5056_0006);
    m.guest_write(Space::Pio, 0x718, 1, 0x07);
    assert_eq!(m.testdev().count(), 7);
    // Without ioeventfds the BAR variants still count in user space.
    m.mwr(b0, 1, 1);
    for _ in 0..5 {
        m.guest_write(Space::Mmio, b0 + 0x801, 1, 0xce);
    }
    assert_eq!(m.testdev().count(), 5);
}

#[test]
fn pci_bar_moves_reroute_and_reregister() {
    let m = Machine::new();
    let (b0, b1) = (m.bar0(), m.bar1());
    m.mwr(b0, 1, 2); // mmio-datamatch
    for _ in 0..3 {
        m.guest_write(Space::Mmio, b0 + 0x802, 1, 0xfa);
    }
    let new0 = 0xe000_0000u64;
    m.cfg_write(TESTDEV_DEVFN, 0x10, 4, new0);
    assert_eq!(m.mrd(b0 + 1, 1), 0xff, "old address is dead");
    assert_eq!(m.mrd(new0 + 1, 1), 1, "new address routes");
    let live = m.reg.live();
    assert_eq!(live.len(), 1);
    assert_eq!(
        (live[0].addr, live[0].datamatch),
        (new0 + 0x802, Some(0xfa))
    );
    for _ in 0..4 {
        m.guest_write(Space::Mmio, new0 + 0x802, 1, 0xfa);
    }
    assert_eq!(m.testdev().count(), 7, "fires carried across the move");
    // Switching memory decode off withdraws it; on again re-registers.
    m.cfg_write(TESTDEV_DEVFN, 4, 2, 1);
    assert!(m.reg.live().is_empty());
    m.cfg_write(TESTDEV_DEVFN, 4, 2, 3);
    assert_eq!(m.reg.live()[0].addr, new0 + 0x802);
    // Moving the I/O BAR does not disturb an MMIO test.
    let before = m.reg.events().len();
    m.cfg_write(TESTDEV_DEVFN, 0x14, 4, 0xd000);
    assert_eq!(m.reg.events().len(), before);
    assert_eq!(m.inn(b1 + 1, 1), 0xff);
    assert_eq!(m.inn(0xd001, 1), 1);
    // A PIO wildcard follows the I/O BAR.
    m.out(0xd000, 1, 1);
    assert_eq!(m.reg.live()[0].addr, 0xd084);
    m.cfg_write(TESTDEV_DEVFN, 0x14, 4, 0xe100);
    assert_eq!(m.reg.live()[0].addr, 0xe184);
    assert_eq!(m.inn(0xe101, 1), 1);
    // Moves out of the window (to 0, all-ones, the ECAM range, RAM) stop
    // routing and withdraw the registration; config access keeps working.
    for addr in [0u64, 0xffff_ffff, ECAM_BASE, 0x10_0000] {
        m.cfg_write(TESTDEV_DEVFN, 0x14, 4, addr);
        assert_eq!(m.pci.bus.bar_routed(TESTDEV_DEVFN, 1), None, "{addr:#x}");
        assert!(m.reg.live().is_empty(), "{addr:#x}");
        m.cfg_write(TESTDEV_DEVFN, 0x10, 4, addr);
        assert_eq!(m.pci.bus.bar_routed(TESTDEV_DEVFN, 0), None, "{addr:#x}");
        assert_eq!(m.cfg_read(TESTDEV_DEVFN, 0, 4), 0x0005_1b36);
    }
    // Onto the ECAM window: ECAM still serves config, not the BAR.
    m.cfg_write(TESTDEV_DEVFN, 0x10, 4, ECAM_BASE);
    assert_eq!(m.mrd(ECAM_BASE, 4), 0x0008_1b36);
    m.cfg_write(TESTDEV_DEVFN, 0x14, 4, 0xc000);
    assert_eq!(
        m.reg.live()[0].addr,
        0xc084,
        "back in the window: registered again"
    );
}

#[test]
fn pci_overlapping_bars_lowest_devfn_wins() {
    let reg = RecordingRegistry::new();
    let a = Arc::new(PciTestDev::new(Arc::new(reg.clone())));
    let b = Arc::new(PciTestDev::new(Arc::new(reg.clone())));
    let mut bb = PciBusBuilder::new(
        Window::new(PCI_MMIO_BASE, PCI_MMIO_END - PCI_MMIO_BASE),
        Window::new(PCI_IO_BASE, 0x4000),
    );
    // Added out of order on purpose.
    bb.add(devfn(3, 0), b.clone()).unwrap();
    bb.add(devfn(2, 0), a.clone()).unwrap();
    let bus = bb.build();
    let win = PciMmioWindow::new(bus.clone());
    let set = |d: u8, bar: u64, v: u32| bus.config_write(d, 0x10 + 4 * bar, &v.to_le_bytes());
    for d in [devfn(2, 0), devfn(3, 0)] {
        set(d, 0, 0xe000_0000);
        bus.config_write(d, 4, &[3, 0]);
    }
    let _ = win.write(0, 0xe000_0000, 0, &[1]);
    assert_eq!(a.current_test().map(|t| t.index), Some(1), "devfn 0x10 won");
    assert_eq!(b.current_test(), None);
    // Moving the winner away uncovers the other.
    set(devfn(2, 0), 0, 0xe000_1000);
    let _ = win.write(0, 0xe000_0000, 0, &[2]);
    assert_eq!(b.current_test().map(|t| t.index), Some(2));
    // Both on one page again (BARs are naturally aligned, so same-size
    // BARs overlap fully or not at all): the lower devfn wins again.
    set(devfn(3, 0), 0, 0xe000_1000);
    let _ = win.write(0, 0xe000_1000, 0, &[0xff]);
    assert_eq!(a.current_test(), None, "devfn 0x10 still wins");
    assert_eq!(b.current_test().map(|t| t.index), Some(2));
}

#[test]
fn pci_hostile_config_writes_leave_a_working_bus() {
    let m = Machine::new();
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for devfn in 0..=255u8 {
        for reg in 0..=255u8 {
            for len in [1usize, 2, 4] {
                let v = rng.next();
                if rng.below(2) == 0 {
                    m.cfg_write(devfn, reg, len, v);
                } else {
                    m.mwr(m.ecam(devfn, reg.into()), len, v);
                }
            }
        }
        // Odd widths and string-I/O-sized accesses through both front ends.
        let mut big = [0u8; 24];
        big.iter_mut().for_each(|b| *b = rng.next() as u8);
        let _ = m.mmio.write(
            0,
            m.ecam(devfn, rng.below(0x1000)),
            &big[..1 + rng.below(24) as usize],
        );
        let _ = m.mmio.write(0, m.ecam(devfn, 0xffd), &big[..8]);
        m.mmio.read(0, m.ecam(devfn, rng.below(0x1000)), &mut big);
        m.out(0xcf8, 4, rng.next());
        let _ = m
            .pio
            .write(0, 0xcfc + rng.below(4), &big[..1 + rng.below(16) as usize]);
    }
    // Hammer the windows with whatever BARs the noise left.
    for _ in 0..20_000 {
        let len = 1 + rng.below(16) as usize;
        let mut d = [0u8; 16];
        let mut addr = PCI_MMIO_BASE + rng.below(PCI_MMIO_END - PCI_MMIO_BASE);
        if rng.below(4) == 0 {
            addr = 0xfebf_f000 + rng.below(0x1000);
        }
        let _ = m.mmio.write(0, addr, &d[..len]);
        m.mmio.read(0, addr, &mut d[..len]);
        let port = PCI_IO_BASE + rng.below(0x4000);
        let _ = m.pio.write(0, port, &d[..len]);
        m.pio.read(0, port, &mut d[..len]);
    }
    // Identity registers survive and both front ends still agree.
    assert_eq!(m.cfg_read(HOST_BRIDGE_DEVFN, 0, 4), 0x0008_1b36);
    assert_eq!(m.cfg_read(TESTDEV_DEVFN, 0, 4), 0x0005_1b36);
    assert_eq!(m.mrd(m.ecam(TESTDEV_DEVFN, 8), 4), 0xff00_0000);
    assert_eq!(m.cfg_read(devfn(7, 7), 0, 4), 0xffff_ffff);
    for reg in (0..=255u8).step_by(4) {
        assert_eq!(
            m.cfg_read(TESTDEV_DEVFN, reg, 4),
            m.mrd(m.ecam(TESTDEV_DEVFN, reg.into()), 4)
        );
    }
    // Restore the BARs the way firmware would; the device works again.
    m.cfg_write(TESTDEV_DEVFN, 0x10, 4, 0xfebf_f000);
    m.cfg_write(TESTDEV_DEVFN, 0x14, 4, 0xc000);
    m.cfg_write(TESTDEV_DEVFN, 4, 2, 3);
    m.mwr(0xfebf_f000, 1, 0);
    assert_eq!(m.inn(0xc001, 1), 1);
    let live = m.reg.live();
    assert!(
        live.len() <= 1,
        "at most the current test's registration: {live:?}"
    );
}

fn ecam_image(m: &Machine) -> Vec<u8> {
    let mut img = vec![0u8; ECAM_BUS_SIZE];
    for (i, chunk) in img.chunks_mut(4).enumerate() {
        let v = m.mrd(ECAM_BASE + 4 * i as u64, 4) as u32;
        chunk.copy_from_slice(&v.to_le_bytes());
    }
    img
}

#[test]
fn pci_ecam_shadow_tracks_config_writes() {
    let m = Machine::new();
    assert_eq!(m.pci.shadow.len(), ECAM_BUS_SIZE);
    let mut shadow = vec![0u8; m.pci.shadow.len()];
    m.pci.shadow.render(&mut shadow);
    assert_eq!(shadow, ecam_image(&m));
    assert_eq!(&shadow[0x10_000..0x10_004], &[0x36, 0x1b, 0x05, 0x00]);
    assert_eq!(&shadow[0x8000..0x8004], &[0xff; 4], "absent 00:01.0");

    let sink = Arc::new(MemoryShadow::new(ECAM_BUS_SIZE));
    m.pci.shadow.attach(sink.clone()).unwrap();
    assert_eq!(
        m.pci.shadow.attach(sink.clone()),
        Err(PciError::ShadowAttached)
    );
    assert_eq!(sink.contents(), shadow);

    let g0 = m.pci.shadow.generation();
    // A write that changes nothing does not bump the generation.
    m.mwr(m.ecam(TESTDEV_DEVFN, 0), 4, 0);
    m.mwr(m.ecam(devfn(9, 0), 4), 4, 0xffff);
    assert_eq!(m.pci.shadow.generation(), g0);
    // BAR sizing through ECAM: the read-back must come from the shadow.
    m.mwr(m.ecam(TESTDEV_DEVFN, 0x10), 4, 0xffff_ffff);
    assert!(m.pci.shadow.generation() > g0);
    let img = sink.contents();
    assert_eq!(&img[0x10_010..0x10_014], &0xffff_f000u32.to_le_bytes());
    assert_eq!(img, ecam_image(&m));
    m.cfg_write(TESTDEV_DEVFN, 0x10, 4, 0xfebf_f000);
    m.cfg_write(TESTDEV_DEVFN, 0x3c, 1, 0x0b);
    m.cfg_write(HOST_BRIDGE_DEVFN, 4, 2, 0x0547);
    let img = sink.contents();
    assert_eq!(img, ecam_image(&m));
    m.pci.shadow.render(&mut shadow);
    assert_eq!(img, shadow);
    // A shorter or longer render buffer is fine.
    let mut small = [0u8; 0x10_008];
    m.pci.shadow.render(&mut small);
    assert_eq!(&small[0x10_000..], &shadow[0x10_000..0x10_008]);
    let mut long = vec![0u8; 2 * ECAM_BUS_SIZE];
    m.pci.shadow.render(&mut long);
    assert!(long[ECAM_BUS_SIZE..].iter().all(|&b| b == 0xff));
}

#[test]
fn pci_insert_into_maps_the_documented_ranges() {
    let m = Machine::new();
    assert_eq!(m.pio.find(0xcf8).unwrap().name, "pci-config");
    assert_eq!(m.pio.find(0xcff).unwrap().name, "pci-config");
    assert!(m.pio.find(0xd00).is_none());
    assert_eq!(m.pio.find(0xc000).unwrap().name, "pci-io-window");
    assert_eq!(m.pio.find(0xffff).unwrap().name, "pci-io-window");
    assert_eq!(m.mmio.find(ECAM_BASE).unwrap().name, "pci-ecam");
    assert!(m.mmio.find(ECAM_BASE + ECAM_BUS_SIZE as u64).is_none());
    assert_eq!(m.mmio.find(0xe000_0000).unwrap().name, "pci-mmio-window");
    assert_eq!(m.mmio.find(0xfebf_ffff).unwrap().name, "pci-mmio-window");
    assert!(m.mmio.find(0xfec0_0000).is_none(), "IOAPIC left alone");
    assert_eq!(
        m.pci
            .assignments
            .iter()
            .map(|a| (a.devfn, a.bar, a.addr))
            .collect::<Vec<_>>(),
        [(TESTDEV_DEVFN, 0, 0xfebf_f000), (TESTDEV_DEVFN, 1, 0xc000)]
    );
    // Without pci-testdev: just the host bridge.
    let pci = PciBuilder::new(PciLayout::default()).build().unwrap();
    assert!(pci.testdev.is_none() && pci.pv_doorbell().is_none());
    assert_eq!(pci.bus.devfns().collect::<Vec<_>>(), [0]);
    assert!(pci.assignments.is_empty());
}

#[test]
fn pci_concurrent_guests_do_not_deadlock() {
    let m = Arc::new(Machine::new());
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let m = m.clone();
            std::thread::spawn(move || {
                let mut rng = Rng(t + 1);
                for _ in 0..2000 {
                    match rng.below(4) {
                        0 => m.mwr(0xfebf_f000, 1, rng.below(3)),
                        1 => m.guest_write(Space::Mmio, 0xfebf_f801, 1, 0xce),
                        2 => m.mwr(m.ecam(TESTDEV_DEVFN, 4), 2, rng.below(4)),
                        _ => {
                            let _ = m.mrd(0xfebf_f00c, 4);
                        }
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert!(m.reg.live().len() <= 1);
}
