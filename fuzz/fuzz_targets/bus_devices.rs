//! Every device trapline has, on its PIO and MMIO buses at the machine's
//! addresses, driven by a stream of guest accesses of any width (string
//! I/O included) plus guest-memory writes for the ucall port.
//!
//! Invariants checked on every access, piece by piece as the bus cuts it
//! (`trapline_fuzz::model_pieces`: each device's QEMU sizes):
//! - nothing panics (the BusDevice contract: any width, any offset);
//! - unmapped pieces read all-ones; an access reports `Access::Unmapped`
//!   exactly when no piece is mapped; pieces below a device's minimum read
//!   zeros and change nothing;
//! - a read fills the whole buffer: for devices whose reads have no side
//!   effects, reading again into a buffer pre-filled with the complement
//!   gives the same bytes; UART/fw_cfg bytes past their registers are 0xff,
//!   fw_cfg's wide reads are zeros;
//! - exact values where the model is a one-liner (debug-exit, Bochs port,
//!   LAPIC fallback, probe pattern, doorbells, pc-testdev scratch register
//!   and IoMem); the MMIO doorbell's eventfd and leak counts;
//! - only isa-debug-exit, the Bochs port ("Shutdown") and the PM1 control
//!   register (SLP_EN with SLP_TYP 0: power-off, 1: S3 suspend) may stop
//!   the VM, exactly when they should.

#![no_main]

use libfuzzer_sys::fuzz_target;
use trapline_abi::{PROBE_READ_VALUE, UCALL_MAGIC};
use trapline_bus::{Access as Dispatch, IoOutcome, StopReason};
use trapline_fuzz::{model_pieces, Access, Input, Machine, Piece};
use vm_memory::{Bytes, GuestAddress};

#[derive(Default)]
struct Model {
    /// pc-testdev's scratch register.
    scratch: u32,
    /// pc-testdev's 64 KiB IoMem.
    iomem: Vec<u8>,
    /// Bytes written to the Bochs port since the last power-off.
    bochs: Vec<u8>,
    /// Writes to the MMIO doorbell's first page (each rings its eventfd)
    /// and to its second page (counted as leaked).
    rings: u64,
    leaks: u64,
}

/// Devices whose reads change state (so a second read may differ).
fn read_has_side_effects(name: &str) -> bool {
    matches!(name, "com1" | "fw_cfg" | "rtc")
}

/// Check the bytes a delivered piece of `name` at `offset` read.
fn check_read(model: &Model, name: &str, offset: u64, buf: &[u8]) {
    let ones = buf.iter().all(|&b| b == 0xff);
    match name {
        "com1" if offset >= 8 => assert!(ones, "com1+{offset:#x} read {buf:02x?}"),
        "fw_cfg" if offset >= 2 => assert!(ones, "fw_cfg+{offset:#x} read {buf:02x?}"),
        "fw_cfg" if buf.len() > 1 => {
            assert!(buf.iter().all(|&b| b == 0), "fw_cfg wide read {buf:02x?}")
        }
        "isa-debug-exit" | "pc-testdev-irq-line" | "doorbell" => {
            assert!(buf.iter().all(|&b| b == 0), "{name} read {buf:02x?}")
        }
        "bochs-shutdown" | "ucall" | "lapic-fallback" | "pc-testdev-flush-page" | "pv-doorbell" => {
            assert!(ones, "{name} read {buf:02x?}")
        }
        "probe" | "probe-ro-memslot" => {
            let v = PROBE_READ_VALUE.to_le_bytes();
            for (i, b) in buf.iter().enumerate() {
                assert_eq!(
                    *b,
                    v[(offset as usize).wrapping_add(i) % 4],
                    "probe read {buf:02x?}"
                );
            }
        }
        "pc-testdev-ioport" | "pc-testdev-ioport-byte" => {
            let v = model.scratch.to_le_bytes();
            for (i, b) in buf.iter().enumerate() {
                assert_eq!(*b, v[(offset as usize + i) & 3], "scratch read {buf:02x?}");
            }
        }
        "pc-testdev-iomem" => {
            for (i, b) in buf.iter().enumerate() {
                let want = model
                    .iomem
                    .get(offset as usize + i)
                    .copied()
                    .unwrap_or(0xff);
                assert_eq!(*b, want, "iomem+{offset:#x}[{i}]");
            }
        }
        _ => {}
    }
}

/// Apply a delivered piece written to `name` at `offset` to the model;
/// what the device should answer.
fn write_piece(model: &mut Model, name: &str, offset: u64, data: &[u8]) -> IoOutcome {
    match name {
        "isa-debug-exit" => {
            let mut v = [0u8; 4];
            let n = data.len().min(4);
            v[..n].copy_from_slice(&data[..n]);
            IoOutcome::Stop(StopReason::DebugExit(u32::from_le_bytes(v)))
        }
        "bochs-shutdown" => {
            let mut out = IoOutcome::Continue;
            if offset == 0 {
                if let Some(&b) = data.first() {
                    model.bochs.push(b);
                    if model.bochs.ends_with(b"Shutdown") {
                        model.bochs.clear();
                        out = IoOutcome::Stop(StopReason::PowerOff);
                    }
                }
            }
            out
        }
        "acpi-pm" => {
            // SLP_EN is bit 13 of PM1_CNT (port base + 4): bit 5 of the byte
            // at offset 5, whose bits 2..4 are SLP_TYP; only this write can
            // set SLP_EN (it is never stored).
            match 5u64.checked_sub(offset).and_then(|i| data.get(i as usize)) {
                Some(&b) if b & 0x20 != 0 && (b >> 2) & 7 == 0 => {
                    IoOutcome::Stop(StopReason::PowerOff)
                }
                Some(&b) if b & 0x20 != 0 && (b >> 2) & 7 == 1 => {
                    IoOutcome::Stop(StopReason::Suspend)
                }
                _ => IoOutcome::Continue,
            }
        }
        "pc-testdev-ioport" | "pc-testdev-ioport-byte" => {
            for (i, &b) in data.iter().enumerate() {
                let shift = ((offset as usize + i) & 3) * 8;
                model.scratch = (model.scratch & !(0xff << shift)) | (u32::from(b) << shift);
            }
            IoOutcome::Continue
        }
        "pc-testdev-iomem" => {
            for (i, &b) in data.iter().enumerate() {
                if let Some(slot) = model.iomem.get_mut(offset as usize + i) {
                    *slot = b;
                }
            }
            IoOutcome::Continue
        }
        "doorbell" => {
            if offset < 0x1000 {
                model.rings += 1;
            } else {
                model.leaks += 1;
            }
            IoOutcome::Continue
        }
        _ => IoOutcome::Continue,
    }
}

fn access(m: &Machine, model: &mut Model, a: &Access) {
    let bus = m.bus(a.space);
    let addr = m.resolve(a);
    let pieces = model_pieces(|x| bus.find(x).map(|m| (m.base, m.sizes)), addr, a.len);
    // An empty access reaches the mapping at its address but no device.
    let mapped = if a.len == 0 {
        bus.find(addr).is_some()
    } else {
        pieces.iter().any(|p| p.base.is_some())
    };
    let name_of = |p: &Piece| bus.find(p.addr).map_or("", |m| m.name);
    let elems = a.count.max(1);
    if a.write {
        let data = a.data();
        for i in 0..elems {
            let chunk = &data[i * a.len..(i + 1) * a.len];
            let got = bus.write(a.vcpu, addr, chunk);
            // The first piece that stops the VM ends the access.
            let mut outcome = IoOutcome::Continue;
            for p in pieces.iter().filter(|p| p.delivered) {
                let offset = p.addr - p.base.unwrap_or(0);
                outcome = write_piece(model, name_of(p), offset, &chunk[p.at..p.at + p.len]);
                if outcome != IoOutcome::Continue {
                    break;
                }
            }
            let want = if mapped {
                Dispatch::Handled(outcome)
            } else {
                Dispatch::Unmapped
            };
            assert_eq!(got, want, "write {addr:#x} {chunk:02x?} as {pieces:?}");
            if matches!(got, Dispatch::Handled(IoOutcome::Stop(_))) {
                break; // the vCPU loop stops here too
            }
        }
    } else {
        let pure = !pieces
            .iter()
            .any(|p| p.delivered && read_has_side_effects(name_of(p)));
        for _ in 0..elems {
            let mut buf = vec![a.fill; a.len];
            let got = bus.read(a.vcpu, addr, &mut buf);
            assert_eq!(got == Dispatch::Unmapped, !mapped);
            if pure {
                let mut again = vec![!a.fill; a.len];
                bus.read(a.vcpu, addr, &mut again);
                assert_eq!(
                    buf, again,
                    "{addr:#x}: read is not a pure function of state (or does not fill the buffer; fill {:#x})",
                    a.fill
                );
            }
            for p in &pieces {
                let bytes = &buf[p.at..p.at + p.len];
                match p.base {
                    None => assert!(
                        bytes.iter().all(|&b| b == 0xff),
                        "unmapped {p:?} read {bytes:02x?}"
                    ),
                    Some(_) if !p.delivered => {
                        assert!(
                            bytes.iter().all(|&b| b == 0),
                            "too narrow {p:?} read {bytes:02x?}"
                        )
                    }
                    Some(base) => check_read(model, name_of(p), p.addr - base, bytes),
                }
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let m = Machine::new();
    let mut model = Model {
        iomem: vec![0; trapline_devices::pc_testdev::IOMEM_LEN as usize],
        ..Model::default()
    };
    let mut input = Input::new(data);
    let mut ops = 0;
    while !input.is_empty() && ops < 512 {
        ops += 1;
        match input.u8() % 16 {
            12 => {
                // A ucall message in guest RAM (often well-formed, so the
                // port's decode path is reached).
                let gpa = u64::from(input.u16());
                let mut msg = [0u8; trapline_abi::UCALL_SIZE];
                let magic = if input.u8() & 1 == 0 {
                    UCALL_MAGIC
                } else {
                    input.u32()
                };
                msg[..4].copy_from_slice(&magic.to_le_bytes());
                msg[4..8].copy_from_slice(&u32::from(input.u8() % 10).to_le_bytes());
                msg[8..16].copy_from_slice(&input.u64().to_le_bytes());
                let len = usize::from(input.u8() % 80);
                let t = input.bytes(len);
                let n = t.len().min(msg.len() - 56);
                msg[56..56 + n].copy_from_slice(&t[..n]);
                let _ = m.memory.write_slice(&msg, GuestAddress(gpa));
            }
            13 => m.clock.advance(u64::from(input.u32()) << (input.u8() % 24)),
            14 => {
                let gpa = u64::from(input.u16());
                let n = usize::from(input.u8());
                let bytes = input.bytes(n);
                let _ = m.memory.write_slice(bytes, GuestAddress(gpa));
            }
            15 => m.registry.set_failing(input.u8() & 1 != 0),
            _ => {
                let a = Access::decode(&mut input);
                access(&m, &mut model, &a);
            }
        }
    }
    for ev in m.ucalls.try_iter() {
        assert!(!ev.text.contains('\0'));
    }
    let (doorbell, fd) = &m.doorbell;
    assert_eq!(doorbell.leaked(), model.leaks, "doorbell leaks");
    assert_eq!(fd.read().unwrap_or(0), model.rings, "doorbell rings");
});
