//! COM1 (`serial::Uart`, vm-superio's 16550 behind trapline's width rules)
//! against a register model.
//!
//! Input: a stream of ops `[ctl][value]`: ctl bit 0 = write, bits 1..3 =
//! register offset (0..8, or 8+ for past-the-end), bits 4..6 = width
//! selector (see `trapline_fuzz::width`), bit 7 = string I/O (a count byte
//! follows). Each element of a string I/O is its own access, like the vCPU
//! loop does.
//!
//! The model tracks DLL/DLM, IER, LCR, MCR, SCR, the loopback FIFO and
//! the bytes that must reach the output; it checks every readable
//! register's value, that LSR always reports the transmitter empty (guests
//! poll it), that LSR.DR matches the FIFO, that wide reads are all-ones
//! past the first byte, and finally that the captured output is exactly
//! what the guest transmitted.

#![no_main]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use libfuzzer_sys::fuzz_target;
use trapline_bus::{BusDevice, IoOutcome};
use trapline_devices::serial::{SerialOutput, Uart};
use trapline_fuzz::{width, Input};

const DLAB: u8 = 0x80;
const LOOP: u8 = 0x10;
const FIFO: usize = 64;

/// vm-superio's reset values: divisor 12 (9600 baud), 8N1, OUT2.
const RESET: Model = Model {
    dll: 0x0c,
    dlm: 0,
    ier: 0,
    lcr: 0x03,
    mcr: 0x08,
    scr: 0,
    rx: VecDeque::new(),
    out: Vec::new(),
};

struct Model {
    dll: u8,
    dlm: u8,
    ier: u8,
    lcr: u8,
    mcr: u8,
    scr: u8,
    rx: VecDeque<u8>,
    out: Vec<u8>,
}

impl Model {
    fn write(&mut self, offset: u64, v: u8) {
        let dlab = self.lcr & DLAB != 0;
        match offset {
            0 if dlab => self.dll = v,
            1 if dlab => self.dlm = v,
            0 if self.mcr & LOOP != 0 => {
                if self.rx.len() < FIFO {
                    self.rx.push_back(v);
                }
            }
            0 => self.out.push(v),
            1 => self.ier = v & 0x0f,
            3 => self.lcr = v,
            4 => self.mcr = v,
            7 => self.scr = v,
            _ => {}
        }
    }

    /// The expected value of a byte read at `offset`, if the model knows it
    /// (IIR and MSR are vm-superio's business); pops the FIFO for RBR.
    fn read(&mut self, offset: u64, got: u8) {
        let dlab = self.lcr & DLAB != 0;
        let want = match offset {
            0 if dlab => Some(self.dll),
            1 if dlab => Some(self.dlm),
            0 => Some(self.rx.pop_front().unwrap_or(0)),
            1 => Some(self.ier),
            3 => Some(self.lcr),
            4 => Some(self.mcr),
            5 => {
                assert_eq!(
                    got & 0x60,
                    0x60,
                    "LSR must always show THR/TSR empty: {got:#x}"
                );
                assert_eq!(
                    got & 1 != 0,
                    !self.rx.is_empty(),
                    "LSR.DR {got:#x} vs fifo {}",
                    self.rx.len()
                );
                None
            }
            7 => Some(self.scr),
            _ => None,
        };
        if let Some(w) = want {
            assert_eq!(got, w, "UART register {offset} read {got:#x}, model {w:#x}");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let out = Arc::new(Mutex::new(Vec::new()));
    let uart = Uart::new(SerialOutput::Capture(out.clone()));
    let mut model = RESET;
    let mut input = Input::new(data);
    while !input.is_empty() {
        let ctl = input.u8();
        let write = ctl & 1 != 0;
        let sel = (ctl >> 1) & 7;
        let offset = if sel == 7 {
            7 + u64::from(input.u8())
        } else {
            u64::from(sel)
        };
        let len = width(ctl >> 4, &mut input);
        let count = if ctl & 0x80 != 0 {
            1 + usize::from(input.u8() % 32)
        } else {
            1
        };
        let value = input.u8();
        for i in 0..count {
            if write {
                let bytes: Vec<u8> = (0..len)
                    .map(|j| value.wrapping_add((i + j) as u8))
                    .collect();
                assert_eq!(uart.write(0, 0x3f8, offset, &bytes), IoOutcome::Continue);
                if offset < 8 {
                    if let Some(&b) = bytes.first() {
                        model.write(offset, b);
                    }
                }
            } else {
                let mut buf = vec![value; len];
                uart.read(0, 0x3f8, offset, &mut buf);
                if offset >= 8 {
                    assert!(
                        buf.iter().all(|&b| b == 0xff),
                        "read past the UART: {buf:02x?}"
                    );
                    continue;
                }
                if let Some((&first, rest)) = buf.split_first() {
                    assert!(rest.iter().all(|&b| b == 0xff), "wide UART read {buf:02x?}");
                    model.read(offset, first);
                }
            }
        }
    }
    assert_eq!(
        *out.lock().unwrap(),
        model.out,
        "serial output differs from what the guest sent"
    );
});
