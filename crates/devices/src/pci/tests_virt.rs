//! The same bus on arm64's `virt` layout ([`PciLayout::virt`]): ECAM only,
//! the I/O window memory-mapped, the PV doorbell port in that window. What
//! a guest sees through the MMIO bus alone.

use std::sync::Arc;

use trapline_abi as abi;
use trapline_bus::{Bus, BusBuilder};

use super::testdev::{OFFSET_ABSOLUTE_PORT, PV_SELECT};
use super::*;

/// A tiny deterministic PRNG (xorshift64*) for the hostile test.
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

/// A `virt` machine in miniature: only its MMIO bus has anything.
struct Virt {
    pci: PciDevices,
    reg: RecordingRegistry,
    pio: Bus,
    mmio: Bus,
}

impl Virt {
    fn new() -> Self {
        let reg = RecordingRegistry::new();
        let mut b = PciBuilder::new(PciLayout::virt());
        b.pci_testdev(Arc::new(reg.clone()));
        let pci = b.build().unwrap();
        let (mut pio, mut mmio) = (BusBuilder::new(), BusBuilder::new());
        pci.insert_into(&mut pio, &mut mmio).unwrap();
        pci.insert_pv_doorbell(&mut pio, &mut mmio).unwrap();
        Virt {
            pci,
            reg,
            pio: pio.build(),
            mmio: mmio.build(),
        }
    }

    fn rd(&self, addr: u64, len: usize) -> u64 {
        let mut d = [0u8; 8];
        self.mmio.read(0, addr, &mut d[..len]);
        u64::from_le_bytes(d)
    }

    fn wr(&self, addr: u64, len: usize, v: u64) {
        let _ = self.mmio.write(0, addr, &v.to_le_bytes()[..len]);
    }

    fn ecam(devfn: u8, reg: u64) -> u64 {
        abi::VIRT_PCIE_ECAM_BASE + (u64::from(devfn) << 12) + reg
    }

    /// Port `p` as the CPU reaches it.
    fn port(p: u64) -> u64 {
        abi::VIRT_PCIE_PIO_BASE + p
    }

    /// A guest store as KVM handles it on arm64: the machine registers a
    /// port ioeventfd as an MMIO one at the port's window address, which
    /// the recording registry (keyed by port) stands for here.
    fn guest_store(&self, addr: u64, len: usize, v: u64) {
        let io = abi::VIRT_PCIE_PIO_BASE..abi::VIRT_PCIE_PIO_BASE + abi::VIRT_PCIE_PIO_LEN;
        let fired = if io.contains(&addr) {
            self.reg
                .fire(Space::Pio, addr - abi::VIRT_PCIE_PIO_BASE, len as u32, v)
        } else {
            self.reg.fire(Space::Mmio, addr, len as u32, v)
        };
        if !fired {
            self.wr(addr, len, v);
        }
    }

    fn bar(&self, i: u64) -> u64 {
        self.rd(Self::ecam(TESTDEV_DEVFN, 0x10 + 4 * i), 4)
    }
}

#[test]
fn virt_layout_uses_qemus_windows_and_no_ports() {
    let m = Virt::new();
    assert!(m.pio.find(0xcf8).is_none() && m.pio.find(0x1000).is_none());
    assert_eq!(
        m.mmio.find(abi::VIRT_PCIE_ECAM_BASE).unwrap().name,
        "pci-ecam"
    );
    assert_eq!(
        m.mmio
            .find(abi::VIRT_PCIE_ECAM_BASE + abi::VIRT_PCIE_ECAM_LEN - 1)
            .unwrap()
            .name,
        "pci-ecam"
    );
    assert_eq!(m.pci.layout.ecam_len(), abi::VIRT_PCIE_ECAM_LEN);
    assert_eq!(
        m.mmio.find(abi::VIRT_PCIE_MMIO_BASE).unwrap().name,
        "pci-mmio-window"
    );
    assert_eq!(
        m.mmio.find(Virt::port(0x1000)).unwrap().name,
        "pci-io-window"
    );
    assert_eq!(
        m.mmio.find(Virt::port(0xffff)).unwrap().name,
        "pci-io-window"
    );
    assert_eq!(
        m.mmio
            .find(Virt::port(abi::PV_DOORBELL_PORT.into()))
            .unwrap()
            .name,
        "pv-doorbell"
    );
    // Ports below the BARs' window, but the PV doorbell's, are unmapped.
    assert!(m.mmio.find(Virt::port(0)).is_none());
    assert!(m.mmio.find(Virt::port(0xfff)).is_none());
    // BAR0 from the MMIO window's base, BAR1 from port 0x1000.
    assert_eq!(
        m.pci
            .assignments
            .iter()
            .map(|a| (a.devfn, a.bar, a.addr))
            .collect::<Vec<_>>(),
        [
            (TESTDEV_DEVFN, 0, abi::VIRT_PCIE_MMIO_BASE),
            (TESTDEV_DEVFN, 1, abi::VIRT_PCIE_IO_BAR_FIRST_PORT)
        ]
    );
    assert_eq!(m.bar(0), abi::VIRT_PCIE_MMIO_BASE);
    assert_eq!(m.bar(1), abi::VIRT_PCIE_IO_BAR_FIRST_PORT | 1);
}

#[test]
fn virt_ecam_decodes_bus_devfn_register() {
    let m = Virt::new();
    assert_eq!(
        m.rd(Virt::ecam(0, 0), 4),
        u64::from(HOST_BRIDGE_DEVICE) << 16 | u64::from(REDHAT_VENDOR)
    );
    assert_eq!(
        m.rd(Virt::ecam(TESTDEV_DEVFN, 0), 4),
        u64::from(trapline_abi::PCI_TESTDEV_ID)
    );
    // Byte and word reads inside the dword.
    assert_eq!(m.rd(Virt::ecam(TESTDEV_DEVFN, 2), 2), 0x0005);
    assert_eq!(m.rd(Virt::ecam(TESTDEV_DEVFN, 1), 1), 0x1b);
    // Absent functions, extended space and buses 1..15 read all-ones.
    assert_eq!(m.rd(Virt::ecam(1, 0), 4), 0xffff_ffff);
    assert_eq!(m.rd(Virt::ecam(TESTDEV_DEVFN, 0x100), 4), 0xffff_ffff);
    assert_eq!(m.rd(Virt::ecam(TESTDEV_DEVFN, 0xffc), 4), 0xffff_ffff);
    for bus in 1..u64::from(abi::VIRT_PCIE_BUSES) {
        assert_eq!(
            m.rd(abi::VIRT_PCIE_ECAM_BASE + (bus << 20) + 0x1000 * 2, 4),
            0xffff_ffff,
            "bus {bus}"
        );
    }
    // A write on bus 1 at pci-testdev's devfn/COMMAND does nothing to bus 0.
    let cmd = m.rd(Virt::ecam(TESTDEV_DEVFN, 4), 2);
    m.wr(
        abi::VIRT_PCIE_ECAM_BASE + (1 << 20) + Virt::ecam(TESTDEV_DEVFN, 4)
            - abi::VIRT_PCIE_ECAM_BASE,
        2,
        0,
    );
    assert_eq!(m.rd(Virt::ecam(TESTDEV_DEVFN, 4), 2), cmd);
}

#[test]
fn virt_io_bar_through_the_memory_mapped_window() {
    let m = Virt::new();
    let io = m.bar(1) & !3;
    // Select portio-no-eventfd (0 on the I/O BAR) and read its header.
    m.wr(Virt::port(io), 1, 0);
    assert_eq!(m.rd(Virt::port(io) + 1, 1), 1, "width");
    let offset = m.rd(Virt::port(io) + 4, 4);
    let data = m.rd(Virt::port(io) + 8, 4);
    assert_eq!((offset, data), (0x83, 0xfa));
    for _ in 0..5 {
        m.guest_store(Virt::port(io + offset), 1, data);
    }
    assert_eq!(m.rd(Virt::port(io) + 12, 4), 5, "count");
    // Datamatch: registered on the port (the machine maps it to MMIO).
    m.wr(Virt::port(io), 1, 2);
    let live = m.reg.live();
    assert_eq!(live.len(), 1);
    assert_eq!((live[0].space, live[0].addr), (Space::Pio, io + 0x85));
    for _ in 0..3 {
        m.guest_store(Virt::port(io + 0x85), 1, 0xfa);
    }
    assert_eq!(m.rd(Virt::port(io) + 12, 4), 3, "count of eventfd fires");
    // The MMIO BAR's tests work as on x86.
    let mem = m.bar(0) & !0xf;
    m.wr(mem, 1, 1);
    for _ in 0..4 {
        m.guest_store(mem + 0x801, 1, 0x11);
    }
    assert_eq!(m.rd(mem + 12, 4), 4);
}

#[test]
fn virt_pv_doorbell_is_the_port_in_the_io_window() {
    let m = Virt::new();
    let mem = m.bar(0) & !0xf;
    m.wr(mem, 1, PV_SELECT.into());
    let offset = m.rd(mem + 4, 4) as u32;
    let data = m.rd(mem + 8, 4);
    assert_eq!(offset & OFFSET_ABSOLUTE_PORT, OFFSET_ABSOLUTE_PORT);
    let port = u64::from(offset & !OFFSET_ABSOLUTE_PORT);
    assert_eq!(port, u64::from(abi::PV_DOORBELL_PORT));
    // With the ioeventfd: counted by fires.
    for _ in 0..3 {
        m.guest_store(Virt::port(port), 4, data);
    }
    assert_eq!(m.rd(mem + 12, 4), 3);
    // Without (registration failed): the user-space doorbell in the
    // window counts, wrong values and widths do not.
    m.reg.set_failing(true);
    m.wr(mem, 1, PV_SELECT.into());
    assert!(m.reg.live().is_empty());
    m.guest_store(Virt::port(port), 4, data);
    m.guest_store(Virt::port(port), 4, data ^ 1);
    m.guest_store(Virt::port(port), 2, data);
    assert_eq!(m.rd(mem + 12, 4), 1);
}

#[test]
fn virt_hostile_guest_leaves_a_working_bus() {
    let m = Virt::new();
    let mut rng = Rng(0xa4c6_4e7c_0ddb_a115);
    let ecam = abi::VIRT_PCIE_ECAM_BASE;
    let windows = [
        (ecam, abi::VIRT_PCIE_ECAM_LEN),
        (abi::VIRT_PCIE_PIO_BASE, abi::VIRT_PCIE_PIO_LEN),
        (abi::VIRT_PCIE_MMIO_BASE, 0x10_0000),
    ];
    let mut big = [0u8; 24];
    for _ in 0..200_000 {
        let (base, len) = windows[rng.below(3) as usize];
        let addr = base + rng.below(len);
        let n = 1 + rng.below(24) as usize;
        big.iter_mut().for_each(|b| *b = rng.next() as u8);
        if rng.below(2) == 0 {
            let _ = m.mmio.write(0, addr, &big[..n]);
        } else {
            m.mmio.read(0, addr, &mut big[..n]);
        }
    }
    // BARs programmed to odd places: inside ECAM, over the I/O window's
    // CPU address, past 4 GiB, all-ones (sizing), unaligned.
    for v in [
        ecam,
        abi::VIRT_PCIE_PIO_BASE,
        0xffff_fff0,
        0xffff_ffff,
        0x3eff_0801,
        0,
    ] {
        m.wr(Virt::ecam(TESTDEV_DEVFN, 0x10), 4, v);
        m.wr(Virt::ecam(TESTDEV_DEVFN, 0x14), 4, v);
        m.wr(Virt::ecam(TESTDEV_DEVFN, 4), 2, 0xffff);
        m.wr(Virt::ecam(TESTDEV_DEVFN, 0x10 + 4 * rng.below(6)), 4, v);
    }
    // The machine can still put the device back and use it.
    m.wr(
        Virt::ecam(TESTDEV_DEVFN, 0x10),
        4,
        abi::VIRT_PCIE_MMIO_BASE + 0x20_0000,
    );
    m.wr(Virt::ecam(TESTDEV_DEVFN, 0x14), 4, 0x2000);
    m.wr(Virt::ecam(TESTDEV_DEVFN, 4), 2, 0x3);
    assert_eq!(
        m.rd(Virt::ecam(TESTDEV_DEVFN, 0), 4),
        u64::from(trapline_abi::PCI_TESTDEV_ID)
    );
    let mem = abi::VIRT_PCIE_MMIO_BASE + 0x20_0000;
    m.wr(mem, 1, 0);
    m.reg.set_failing(false);
    for _ in 0..2 {
        m.guest_store(mem + 0x800, 1, 0xfa);
    }
    assert_eq!(m.rd(mem + 12, 4), 2);
    m.wr(Virt::port(0x2000), 1, 1);
    assert_eq!(
        m.rd(Virt::port(0x2000) + 1, 1),
        1,
        "I/O BAR at its new port"
    );
    assert!(m.reg.live().len() <= 1);
}

#[test]
fn virt_layout_checks_the_memory_mapped_window() {
    let bad = |l: PciLayout| PciBuilder::new(l).build().unwrap_err();
    let v = PciLayout::virt();
    // The I/O BARs' window must fit the memory-mapped one.
    assert!(matches!(
        bad(PciLayout {
            io_space: IoSpace::MemoryMapped {
                cpu_base: abi::VIRT_PCIE_PIO_BASE,
                len: 0x1000,
            },
            ..v
        }),
        PciError::BadLayout(_)
    ));
    // It must not overlap ECAM or the MMIO window, nor wrap.
    for cpu_base in [
        abi::VIRT_PCIE_ECAM_BASE,
        abi::VIRT_PCIE_MMIO_BASE,
        u64::MAX - 0x100,
    ] {
        assert!(matches!(
            bad(PciLayout {
                io_space: IoSpace::MemoryMapped {
                    cpu_base,
                    len: abi::VIRT_PCIE_PIO_LEN,
                },
                ..v
            }),
            PciError::BadLayout(_)
        ));
    }
    assert_eq!(
        IoSpace::MemoryMapped {
            cpu_base: 0x100,
            len: 0x10
        }
        .cpu_address(4),
        (Space::Mmio, 0x104)
    );
    assert_eq!(IoSpace::Ports.cpu_address(4), (Space::Pio, 4));
}
