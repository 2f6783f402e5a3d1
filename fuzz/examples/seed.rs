//! Writes the committed seed corpus: `fuzz/corpus/<target>/seed-*`.
//!
//! ```text
//! cd fuzz && cargo run --example seed            # writes ./corpus
//! cd fuzz && cargo run --example seed -- DIR     # writes DIR/<target>/
//! ```
//!
//! Each seed is a short, meaningful op stream in the target's input format
//! (see the comment at the top of each fuzz target), e.g. the accesses a
//! kvm-unit-tests guest makes; libFuzzer mutates from there.

use std::path::{Path, PathBuf};

use trapline_abi::{UcallKind, UCALL_MAGIC, UCALL_SIZE};
use trapline_devices::acpi::AcpiBuilder;
use trapline_devices::pci::Space;
use trapline_fuzz::{encode_width, mapping_index, Access, Enc, Machine, Target};

fn write(dir: &Path, target: &str, name: &str, bytes: &[u8]) {
    let d = dir.join(target);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join(format!("seed-{name}")), bytes).unwrap();
}

/// Seeds for bus_devices: tag byte 0 = access.
fn bus_devices(dir: &Path) {
    let m = Machine::new();
    let pio = |name: &str| mapping_index(&m.pio, name);
    let mmio = |name: &str| mapping_index(&m.mmio, name);
    let acc = |e: &mut Enc, a: Access| {
        e.u8(0);
        a.encode(e);
    };
    // Serial "hi\n" then LSR, debug-exit.
    let mut e = Enc::new();
    for c in b"hi\n" {
        acc(
            &mut e,
            Access::at(Space::Pio, pio("com1"), 0, 1).writing(u64::from(*c)),
        );
    }
    acc(&mut e, Access::at(Space::Pio, pio("com1"), 5, 1));
    acc(
        &mut e,
        Access::at(Space::Pio, pio("isa-debug-exit"), 0, 4).writing(3),
    );
    write(dir, "bus_devices", "serial-debug-exit", &e.0);

    // "Shutdown" to the Bochs port as one `rep outsb`; PM1_CNT S5.
    let mut e = Enc::new();
    let mut a = Access::at(Space::Pio, pio("bochs-shutdown"), 0, 1)
        .writing(u64::from_le_bytes(*b"Shutdown"));
    a.count = 8;
    acc(&mut e, a);
    acc(&mut e, Access::at(Space::Pio, pio("acpi-pm"), 8, 4));
    acc(
        &mut e,
        Access::at(Space::Pio, pio("acpi-pm"), 4, 2).writing(0x2000),
    );
    write(dir, "bus_devices", "power-off", &e.0);

    // fw_cfg signature, PCI via CF8/CFC and ECAM, pci-testdev BAR select.
    let mut e = Enc::new();
    acc(
        &mut e,
        Access::at(Space::Pio, pio("fw_cfg"), 0, 2).writing(0),
    );
    acc(&mut e, Access::at(Space::Pio, pio("fw_cfg"), 1, 4));
    acc(
        &mut e,
        Access::at(Space::Pio, pio("pci-config"), 0, 4).writing(0x8000_1000),
    );
    acc(&mut e, Access::at(Space::Pio, pio("pci-config"), 4, 4));
    acc(
        &mut e,
        Access::at(Space::Mmio, mmio("pci-ecam"), 0x10000, 4),
    );
    let mut sel = Access::at(Space::Mmio, 0, 0, 1).writing(1);
    sel.target = Target::Bar { bar: 0, offset: 0 };
    acc(&mut e, sel);
    sel.target = Target::Bar {
        bar: 0,
        offset: 0x801,
    };
    acc(&mut e, sel.writing(0xce));
    let mut rd = Access::at(Space::Pio, 0, 0, 4);
    rd.target = Target::Bar { bar: 1, offset: 0 };
    acc(&mut e, rd);
    write(dir, "bus_devices", "fw-cfg-pci", &e.0);

    // pc-testdev and the probes, LAPIC page, ucall.
    let mut e = Enc::new();
    acc(
        &mut e,
        Access::at(Space::Pio, pio("pc-testdev-ioport"), 0, 4).writing(0xdead_beef),
    );
    acc(
        &mut e,
        Access::at(Space::Pio, pio("pc-testdev-ioport-byte"), 2, 1),
    );
    acc(
        &mut e,
        Access::at(Space::Pio, pio("pc-testdev-flush-page"), 0, 4).writing(0x1234),
    );
    acc(
        &mut e,
        Access::at(Space::Pio, pio("pc-testdev-irq-line"), 4, 1).writing(1),
    );
    acc(
        &mut e,
        Access::at(Space::Mmio, mmio("pc-testdev-iomem"), 0xfff, 8).writing(0x0102_0304_0506_0708),
    );
    acc(
        &mut e,
        Access::at(Space::Mmio, mmio("pc-testdev-iomem"), 0xffff, 2),
    );
    acc(
        &mut e,
        Access::at(Space::Pio, pio("probe"), 0, 4).writing(7),
    );
    acc(
        &mut e,
        Access::at(Space::Mmio, mmio("probe"), 0x1000, 8).writing(0xce),
    );
    acc(
        &mut e,
        Access::at(Space::Mmio, mmio("lapic-fallback"), 0x30, 4),
    );
    // A well-formed ucall at 0x2000, then its announcement.
    e.u8(12).u16(0x2000).u8(0).u8(UcallKind::Done as u8).u64(0);
    e.u8(4).bytes(b"done");
    acc(
        &mut e,
        Access::at(Space::Pio, pio("ucall"), 0, 4).writing(0x2000),
    );
    write(dir, "bus_devices", "misc", &e.0);
}

fn bus_table(dir: &Path) {
    let mut e = Enc::new();
    // 4 ranges: small, u16, a wrapping one and one ending at u64::MAX.
    e.u8(4);
    e.u8(0).u8(0x10).u8(8);
    e.u8(0b0101).u16(0x3f8).u16(8);
    e.u8(0b1011).u8(0).u64(u64::MAX);
    e.u8(0b0011).u8(1).u8(1);
    // Queries.
    e.u8(0).u8(0).u16(3);
    e.u8(0b0010_0110).u64(u64::MAX);
    write(dir, "bus_table", "edges", &e.0);
}

fn uart(dir: &Path) {
    // ctl: bit0 write, bits1..3 offset, bits4..6 width sel (0 = 1 byte).
    let w = |e: &mut Enc, off: u8, v: u8| {
        e.u8(1 | off << 1).u8(v);
    };
    let r = |e: &mut Enc, off: u8| {
        e.u8(off << 1).u8(0);
    };
    let mut e = Enc::new();
    // Linux 8250 style: divisor latch, 8N1, loopback test, then output.
    w(&mut e, 3, 0x80);
    w(&mut e, 0, 1);
    w(&mut e, 1, 0);
    r(&mut e, 0);
    w(&mut e, 3, 0x03);
    w(&mut e, 4, 0x10);
    w(&mut e, 0, 0x55);
    r(&mut e, 5);
    r(&mut e, 0);
    w(&mut e, 4, 0x03);
    for c in b"ok\n" {
        w(&mut e, 0, *c);
    }
    r(&mut e, 5);
    r(&mut e, 2);
    // A 4-byte read of LSR and a `rep outsb` of 4 bytes.
    e.u8(5 << 1 | 2 << 4).u8(0);
    e.u8(1 | 0x80).u8(3).u8(b'a');
    write(dir, "uart", "linux-init", &e.0);
}

fn fw_cfg(dir: &Path) {
    let mut e = Enc::new();
    e.u64(128 << 20).u16(2).u8(3).u16(4).u64(0x1_4000_0000);
    e.u8(1).u16(0x8003).u8(3).bytes(&[9, 8, 7]);
    e.u8(2);
    e.u8(9).bytes(b"etc/alpha").u16(5).u8(0x61);
    e.u8(8).bytes(b"opt/zeta").u16(3).u8(1);
    // Select the directory (16-bit write at port 0), read it byte/dword.
    e.u8(1 | 1 << 3).u16(0x19);
    for _ in 0..20 {
        e.u8(2 << 3);
    }
    e.u8(1 | 1 << 3).u16(0x20);
    e.u8(7 << 3).u16(8);
    e.u8(2 << 1);
    write(dir, "fw_cfg", "files", &e.0);
}

fn ucall(dir: &Path) {
    let mut e = Enc::new();
    let mut msg = [0u8; UCALL_SIZE];
    msg[..4].copy_from_slice(&UCALL_MAGIC.to_le_bytes());
    msg[4..8].copy_from_slice(&(UcallKind::Result as u32).to_le_bytes());
    msg[8..16].copy_from_slice(&4u64.to_le_bytes());
    msg[56..68].copy_from_slice(b"pio-user-out");
    e.u8(0).u16(0x2000).u8(0).u8(2).u8(0).bytes(&msg);
    e.u8(3).u16(0x2004).u8(0).u8(2).u8(1).bytes(&msg);
    write(dir, "ucall", "result", &e.0);
}

fn pci_config(dir: &Path) {
    // Default machine; read vendor/device via both front ends, size BARs.
    let mut e = Enc::new();
    e.u8(0).u8(0).u8(0).bytes(&[0; 12]);
    e.u8(2).u8(1).u8(0).u8(2);
    e.u8(2).u8(1).u8(2).u8(1);
    e.u8(6).u8(1).u8(0);
    e.u8(6).u8(1).u8(1);
    e.u8(7).u8(0).u8(1).u8(0).u16(0).u8(2).u8(0);
    write(dir, "pci_config", "testdev", &e.0);
    // A synthetic function at 00:03.0 with I/O, 32- and 64-bit BARs and a
    // shadow attached; move a BAR and read through the window.
    let mut e = Enc::new();
    e.u8(4 | 2).u8(0).u8(0x18);
    e.bytes(&[1, 4, 2, 12, 3, 20, 0, 0, 6, 16, 0, 0]);
    e.u8(5).u8(2).u8(1).u32(0xe000_0000);
    e.u8(7).u8(0).u8(2).u8(1).u16(0x10).u8(2).u8(0);
    e.u8(1).u8(2).u16(0x4).u8(1).u64(0);
    write(dir, "pci_config", "synth-shadow", &e.0);
}

fn pci_testdev(dir: &Path) {
    // Select each test on its BAR, write its data at its offset, read the
    // header; fire the PV doorbell.
    let mut e = Enc::new();
    e.u8(0);
    for (bar, sel) in [(0u8, 0u8), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)] {
        e.u8(0).u8(bar).u8(0).u64(u64::from(sel));
        e.u8(0)
            .u8(bar)
            .u8(1)
            .u64(if sel == 1 { 0xce } else { 0xfa });
        e.u8(4).u8(bar).u8(12).u8(2);
    }
    e.u8(0).u8(1).u8(0).u64(0x80);
    e.u8(3).u8(0).u8(2).u8(0);
    e.u8(5).u8(0).u8(2).u32(0xe000_1000);
    e.u8(7).u8(0);
    e.u8(3).u8(0).u8(2).u8(0);
    write(dir, "pci_testdev", "all-tests", &e.0);
}

fn acpi(dir: &Path) {
    write(dir, "acpi_build", "default", &[0, 1]);
    let mut e = Enc::new();
    e.u8(1 | 1 << 2 | 0x20).u16(300).u16(0xb000).u16(0xb00);
    e.u8(255);
    write(dir, "acpi_build", "300cpus-ecam", &e.0);
    for (name, t) in [
        ("default", AcpiBuilder::new().build().unwrap()),
        (
            "ecam-2cpus",
            AcpiBuilder::new()
                .cpus(2)
                .ecam(0xc000_0000, 1)
                .build()
                .unwrap(),
        ),
    ] {
        let end = t
            .tables
            .iter()
            .map(|i| (i.gpa - t.base) as usize + i.len)
            .max()
            .unwrap();
        let mut e = Enc::new();
        e.u8(4).bytes(&t.bytes[..end.next_multiple_of(16)]);
        write(dir, "acpi_parse", name, &e.0);
    }
}

fn loader(dir: &Path) {
    let hello = trapline_guest::payload("hello").unwrap();
    let hello64 = trapline_guest::payload("hello64").unwrap();
    write(dir, "loader_inspect", "hello.flat", hello);
    write(dir, "loader_inspect", "hello64.elf", hello64);
    write(
        dir,
        "loader_inspect",
        "hello64-headers",
        &hello64[..0x200.min(hello64.len())],
    );
    let mut h = [0u8; 16];
    let mut img = h.to_vec();
    img.extend_from_slice(hello);
    write(dir, "loader_load", "hello.flat", &img);
    h[1] = 1 | 2; // initrd, machine holes
    h[2] = 40; // 40 bytes of arguments
    h[12..14].copy_from_slice(&5000u16.to_le_bytes());
    let mut img = h.to_vec();
    img.extend_from_slice(hello64);
    write(dir, "loader_load", "hello64-initrd", &img);
    h[0] = 1;
    h[1] = 4; // custom reserved range over the image
    h[4..8].copy_from_slice(&0x40_1000u32.to_le_bytes());
    h[8..12].copy_from_slice(&0x1000u32.to_le_bytes());
    let mut img = h.to_vec();
    img.extend_from_slice(hello64);
    write(dir, "loader_load", "hello64-reserved", &img);
    // An image linked at 0x8000: the boot area has to move out of its way.
    let realmode = trapline_guest::payload("realmode").unwrap();
    write(dir, "loader_inspect", "realmode.flat", realmode);
    let mut h = [0u8; 16];
    h[1] = 1 | 2; // initrd, machine holes
    h[12..14].copy_from_slice(&300u16.to_le_bytes());
    let mut img = h.to_vec();
    img.extend_from_slice(realmode);
    write(dir, "loader_load", "realmode-initrd", &img);
    // A Linux bzImage (protocol 2.15, relocatable, preferring 2 MiB, 1 MiB
    // of decompression space), so the fuzzers start inside its header.
    let bz = bzimage();
    write(dir, "loader_inspect", "bzimage", &bz);
    let mut h = [0u8; 16];
    h[1] = 1 | 2; // initrd, machine holes
    h[2] = 40; // 40 bytes of arguments
    h[12..14].copy_from_slice(&300u16.to_le_bytes());
    let mut img = h.to_vec();
    img.extend_from_slice(&bz);
    write(dir, "loader_load", "bzimage-initrd", &img);
}

/// A minimal bzImage: one setup sector after the boot sector, the setup
/// header's fields as Linux 6.1 sets them, 256 bytes of "kernel".
/// Seeds for loader_arm64: header (RAM size, flags, initrd length), image.
fn loader_arm64(dir: &Path) {
    let seed = |name: &str, h: [u8; 4], image: &[u8]| {
        let mut v = h.to_vec();
        v.extend_from_slice(image);
        write(dir, "loader_arm64", name, &v);
    };
    // The arm64 hello payload (ELF64 AArch64) in 16 MiB, with an initrd.
    seed("hello.elf", [2, 1, 0x40, 0], trapline_guest::aarch64::HELLO);
    // A raw image (a .flat's first instructions: b +8; nop) in 3 MiB.
    seed(
        "raw",
        [1, 0, 0, 0],
        &[0x02, 0, 0, 0x14, 0x1f, 0x20, 0x03, 0xd5],
    );
    // An arm64 Linux Image header: text_offset 0, image_size 1 MiB.
    let mut image = vec![0u8; 0x40];
    image[0x10..0x18].copy_from_slice(&0x10_0000u64.to_le_bytes());
    image[0x38..0x3C].copy_from_slice(b"ARM\x64");
    seed("linux-image", [2, 1 | 2, 0x10, 0], &image);
}

fn bzimage() -> Vec<u8> {
    let mut f = vec![0u8; 1024];
    let put = |f: &mut [u8], at: usize, v: &[u8]| f[at..at + v.len()].copy_from_slice(v);
    f[0x1F1] = 1; // setup_sects
    put(&mut f, 0x1F4, &16u32.to_le_bytes()); // syssize: 256 bytes
    put(&mut f, 0x1FA, &0xFFFFu16.to_le_bytes()); // vid_mode
    put(&mut f, 0x1FE, &[0x55, 0xAA]);
    put(&mut f, 0x200, &[0xEB, 0x6A]); // header ends at 0x26C
    put(&mut f, 0x202, b"HdrS");
    put(&mut f, 0x206, &0x020Fu16.to_le_bytes());
    f[0x211] = 1; // LOADED_HIGH
    put(&mut f, 0x214, &0x10_0000u32.to_le_bytes());
    put(&mut f, 0x22C, &0x7FFF_FFFFu32.to_le_bytes());
    put(&mut f, 0x230, &0x20_0000u32.to_le_bytes());
    f[0x234] = 1; // relocatable
    put(&mut f, 0x236, &3u16.to_le_bytes());
    put(&mut f, 0x238, &2047u32.to_le_bytes());
    put(&mut f, 0x258, &0x20_0000u64.to_le_bytes());
    put(&mut f, 0x260, &0x10_0000u32.to_le_bytes());
    f.extend((0..256).map(|i| i as u8));
    f
}

/// Seeds for virtio_blk: a driver's setup, then one request
/// (header + data + status descriptors, made available and notified).
fn virtio_blk(dir: &Path) {
    let request = |read_only: bool, kind: u32, data_flags: u16| {
        let mut e = Enc::new();
        e.u8(read_only.into());
        // op 6: setup with VERSION_1 | EVENT_IDX | FLUSH, 16 entries.
        e.u8(6).u64(1 << 32 | 1 << 29 | 1 << 9).u16(16);
        // op 4: the request header at 0x4000.
        let mut h = [0u8; 16];
        h[..4].copy_from_slice(&kind.to_le_bytes());
        h[8..].copy_from_slice(&3u64.to_le_bytes());
        e.u8(4).u16(0x4000).u8(16).bytes(&h);
        // op 3: descriptors 0..3.
        e.u8(3).u8(0).u32(0x4000).u32(16).u16(1).u16(1);
        e.u8(3).u8(1).u32(0x8000).u32(1024).u16(data_flags).u16(2);
        e.u8(3).u8(2).u32(0x5000).u32(1).u16(2).u16(0);
        // op 5: head 0 available, notify queue 0.
        e.u8(5).u16(0).u32(0);
        e.0
    };
    write(dir, "virtio_blk", "read", &request(false, 0, 3));
    write(dir, "virtio_blk", "write", &request(false, 1, 1));
    write(dir, "virtio_blk", "ro-write", &request(true, 1, 1));
    write(dir, "virtio_blk", "get-id", &request(false, 8, 3));
}

/// Seeds for virtio_net: a driver's setup of both queues, receive
/// buffers, then frames sent (header + frame) that the echo reflects.
fn virtio_net(dir: &Path) {
    let echo = |frame_len: u32, rx_len: u32, flags: u8| {
        let mut e = Enc::new();
        // op 6: setup with VERSION_1 | EVENT_IDX | MAC | STATUS, 16 entries.
        e.u8(6).u64(1 << 32 | 1 << 29 | 1 << 16 | 1 << 5).u16(16);
        // op 3: receive descriptor 0 (queue 0, writable) at 0x8000.
        e.u8(3).u8(0).u8(0).u32(0x8000).u32(rx_len).u16(2).u16(0);
        // op 5: head 0 available on queue 0, notify queue 0.
        e.u8(5).u16(0).u8(0).u32(0);
        // op 4: header + the start of a frame at 0xc000.
        let mut f = vec![flags, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        f.extend_from_slice(&[0xff; 6]);
        f.extend_from_slice(&[0x52, 0x54, 0, 0x12, 0x34, 0x56, 0x88, 0xb5]);
        e.u8(4).u16(0xc000).u8(f.len() as u8).bytes(&f);
        // op 3: transmit descriptor 0 (queue 1), op 5: available, notify 1.
        e.u8(3).u8(1).u8(0).u32(0xc000).u32(12 + frame_len).u16(0).u16(0);
        e.u8(5).u16(0).u8(1).u32(1);
        // op 7: the device serves the receive queue on its own.
        e.u8(7);
        e.0
    };
    write(dir, "virtio_net", "echo", &echo(60, 1526, 0));
    write(dir, "virtio_net", "small-rx", &echo(1514, 100, 0));
    write(dir, "virtio_net", "offload", &echo(60, 1526, 1));
    write(dir, "virtio_net", "oversize", &echo(1515, 1526, 0));
}

/// Seeds for pl011: Linux's amba-pl011 set-up and a line printed, the
/// receiver with its interrupts, kvm-unit-tests' byte writes.
fn pl011(dir: &Path) {
    // An access op: tag (bit 0 write, bits 2..4 width selector, bit 5 a
    // register byte follows), the register, a u32 value.
    let reg = |e: &mut Enc, write: bool, sel: u8, reg: u8, v: u32| {
        e.u8(u8::from(write) | sel << 2 | 0x20).u8(reg).u32(v);
    };
    let mut e = Enc::new();
    e.u8(2 << 2).u16(0xFE0).u32(0); // PeriphID0 (a u16 offset)
    reg(&mut e, true, 2, 0x30 / 4, 0); // CR off
    reg(&mut e, true, 2, 0x24 / 4, 13); // IBRD
    reg(&mut e, true, 2, 0x28 / 4, 1); // FBRD
    reg(&mut e, true, 2, 0x2C / 4, 0x70); // LCR_H: 8N1, FIFOs
    reg(&mut e, true, 2, 0x38 / 4, 0x50); // IMSC: RX, RT
    reg(&mut e, true, 2, 0x30 / 4, 0x301); // CR: UARTEN, TXE, RXE
    for c in b"ok\n" {
        reg(&mut e, false, 2, 0x18 / 4, 0); // FR
        reg(&mut e, true, 2, 0, u32::from(*c)); // DR
    }
    e.u8(2).u8(5).bytes(b"hello"); // typed input
    reg(&mut e, false, 2, 0x40 / 4, 0); // MIS
    for _ in 0..3 {
        reg(&mut e, false, 2, 0, 0); // DR
    }
    reg(&mut e, true, 2, 0x2C / 4, 0); // FIFOs off: one byte kept
    reg(&mut e, true, 2, 0x44 / 4, 0x7FF); // ICR
    e.u8(3);
    write(dir, "pl011", "linux", &e.0);
    // Byte writes to DR (kvm-unit-tests' puts), a halfword, a wide read.
    let mut e = Enc::new();
    for c in b"hi" {
        reg(&mut e, true, 0, 0, u32::from(*c));
    }
    reg(&mut e, true, 1, 0x24 / 4, 0xABCD);
    e.u8(7 << 2).u16(64).u16(0xFE0).u32(0); // 64-byte read over the IDs
    write(dir, "pl011", "bytes", &e.0);
}

/// Seeds for pl031: Linux's rtc-pl031 reading the time, an alarm armed
/// and reached, the counter loaded near its wrap.
fn pl031(dir: &Path) {
    let reg = |e: &mut Enc, write: bool, reg: u16, v: u32| {
        e.u8(u8::from(write) | 2 << 2 | 0x20).u16(reg).u32(v);
    };
    let mut e = Enc::new();
    e.u64(1_764_000_000).u64(5_000_000_000); // UTC seconds, clock start
    reg(&mut e, false, 0xFE0 / 4, 0);
    reg(&mut e, false, 0, 0); // DR
    reg(&mut e, true, 0x10 / 4, 1); // IMSC
    reg(&mut e, true, 0x04 / 4, 1_764_000_003); // MR: 3 s ahead
    e.u8(2).u32(3500); // 3.5 s later
    reg(&mut e, false, 0x18 / 4, 0); // MIS
    reg(&mut e, true, 0x1C / 4, 1); // ICR
    reg(&mut e, true, 0x08 / 4, u32::MAX); // LR near the wrap
    e.u8(2 | 20 << 2).u32(1000); // 2^20 s later
    reg(&mut e, false, 0, 0);
    e.u8(3);
    write(dir, "pl031", "alarm", &e.0);
    // Accesses it refuses: a byte, a misaligned word, past the page.
    let mut e = Enc::new();
    e.u64(0).u64(u64::MAX - 1);
    e.u8(1).u16(0x10).u32(1); // a 1-byte write to IMSC
    e.u8(2 << 2).u16(0x0A).u32(0); // a misaligned read
    e.u8(1 | 2 << 2).u16(0x1008).u32(7); // past the page
    reg(&mut e, false, 0, 0);
    write(dir, "pl031", "refused", &e.0);
}

/// Seeds for fdt: trapline's own machine (1 and 2 vCPUs, a disk, an
/// initrd, Linux's command line) and odd descriptions.
fn fdt(dir: &Path) {
    let mut e = Enc::new();
    // ITS, PL011, PL031, PCIe, initrd; 2 vCPUs, KVM's MPIDRs; 256 MiB.
    e.u8(0x1F).u8(2).u8(0).u32(0x1_0000);
    e.u8(2).u8(0).u8(0); // 2 transports in QEMU's slots
    e.u64(0x4800_0000).u64(0x4810_0000); // initrd
    e.bytes(b"console=ttyAMA0 earlycon quiet");
    write(dir, "fdt", "trapline-linux", &e.0);
    let mut e = Enc::new();
    // hello's machine: 1 vCPU, 64 MiB, 32 transports, no command line.
    e.u8(0x0F).u8(1).u8(0).u32(0x4000).u8(32);
    for _ in 0..32 {
        e.u8(0);
    }
    e.u64(0).u64(0);
    write(dir, "fdt", "hello-32-transports", &e.0);
    let mut e = Enc::new();
    // Input-chosen MPIDRs with an Aff3 (two-cell reg), PMU, SMC.
    e.u8(0x2E | 0x40)
        .u8(2)
        .u8(1)
        .u64(0x1_0000_0000)
        .u64(0x8000_0101);
    e.u32(0x100).u8(23).u8(0).u64(0).u64(0);
    write(dir, "fdt", "aff3-pmu-smc", &e.0);
}

/// Seeds for chr_testdev: kvm-unit-tests' exit(0) and exit(1), a packet in
/// pieces, and registers poked by hand.
fn chr_testdev(dir: &Path) {
    let mut e = Enc::new();
    e.u8(4).u8(2).bytes(b"0q");
    write(dir, "chr_testdev", "exit-0", &e.0);
    let mut e = Enc::new();
    e.u8(4).u8(6).bytes(b"12 \n1q");
    e.u8(4).u8(4).bytes(b"  42");
    e.u8(4).u8(1).bytes(b"q");
    write(dir, "chr_testdev", "packets", &e.0);
    let mut e = Enc::new();
    e.u8(0).u8(0x28 / 4).u32(4096); // GuestPageSize
    e.u8(0).u8(0x30 / 4).u32(1); // QueueSel 1
    e.u8(0).u8(0x38 / 4).u32(128); // QueueNum
    e.u8(0).u8(0x3C / 4).u32(4096); // QueueAlign
    e.u8(0).u8(0x40 / 4).u32(1); // QueuePFN
    e.u8(2).u16(0x8000).u8(2).bytes(b"7q");
    e.u8(3).u32(1); // notify: an empty ring
    e.u8(1).u16(0x34).u8(2).u32(0); // QueueNumMax
    e.u8(0).u8(0x70 / 4).u32(0); // reset
    write(dir, "chr_testdev", "by-hand", &e.0);
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus"));
    bus_devices(&dir);
    bus_table(&dir);
    uart(&dir);
    fw_cfg(&dir);
    ucall(&dir);
    pci_config(&dir);
    pci_testdev(&dir);
    acpi(&dir);
    loader(&dir);
    loader_arm64(&dir);
    virtio_blk(&dir);
    virtio_net(&dir);
    pl011(&dir);
    pl031(&dir);
    fdt(&dir);
    chr_testdev(&dir);
    let _ = encode_width;
    println!("seeds written under {}", dir.display());
}
