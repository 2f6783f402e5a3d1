//! The arm64 console, `pl011::Pl011`, against a byte-lane register model.
//!
//! Input: a stream of ops, tag byte first:
//! - tag & 3 == 0, 1: an access; bit 0 = write, bits 2..4 = width selector
//!   (`trapline_fuzz::width`), bit 5 = an offset byte follows (register
//!   offset = byte * 4 + lane, inside the first 1 KiB) else a u16 offset
//!   (anywhere in the 4 KiB page and past it), then a u32 value whose
//!   bytes are repeated over the access;
//! - tag & 3 == 2: stdin: a count byte (0..31) of bytes queued for the
//!   receiver (`enqueue_input`), which follow;
//! - tag & 3 == 3: a check op (the invariants below, also checked after
//!   every op).
//!
//! The model, byte-lane by byte-lane (independent of how the device cuts
//! an access into registers): the stored registers (ILPR, IBRD, FBRD,
//! LCR_H, CR, IFLS, IMSC, DMACR) read back what was written, masked to
//! their widths; the ID registers read the PrimeCell IDs; a byte written
//! to DR's lane 0 is transmitted, in order, and nothing else is; DR reads
//! pop the receive FIFO in order (once per access that covers DR), which
//! holds 16 bytes with LCR_H.FEN set and 1 without, and keeps its oldest
//! bytes when FEN is cleared. Invariants: FR shows TXFE, never TXFF or
//! BUSY; FR.RXFE iff the FIFO is empty, RXFF iff full; the interrupt line
//! is at `RIS & IMSC != 0`, MIS reads exactly that, and the line is only
//! ever driven to a new level.

#![no_main]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use libfuzzer_sys::fuzz_target;
use trapline_bus::{BusDevice, IoOutcome};
use trapline_devices::pc_testdev::IrqLine;
use trapline_devices::pl011::{Pl011, FR_BUSY, FR_RXFE, FR_RXFF, FR_TXFE, FR_TXFF, LCR_H_FEN};
use trapline_devices::serial::SerialOutput;
use trapline_fuzz::{width, Input};

const SPI: u32 = 1;
const DR: u64 = 0x00;
const FR: u64 = 0x18;
const LCR_H: u64 = 0x2C;
const MIS: u64 = 0x40;
const ID_BASE: u64 = 0xFE0;
const ID: [u8; 8] = [0x11, 0x10, 0x14, 0x00, 0x0D, 0xF0, 0x05, 0xB1];

/// (register, width mask, reset value) of the registers stored as written.
const STORED: [(u64, u32, u32); 8] = [
    (0x20, 0xFF, 0),       // ILPR
    (0x24, 0xFFFF, 0),     // IBRD
    (0x28, 0x3F, 0),       // FBRD
    (LCR_H, 0xFF, 0),      // LCR_H
    (0x30, 0xFFFF, 0x300), // CR
    (0x34, 0x3F, 0x12),    // IFLS
    (0x38, 0x7FF, 0),      // IMSC
    (0x48, 0x7, 0),        // DMACR
];

/// Every level driven on the line.
#[derive(Default)]
struct Recorder(Mutex<Vec<(u32, bool)>>);

impl IrqLine for Recorder {
    fn set_irq(&self, line: u32, level: bool) {
        self.0.lock().unwrap().push((line, level));
    }
}

struct Model {
    regs: [u32; 8],
    rx: VecDeque<u8>,
    out: Vec<u8>,
}

impl Model {
    fn stored(&mut self, reg: u64) -> Option<&mut u32> {
        let i = STORED.iter().position(|&(r, _, _)| r == reg)?;
        Some(&mut self.regs[i])
    }

    fn depth(&self) -> usize {
        if self.regs[3] & LCR_H_FEN != 0 {
            16
        } else {
            1
        }
    }

    fn write(&mut self, offset: u64, data: &[u8]) {
        for (i, &b) in data.iter().enumerate() {
            let Some(addr) = offset.checked_add(i as u64) else {
                break;
            };
            let (reg, lane) = (addr & !3, (addr & 3) as u32);
            if reg == DR && lane == 0 {
                self.out.push(b);
            }
            if let Some(v) = self.stored(reg) {
                *v = (*v & !(0xFF << (8 * lane))) | (u32::from(b) << (8 * lane));
            }
        }
        for (k, &(_, mask, _)) in STORED.iter().enumerate() {
            self.regs[k] &= mask;
        }
        let depth = self.depth();
        self.rx.truncate(depth);
    }

    /// Checks a read of `data` at `offset` and pops the FIFO for DR.
    fn read(&mut self, offset: u64, data: &[u8]) {
        let mut popped: Option<Option<u8>> = None;
        for (i, &got) in data.iter().enumerate() {
            let Some(addr) = offset.checked_add(i as u64) else {
                break;
            };
            let (reg, lane) = (addr & !3, (addr & 3) as u32);
            let want = if reg == DR {
                let byte = *popped.get_or_insert_with(|| self.rx.pop_front());
                Some(if lane == 0 { byte.unwrap_or(0) } else { 0 })
            } else if (ID_BASE..ID_BASE + 32).contains(&reg) {
                Some(if lane == 0 {
                    ID[((reg - ID_BASE) / 4) as usize]
                } else {
                    0
                })
            } else {
                let i = STORED.iter().position(|&(r, _, _)| r == reg);
                i.map(|i| (self.regs[i] >> (8 * lane)) as u8)
            };
            if let Some(w) = want {
                assert_eq!(
                    got, w,
                    "PL011 byte at {addr:#x} read {got:#x}, model {w:#x}"
                );
            }
        }
    }
}

fn r32(u: &Pl011, reg: u64) -> u32 {
    let mut b = [0u8; 4];
    u.read(0, 0x0900_0000, reg, &mut b);
    u32::from_le_bytes(b)
}

/// The invariants that hold between any two ops (reading FR and MIS has
/// no side effect).
fn check(u: &Pl011, m: &Model, rec: &Recorder) {
    let fr = r32(u, FR);
    assert_ne!(
        fr & FR_TXFE,
        0,
        "FR {fr:#x}: the transmitter is always empty"
    );
    assert_eq!(fr & (FR_TXFF | FR_BUSY), 0, "FR {fr:#x}");
    assert_eq!(
        fr & FR_RXFE != 0,
        m.rx.is_empty(),
        "FR {fr:#x}, fifo {}",
        m.rx.len()
    );
    assert_eq!(
        fr & FR_RXFF != 0,
        m.rx.len() >= m.depth(),
        "FR {fr:#x}, fifo {}",
        m.rx.len()
    );
    assert_eq!(u.input_room(), m.depth() - m.rx.len());
    let mis = r32(u, MIS);
    assert_eq!(u.irq_level(), mis != 0, "line vs MIS {mis:#x}");
    let levels = rec.0.lock().unwrap();
    assert!(levels.iter().all(|&(l, _)| l == SPI));
    assert!(
        levels.windows(2).all(|w| w[0].1 != w[1].1),
        "the line was driven to the level it had"
    );
    assert_eq!(levels.last().is_some_and(|l| l.1), u.irq_level());
}

fuzz_target!(|data: &[u8]| {
    let out = Arc::new(Mutex::new(Vec::new()));
    let rec = Arc::new(Recorder::default());
    let uart = Pl011::with_irq(SerialOutput::Capture(out.clone()), rec.clone(), SPI);
    let mut m = Model {
        regs: STORED.map(|(_, _, reset)| reset),
        rx: VecDeque::new(),
        out: Vec::new(),
    };
    let mut input = Input::new(data);
    while !input.is_empty() {
        let tag = input.u8();
        match tag & 3 {
            0 | 1 => {
                let write = tag & 1 != 0;
                let len = width(tag >> 2, &mut input);
                let offset = if tag & 0x20 != 0 {
                    u64::from(input.u8()) * 4 + u64::from(tag >> 6)
                } else {
                    u64::from(input.u16())
                };
                let value = input.u32().to_le_bytes();
                let mut buf: Vec<u8> = (0..len).map(|i| value[i % 4]).collect();
                if write {
                    assert_eq!(
                        uart.write(0, 0x0900_0000, offset, &buf),
                        IoOutcome::Continue
                    );
                    m.write(offset, &buf);
                } else {
                    uart.read(0, 0x0900_0000, offset, &mut buf);
                    m.read(offset, &buf);
                }
            }
            2 => {
                let n = usize::from(input.u8() % 32);
                let bytes = input.bytes(n);
                let room = m.depth() - m.rx.len();
                let took = uart.enqueue_input(bytes);
                assert_eq!(took, room.min(bytes.len()), "enqueue_input took {took}");
                m.rx.extend(&bytes[..took]);
            }
            _ => {}
        }
        check(&uart, &m, &rec);
    }
    assert_eq!(
        *out.lock().unwrap(),
        m.out,
        "the console got other bytes than DR's"
    );
});
