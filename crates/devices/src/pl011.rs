//! The `virt` machine's console: an ARM PrimeCell PL011 UART.
//!
//! Modelled after the PL011 TRM (ARM DDI 0183) as far as guests look:
//! Linux's `amba-pl011` driver (which probes the PrimeCell ID registers
//! first, and takes its FIFO depth from their revision), its earlycon, and
//! kvm-unit-tests' byte writes to the data register.
//!
//! - Output is written synchronously, so the transmit FIFO is always empty:
//!   FR shows TXFE, never TXFF or BUSY, and a guest polling them never spins.
//!   Bytes go out whatever CR says, as QEMU's model does (kvm-unit-tests
//!   prints without enabling the UART).
//! - Input (stdin) is queued by [`Pl011::enqueue_input`] into a receive FIFO
//!   of 16 bytes (1 with LCR_H.FEN clear).
//! - Interrupts: RX (FIFO at or above the IFLS trigger level), RT (receive
//!   timeout: data waiting; the host line is idle as soon as a burst is
//!   queued) and TX (raised on each transmitted byte, since the FIFO is then
//!   empty). The line is level-triggered, as QEMU's device tree declares it
//!   (`interrupts = <0 1 4>`): it follows `RIS & IMSC`, driven through
//!   [`IrqLine`] with the UART's SPI number.
//! - LCR_H, IBRD, FBRD, CR, IFLS, ILPR and DMACR are stored and read back
//!   (masked to their widths); they change nothing else.
//!
//! Registers are 32 bits wide at 4-byte steps. An access of any width is
//! split into the registers it covers; each register is read (or written)
//! once per access, with the bytes the access covers. Offsets the model
//! does not implement read 0 and ignore writes.

use std::collections::VecDeque;
use std::io::Write;
use std::sync::{Arc, Mutex};

use trapline_bus::{AccessSizes, BusDevice, IoOutcome};

use crate::pc_testdev::IrqLine;
use crate::serial::{SerialOutput, SerialWriter};

/// Data register: write = transmit, read = pop the receive FIFO.
const DR: u64 = 0x000;
/// Receive status / error clear (no errors are ever reported).
const RSR_ECR: u64 = 0x004;
/// Flag register.
const FR: u64 = 0x018;
/// IrDA low-power counter.
const ILPR: u64 = 0x020;
/// Integer baud rate divisor.
const IBRD: u64 = 0x024;
/// Fractional baud rate divisor.
const FBRD: u64 = 0x028;
/// Line control.
const LCR_H: u64 = 0x02C;
/// Control.
const CR: u64 = 0x030;
/// Interrupt FIFO level select.
const IFLS: u64 = 0x034;
/// Interrupt mask set/clear (1 = enabled).
const IMSC: u64 = 0x038;
/// Raw interrupt status.
const RIS: u64 = 0x03C;
/// Masked interrupt status.
const MIS: u64 = 0x040;
/// Interrupt clear (write 1 to clear).
const ICR: u64 = 0x044;
/// DMA control.
const DMACR: u64 = 0x048;
/// First of the eight PrimeCell ID registers (PeriphID0-3, CellID0-3).
const ID_BASE: u64 = 0xFE0;

/// UARTPeriphID0..3 and UARTPCellID0..3: part 0x011, designer 0x41 (ARM),
/// revision 1, the PrimeCell cell id; the values QEMU's pl011 reports.
/// Linux's amba bus matches the part and designer; revision < 3 tells its
/// driver the FIFOs are 16 deep.
const ID: [u8; 8] = [0x11, 0x10, 0x14, 0x00, 0x0D, 0xF0, 0x05, 0xB1];

/// FR: the transmitter is busy.
pub const FR_BUSY: u32 = 1 << 3;
/// FR: the receive FIFO is empty.
pub const FR_RXFE: u32 = 1 << 4;
/// FR: the transmit FIFO is full.
pub const FR_TXFF: u32 = 1 << 5;
/// FR: the receive FIFO is full.
pub const FR_RXFF: u32 = 1 << 6;
/// FR: the transmit FIFO is empty.
pub const FR_TXFE: u32 = 1 << 7;

/// Interrupt bit (IMSC/RIS/MIS/ICR): receive FIFO at its trigger level.
pub const INT_RX: u32 = 1 << 4;
/// Interrupt bit: transmit FIFO at or below its trigger level.
pub const INT_TX: u32 = 1 << 5;
/// Interrupt bit: receive timeout (data waiting, line idle).
pub const INT_RT: u32 = 1 << 6;
/// The implemented interrupt bits of IMSC/RIS/MIS/ICR.
const INT_MASK: u32 = 0x7FF;

/// LCR_H: FIFOs enabled.
pub const LCR_H_FEN: u32 = 1 << 4;
/// Receive FIFO depth with FIFOs enabled (revision 1 part).
pub const FIFO_DEPTH: usize = 16;

/// Reset values (TRM): CR = TXE | RXE, IFLS = both triggers at 1/2.
const CR_RESET: u32 = 0x300;
const IFLS_RESET: u32 = 0x12;

/// The registers and the receive FIFO.
struct State {
    rx: VecDeque<u8>,
    ilpr: u32,
    ibrd: u32,
    fbrd: u32,
    lcr_h: u32,
    cr: u32,
    ifls: u32,
    imsc: u32,
    ris: u32,
    dmacr: u32,
    /// The level last driven on the interrupt line.
    line: bool,
    out: SerialWriter,
}

impl State {
    /// Receive FIFO capacity: 16, or the single holding register with
    /// FIFOs disabled.
    fn depth(&self) -> usize {
        if self.lcr_h & LCR_H_FEN != 0 {
            FIFO_DEPTH
        } else {
            1
        }
    }

    /// Bytes that make the RX interrupt: IFLS.RXIFLSEL (bits 5:3) selects
    /// 1/8, 1/4, 1/2, 3/4 or 7/8 of the FIFO (reserved codes act as 1/2);
    /// without FIFOs, one byte.
    fn rx_trigger(&self) -> usize {
        if self.lcr_h & LCR_H_FEN == 0 {
            return 1;
        }
        let eighths = match (self.ifls >> 3) & 7 {
            0 => 1,
            1 => 2,
            3 => 6,
            4 => 7,
            _ => 4,
        };
        FIFO_DEPTH * eighths / 8
    }

    /// The RX and RT bits after the FIFO grew.
    fn rx_filled(&mut self) {
        if self.rx.len() >= self.rx_trigger() {
            self.ris |= INT_RX;
        }
        if !self.rx.is_empty() {
            self.ris |= INT_RT;
        }
    }

    /// The RX and RT bits after the FIFO shrank.
    fn rx_drained(&mut self) {
        if self.rx.len() < self.rx_trigger() {
            self.ris &= !INT_RX;
        }
        if self.rx.is_empty() {
            self.ris &= !INT_RT;
        }
    }

    fn flags(&self) -> u32 {
        let mut fr = FR_TXFE;
        if self.rx.is_empty() {
            fr |= FR_RXFE;
        }
        if self.rx.len() >= self.depth() {
            fr |= FR_RXFF;
        }
        fr
    }

    /// A whole-register read, with its side effect (DR pops a byte).
    fn read(&mut self, reg: u64) -> u32 {
        match reg {
            DR => {
                let byte = self.rx.pop_front();
                self.rx_drained();
                byte.map_or(0, u32::from)
            }
            FR => self.flags(),
            ILPR => self.ilpr,
            IBRD => self.ibrd,
            FBRD => self.fbrd,
            LCR_H => self.lcr_h,
            CR => self.cr,
            IFLS => self.ifls,
            IMSC => self.imsc,
            RIS => self.ris,
            MIS => self.ris & self.imsc,
            DMACR => self.dmacr,
            r if (ID_BASE..ID_BASE + 4 * ID.len() as u64).contains(&r) => {
                u32::from(ID[((r - ID_BASE) / 4) as usize])
            }
            // No receive errors are ever reported.
            RSR_ECR => 0,
            // ICR is write-only; everything else is unimplemented.
            _ => 0,
        }
    }

    /// A write of the bytes `mask` selects of `value` to one register.
    fn write(&mut self, reg: u64, value: u32, mask: u32) {
        let merge = |old: u32, width: u32| ((old & !mask) | (value & mask)) & width;
        match reg {
            // Only bits 7:0 carry a character.
            DR if mask & 0xFF != 0 => {
                // A failed write (a closed stdout, a full disk) is kept by
                // the writer, which asks for the stop (see `Pl011::write`).
                let _ = self.out.write_all(&[value as u8]);
                let _ = self.out.flush();
                self.ris |= INT_TX;
            }
            ILPR => self.ilpr = merge(self.ilpr, 0xFF),
            IBRD => self.ibrd = merge(self.ibrd, 0xFFFF),
            FBRD => self.fbrd = merge(self.fbrd, 0x3F),
            LCR_H => {
                self.lcr_h = merge(self.lcr_h, 0xFF);
                // Without FIFOs only the holding register remains.
                self.rx.truncate(self.depth());
                self.rx_drained();
                self.rx_filled();
            }
            CR => self.cr = merge(self.cr, 0xFFFF),
            IFLS => {
                self.ifls = merge(self.ifls, 0x3F);
                self.rx_drained();
                self.rx_filled();
            }
            IMSC => self.imsc = merge(self.imsc, INT_MASK),
            ICR => self.ris &= !(value & mask & INT_MASK),
            DMACR => self.dmacr = merge(self.dmacr, 0x7),
            // Clears receive errors there never are.
            RSR_ECR => {}
            // Read-only and unknown registers ignore writes.
            _ => {}
        }
    }
}

/// A PL011 UART on the MMIO bus.
pub struct Pl011 {
    state: Mutex<State>,
    irq: Option<(Arc<dyn IrqLine>, u32)>,
}

impl Pl011 {
    /// A UART writing to `out`, its interrupt not connected (guests poll).
    pub fn new(out: SerialOutput) -> Self {
        Self {
            state: Mutex::new(State {
                rx: VecDeque::with_capacity(FIFO_DEPTH),
                ilpr: 0,
                ibrd: 0,
                fbrd: 0,
                lcr_h: 0,
                cr: CR_RESET,
                ifls: IFLS_RESET,
                imsc: 0,
                ris: 0,
                dmacr: 0,
                line: false,
                out: SerialWriter::new(out),
            }),
            irq: None,
        }
    }

    /// A UART writing to `out` whose interrupt drives `line` number `spi`
    /// (the machine maps the SPI to its GIC input).
    pub fn with_irq(out: SerialOutput, line: Arc<dyn IrqLine>, spi: u32) -> Self {
        Self {
            irq: Some((line, spi)),
            ..Self::new(out)
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Drive the line to `RIS & IMSC`, if that changed. Called with the
    /// state locked, so concurrent accesses cannot reorder the levels.
    fn update_line(&self, s: &mut State) {
        let level = s.ris & s.imsc != 0;
        if level != s.line {
            s.line = level;
            if let Some((line, spi)) = &self.irq {
                line.set_irq(*spi, level);
            }
        }
    }

    /// Queues bytes typed at the console for the guest to read, raising
    /// the RX/RT interrupts the guest enabled. Returns how many fit; the
    /// rest are for the caller to retry once the guest has read.
    pub fn enqueue_input(&self, bytes: &[u8]) -> usize {
        let mut s = self.lock();
        let n = (s.depth() - s.rx.len().min(s.depth())).min(bytes.len());
        if n == 0 {
            return 0;
        }
        s.rx.extend(&bytes[..n]);
        s.rx_filled();
        self.update_line(&mut s);
        n
    }

    /// Room left in the receive FIFO.
    pub fn input_room(&self) -> usize {
        let s = self.lock();
        s.depth().saturating_sub(s.rx.len())
    }

    /// The level the interrupt line is at.
    pub fn irq_level(&self) -> bool {
        self.lock().line
    }
}

/// The registers an access of `len` bytes at `offset` covers: (register
/// offset, first byte lane, bytes, position in the access). An access that
/// would run past the end of the address space stops there.
fn registers(offset: u64, len: usize) -> impl Iterator<Item = (u64, usize, usize, usize)> {
    let mut pos = 0usize;
    std::iter::from_fn(move || {
        if pos >= len {
            return None;
        }
        let addr = offset.checked_add(pos as u64)?;
        let lane = (addr & 3) as usize;
        let n = (4 - lane).min(len - pos);
        let item = (addr & !3, lane, n, pos);
        pos += n;
        Some(item)
    })
}

impl BusDevice for Pl011 {
    fn access_sizes(&self) -> AccessSizes {
        // 1 to 4 bytes, aligned, as QEMU's other devices: guests write the
        // data register with byte stores (kvm-unit-tests' puts) or words
        // (Linux's amba-pl011); an 8-byte access becomes two words.
        AccessSizes::QEMU_DEFAULT
    }

    fn read(&self, _vcpu: usize, _base: u64, offset: u64, data: &mut [u8]) {
        data.fill(0);
        let mut s = self.lock();
        for (reg, lane, n, pos) in registers(offset, data.len()) {
            let value = s.read(reg).to_le_bytes();
            data[pos..pos + n].copy_from_slice(&value[lane..lane + n]);
        }
        self.update_line(&mut s);
    }

    fn write(&self, _vcpu: usize, _base: u64, offset: u64, data: &[u8]) -> IoOutcome {
        let mut s = self.lock();
        for (reg, lane, n, pos) in registers(offset, data.len()) {
            let mut bytes = [0u8; 4];
            bytes[lane..lane + n].copy_from_slice(&data[pos..pos + n]);
            let mask = (u32::MAX >> (32 - 8 * n as u32)) << (8 * lane as u32);
            s.write(reg, u32::from_le_bytes(bytes), mask);
        }
        self.update_line(&mut s);
        match s.out.stop() {
            Some(stop) => IoOutcome::Stop(stop),
            None => IoOutcome::Continue,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hostile::each_access;

    /// Records every level driven on each line.
    #[derive(Default)]
    struct Recorder(Mutex<Vec<(u32, bool)>>);

    impl IrqLine for Recorder {
        fn set_irq(&self, line: u32, level: bool) {
            self.0.lock().unwrap().push((line, level));
        }
    }

    const SPI: u32 = 1;

    fn uart() -> (Pl011, Arc<Mutex<Vec<u8>>>, Arc<Recorder>) {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let rec = Arc::new(Recorder::default());
        let u = Pl011::with_irq(SerialOutput::Capture(buf.clone()), rec.clone(), SPI);
        (u, buf, rec)
    }

    #[test]
    fn a_failed_write_asks_the_machine_to_stop() {
        let full = std::fs::File::options()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let u = Pl011::new(SerialOutput::File(full));
        assert!(crate::serial::tests::storage_full(u.write(0, 0, DR, b"h")));
        assert!(crate::serial::tests::storage_full(u.write(0, 0, DR, b"i")));
    }

    fn r32(u: &Pl011, off: u64) -> u32 {
        let mut d = [0u8; 4];
        u.read(0, 0, off, &mut d);
        u32::from_le_bytes(d)
    }

    fn w32(u: &Pl011, off: u64, v: u32) {
        assert_eq!(u.write(0, 0, off, &v.to_le_bytes()), IoOutcome::Continue);
    }

    fn w16(u: &Pl011, off: u64, v: u16) {
        assert_eq!(u.write(0, 0, off, &v.to_le_bytes()), IoOutcome::Continue);
    }

    #[test]
    fn the_primecell_ids_are_the_ones_linux_matches() {
        let (u, _, _) = uart();
        let ids: Vec<u32> = (0..8).map(|i| r32(&u, ID_BASE + 4 * i)).collect();
        assert_eq!(ids, [0x11, 0x10, 0x14, 0x00, 0x0D, 0xF0, 0x05, 0xB1]);
        // The amba bus assembles the part (0x011) and designer (0x41).
        let periph = ids[0] | ids[1] << 8 | ids[2] << 16 | ids[3] << 24;
        assert_eq!(periph & 0xFFF, 0x011);
        assert_eq!((periph >> 12) & 0xFF, 0x41);
        assert_eq!((periph >> 20) & 0xF, 1, "revision 1: 16-byte FIFOs");
        // Byte reads see the same values.
        let mut b = [0u8];
        u.read(0, 0, 0xFFC, &mut b);
        assert_eq!(b[0], 0xB1);
    }

    #[test]
    fn data_writes_of_any_width_are_output_and_flags_show_an_empty_transmitter() {
        let (u, buf, _) = uart();
        let fr = r32(&u, FR);
        assert_eq!(
            fr & (FR_TXFE | FR_TXFF | FR_BUSY | FR_RXFE),
            FR_TXFE | FR_RXFE
        );
        assert_eq!(u.write(0, 0, DR, b"h"), IoOutcome::Continue);
        w16(&u, DR, u16::from(b'i'));
        w32(&u, DR, 0xFFFF_FF00 | u32::from(b'\n'));
        // Bits 15:8 of DR alone carry no character.
        assert_eq!(u.write(0, 0, DR + 1, b"x"), IoOutcome::Continue);
        assert_eq!(&*buf.lock().unwrap(), b"hi\n");
    }

    #[test]
    fn received_bytes_come_out_of_dr_in_order_and_the_fifo_is_bounded() {
        let (u, _, _) = uart();
        // FIFOs off after reset: one holding register.
        assert_eq!(u.input_room(), 1);
        assert_eq!(u.enqueue_input(b"ab"), 1);
        assert_eq!(r32(&u, FR) & (FR_RXFE | FR_RXFF), FR_RXFF);
        assert_eq!(r32(&u, DR), u32::from(b'a'));
        assert_ne!(r32(&u, FR) & FR_RXFE, 0);
        assert_eq!(r32(&u, DR), 0, "an empty FIFO reads 0");

        w32(&u, LCR_H, LCR_H_FEN | 0x60); // FIFOs on, 8 bits
        assert_eq!(u.input_room(), FIFO_DEPTH);
        let input: Vec<u8> = (0..20).collect();
        assert_eq!(u.enqueue_input(&input), FIFO_DEPTH);
        assert_eq!(u.enqueue_input(b"z"), 0);
        assert_ne!(r32(&u, FR) & FR_RXFF, 0);
        let mut got = Vec::new();
        while r32(&u, FR) & FR_RXFE == 0 {
            let mut b = [0u8];
            u.read(0, 0, DR, &mut b);
            got.push(b[0]);
        }
        assert_eq!(got, input[..FIFO_DEPTH]);
    }

    #[test]
    fn rx_and_timeout_interrupts_follow_the_fifo_and_the_mask() {
        let (u, _, rec) = uart();
        w32(&u, LCR_H, LCR_H_FEN);
        w32(&u, IFLS, 2 << 3); // RX at 1/2: 8 bytes
        assert_eq!(u.enqueue_input(b"abc"), 3);
        assert_eq!(r32(&u, RIS) & (INT_RX | INT_RT), INT_RT);
        assert_eq!(r32(&u, MIS), 0, "masked");
        assert!(rec.0.lock().unwrap().is_empty());

        w32(&u, IMSC, INT_RX | INT_RT);
        assert_eq!(r32(&u, MIS), INT_RT);
        assert!(u.irq_level());
        assert_eq!(u.enqueue_input(b"defgh"), 5);
        assert_eq!(r32(&u, MIS), INT_RX | INT_RT);
        // Reading below the trigger clears RX; emptying clears RT too.
        for _ in 0..8 {
            let _ = r32(&u, DR);
        }
        assert_eq!(r32(&u, RIS) & (INT_RX | INT_RT), 0);
        assert!(!u.irq_level());
        assert_eq!(*rec.0.lock().unwrap(), vec![(SPI, true), (SPI, false)]);

        // ICR clears a raised bit while the data stays.
        let _ = u.enqueue_input(b"x");
        assert!(u.irq_level());
        w32(&u, ICR, INT_RT);
        assert!(!u.irq_level());
        assert_eq!(r32(&u, FR) & FR_RXFE, 0);
    }

    #[test]
    fn each_transmitted_byte_raises_tx_until_cleared() {
        let (u, _, rec) = uart();
        w32(&u, IMSC, INT_TX);
        assert!(!u.irq_level());
        w32(&u, DR, u32::from(b'a'));
        assert_eq!(r32(&u, MIS), INT_TX);
        assert!(u.irq_level());
        w32(&u, ICR, INT_TX);
        assert_eq!(r32(&u, RIS), 0);
        w32(&u, DR, u32::from(b'b'));
        w32(&u, IMSC, 0);
        assert_eq!(r32(&u, RIS), INT_TX, "masking leaves the raw status");
        assert_eq!(
            *rec.0.lock().unwrap(),
            vec![(SPI, true), (SPI, false), (SPI, true), (SPI, false)]
        );
    }

    #[test]
    fn control_registers_read_back_masked_to_their_widths() {
        let (u, buf, _) = uart();
        assert_eq!(r32(&u, CR), CR_RESET);
        assert_eq!(r32(&u, IFLS), IFLS_RESET);
        w32(&u, IBRD, 0xFFFF_0013);
        w32(&u, FBRD, 0xFF);
        w32(&u, LCR_H, 0x1_0070);
        w32(&u, CR, 0x0003_0301);
        w32(&u, ILPR, 0x1FF);
        w32(&u, DMACR, 0xF);
        assert_eq!(
            [IBRD, FBRD, LCR_H, CR, ILPR, DMACR].map(|r| r32(&u, r)),
            [0x13, 0x3F, 0x70, 0x0301, 0xFF, 0x7]
        );
        // A byte write changes only its lane.
        assert_eq!(u.write(0, 0, CR + 1, &[0x00]), IoOutcome::Continue);
        assert_eq!(r32(&u, CR), 0x01);
        // None of that printed anything.
        assert!(buf.lock().unwrap().is_empty());
    }

    #[test]
    fn unknown_offsets_read_zero_and_ignore_writes() {
        let (u, buf, _) = uart();
        for off in [RSR_ECR, 0x008, 0x014, 0x04C, 0x800, 0xFDC, 0x1000, 1 << 40] {
            w32(&u, off, 0xFFFF_FFFF);
            assert_eq!(r32(&u, off), 0, "offset {off:#x}");
        }
        assert!(buf.lock().unwrap().is_empty());
        // An 8-byte read at 0x18 covers FR and the reserved word after it.
        let mut d = [0xAAu8; 8];
        u.read(0, 0, FR, &mut d);
        assert_eq!(d, [FR_TXFE as u8 | FR_RXFE as u8, 0, 0, 0, 0, 0, 0, 0]);
        // Empty accesses and accesses at the top of the address space.
        let mut empty: [u8; 0] = [];
        u.read(0, 0, DR, &mut empty);
        assert_eq!(u.write(0, 0, DR, &[]), IoOutcome::Continue);
        let mut top = [0xAAu8; 8];
        u.read(0, 0, u64::MAX - 2, &mut top);
        assert_eq!(top, [0; 8]);
        assert_eq!(u.write(0, 0, u64::MAX, &[1, 2, 3]), IoOutcome::Continue);
    }

    #[test]
    fn a_hostile_guest_leaves_it_consistent() {
        let (u, _, rec) = uart();
        each_access(0x9011, 0x1000, 20_000, |a| {
            if a.extra & 1 == 0 {
                u.read(0, 0, a.offset, a.data);
            } else {
                let _ = u.write(0, 0, a.offset, a.data);
            }
            if a.extra & 0x30 == 0 {
                let _ = u.enqueue_input(&a.extra.to_le_bytes());
            }
            let s = u.lock();
            assert!(s.rx.len() <= s.depth());
            assert_eq!(s.line, s.ris & s.imsc != 0);
            assert_eq!(s.ris & !INT_MASK, 0);
        });
        // The line's recorded history alternates and ends at its level.
        let history = rec.0.lock().unwrap();
        for pair in history.windows(2) {
            assert_ne!(pair[0].1, pair[1].1);
        }
        assert_eq!(history.last().map(|h| h.1).unwrap_or(false), u.irq_level());
        drop(history);
        assert_eq!(r32(&u, ID_BASE), 0x11);
        assert_eq!(r32(&u, FR) & (FR_TXFE | FR_TXFF | FR_BUSY), FR_TXFE);
    }
}
