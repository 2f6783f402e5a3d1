//! A type-0 PCI function's 256-byte configuration space.
//!
//! The model follows QEMU's (`hw/pci/pci.c`): the bytes, a per-byte
//! writable mask and a per-byte write-1-to-clear mask. Every guest access is
//! applied byte by byte, so any width at any alignment behaves like the
//! equivalent sequence of byte accesses, and bytes outside the 256-byte
//! space read all-ones and ignore writes.
//!
//! BAR sizing falls out of the masks: a BAR's writable bits are exactly its
//! address bits (`!(size - 1)`), its type bits are read-only, and a BAR the
//! function does not implement has no writable bits, so writing all-ones and
//! reading back returns the size mask (or 0 for an absent BAR).

use super::PciError;

/// Bytes in a conventional (non-express) configuration space.
pub const CONFIG_SPACE_SIZE: usize = 256;

/// Vendor ID (u16).
pub const VENDOR_ID: usize = 0x00;
/// Device ID (u16).
pub const DEVICE_ID: usize = 0x02;
/// Command register (u16).
pub const COMMAND: usize = 0x04;
/// Status register (u16).
pub const STATUS: usize = 0x06;
/// Revision ID (u8).
pub const REVISION_ID: usize = 0x08;
/// Class code: prog-if at 0x09, subclass at 0x0a, base class at 0x0b.
pub const CLASS_PROG: usize = 0x09;
/// Cache line size (u8).
pub const CACHE_LINE_SIZE: usize = 0x0c;
/// Latency timer (u8).
pub const LATENCY_TIMER: usize = 0x0d;
/// Header type (u8).
pub const HEADER_TYPE: usize = 0x0e;
/// BAR0 (u32); BARn is at `BAR0 + 4 * n`.
pub const BAR0: usize = 0x10;
/// Number of BARs in a type-0 header.
pub const BAR_COUNT: usize = 6;
/// Subsystem vendor ID (u16).
pub const SUBSYSTEM_VENDOR_ID: usize = 0x2c;
/// Subsystem ID (u16).
pub const SUBSYSTEM_ID: usize = 0x2e;
/// Interrupt line (u8), scratch for the guest.
pub const INTERRUPT_LINE: usize = 0x3c;
/// Interrupt pin (u8).
pub const INTERRUPT_PIN: usize = 0x3d;

/// COMMAND: I/O space decoding.
pub const COMMAND_IO: u16 = 1 << 0;
/// COMMAND: memory space decoding.
pub const COMMAND_MEMORY: u16 = 1 << 1;
/// COMMAND: bus mastering.
pub const COMMAND_MASTER: u16 = 1 << 2;
/// COMMAND: parity error response.
pub const COMMAND_PARITY: u16 = 1 << 6;
/// COMMAND: SERR# enable.
pub const COMMAND_SERR: u16 = 1 << 8;
/// COMMAND: INTx emulation disable.
pub const COMMAND_INTX_DISABLE: u16 = 1 << 10;

/// The COMMAND bits a guest may change (QEMU's `pci_init_wmask`).
const COMMAND_WMASK: u16 = COMMAND_IO
    | COMMAND_MEMORY
    | COMMAND_MASTER
    | COMMAND_PARITY
    | COMMAND_SERR
    | COMMAND_INTX_DISABLE;
/// STATUS error bits the guest clears by writing 1 (QEMU's `pci_init_w1cmask`).
const STATUS_W1C: u16 = 0xf900;

/// What kind of space a BAR decodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarKind {
    /// I/O space; the address is a port number.
    Io,
    /// 32-bit memory space.
    Mem32 {
        /// Prefetchable bit (bit 3).
        prefetchable: bool,
    },
    /// 64-bit memory space; occupies this BAR and the next one.
    Mem64 {
        /// Prefetchable bit (bit 3).
        prefetchable: bool,
    },
}

impl BarKind {
    /// True for the two memory kinds.
    pub fn is_memory(self) -> bool {
        !matches!(self, BarKind::Io)
    }

    /// The read-only type bits in the low dword.
    fn type_bits(self) -> u32 {
        match self {
            BarKind::Io => 0x1,
            BarKind::Mem32 { prefetchable } => u32::from(prefetchable) << 3,
            BarKind::Mem64 { prefetchable } => 0x4 | (u32::from(prefetchable) << 3),
        }
    }
}

/// One implemented BAR: its kind and its size (a power of two).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BarDef {
    /// Decoded space and width.
    pub kind: BarKind,
    /// Size in bytes, a power of two (I/O: 4..=64 KiB; memory: 16 B and up,
    /// at most 2 GiB for 32-bit BARs).
    pub size: u64,
}

/// A function's configuration space: bytes plus write masks.
#[derive(Clone)]
pub struct ConfigSpace {
    bytes: [u8; CONFIG_SPACE_SIZE],
    wmask: [u8; CONFIG_SPACE_SIZE],
    w1cmask: [u8; CONFIG_SPACE_SIZE],
    bars: [Option<BarDef>; BAR_COUNT],
}

impl std::fmt::Debug for ConfigSpace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ConfigSpace({:04x}:{:04x} class {:06x})",
            self.read_u16(VENDOR_ID),
            self.read_u16(DEVICE_ID),
            self.read_u32(REVISION_ID) >> 8
        )
    }
}

impl ConfigSpace {
    /// A type-0 header with these identities; `class` is the 24-bit class
    /// code (base class << 16 | subclass << 8 | prog-if). No BARs, no
    /// capabilities, interrupt pin 0.
    pub fn new(vendor: u16, device: u16, class: u32, revision: u8) -> Self {
        let mut c = Self {
            bytes: [0; CONFIG_SPACE_SIZE],
            wmask: [0; CONFIG_SPACE_SIZE],
            w1cmask: [0; CONFIG_SPACE_SIZE],
            bars: [None; BAR_COUNT],
        };
        c.set_u16(VENDOR_ID, vendor);
        c.set_u16(DEVICE_ID, device);
        c.bytes[REVISION_ID] = revision;
        c.bytes[CLASS_PROG..CLASS_PROG + 3].copy_from_slice(&class.to_le_bytes()[..3]);
        c.bytes[HEADER_TYPE] = 0;
        c.wmask[COMMAND..COMMAND + 2].copy_from_slice(&COMMAND_WMASK.to_le_bytes());
        c.w1cmask[STATUS..STATUS + 2].copy_from_slice(&STATUS_W1C.to_le_bytes());
        // Scratch registers software may use freely.
        c.wmask[CACHE_LINE_SIZE] = 0xff;
        c.wmask[LATENCY_TIMER] = 0xff;
        c.wmask[INTERRUPT_LINE] = 0xff;
        c
    }

    /// Set the subsystem vendor and ID (read-only to the guest).
    pub fn set_subsystem(&mut self, vendor: u16, id: u16) {
        self.set_u16(SUBSYSTEM_VENDOR_ID, vendor);
        self.set_u16(SUBSYSTEM_ID, id);
    }

    /// Set the interrupt pin (0 = none, 1..=4 = INTA..INTD).
    pub fn set_interrupt_pin(&mut self, pin: u8) {
        self.bytes[INTERRUPT_PIN] = pin;
    }

    /// Declare BAR `index`. A 64-bit BAR also claims `index + 1`.
    pub fn set_bar(&mut self, index: usize, def: BarDef) -> Result<(), PciError> {
        let bad = |why: &str| PciError::BadBar {
            index,
            why: why.to_string(),
        };
        let slots = if matches!(def.kind, BarKind::Mem64 { .. }) {
            2
        } else {
            1
        };
        if index + slots > BAR_COUNT {
            return Err(bad("index out of range"));
        }
        if (index..index + slots).any(|i| self.bars[i].is_some() || self.is_high_half(i)) {
            return Err(bad("already declared"));
        }
        if !def.size.is_power_of_two() {
            return Err(bad("size is not a power of two"));
        }
        let (min, max) = match def.kind {
            BarKind::Io => (4, 1 << 16),
            BarKind::Mem32 { .. } => (16, 1 << 31),
            BarKind::Mem64 { .. } => (16, 1 << 63),
        };
        if def.size < min || def.size > max {
            return Err(bad("size out of range for its kind"));
        }
        let addr_mask = !(def.size - 1);
        let low_type_mask: u32 = if def.kind.is_memory() { 0xf } else { 0x3 };
        let reg = BAR0 + 4 * index;
        self.set_u32(reg, def.kind.type_bits());
        self.wmask[reg..reg + 4]
            .copy_from_slice(&((addr_mask as u32) & !low_type_mask).to_le_bytes());
        if slots == 2 {
            self.set_u32(reg + 4, 0);
            self.wmask[reg + 4..reg + 8].copy_from_slice(&((addr_mask >> 32) as u32).to_le_bytes());
        }
        self.bars[index] = Some(def);
        Ok(())
    }

    /// True if BAR `i` is the upper dword of a 64-bit BAR.
    fn is_high_half(&self, i: usize) -> bool {
        i > 0
            && matches!(
                self.bars[i - 1],
                Some(BarDef {
                    kind: BarKind::Mem64 { .. },
                    ..
                })
            )
    }

    /// The declared BAR `index`, if any (`None` also for the upper half of
    /// a 64-bit BAR).
    pub fn bar(&self, index: usize) -> Option<BarDef> {
        self.bars.get(index).copied().flatten()
    }

    /// All BAR declarations.
    pub fn bars(&self) -> [Option<BarDef>; BAR_COUNT] {
        self.bars
    }

    /// The raw bytes (what aligned reads return).
    pub fn bytes(&self) -> &[u8; CONFIG_SPACE_SIZE] {
        &self.bytes
    }

    /// Guest read of `data.len()` bytes at `reg`. Bytes at or past 256 read
    /// 0xff (an access may start anywhere, e.g. ECAM's extended space).
    pub fn read(&self, reg: u64, data: &mut [u8]) {
        for (i, b) in data.iter_mut().enumerate() {
            *b = usize::try_from(reg.saturating_add(i as u64))
                .ok()
                .and_then(|o| self.bytes.get(o).copied())
                .unwrap_or(0xff);
        }
    }

    /// Guest write of `data` at `reg`, through the writable and
    /// write-1-to-clear masks. Returns whether any byte changed.
    pub fn write(&mut self, reg: u64, data: &[u8]) -> bool {
        let mut changed = false;
        for (i, &val) in data.iter().enumerate() {
            let Some(o) = usize::try_from(reg.saturating_add(i as u64))
                .ok()
                .filter(|&o| o < CONFIG_SPACE_SIZE)
            else {
                break;
            };
            let old = self.bytes[o];
            let mut new = (old & !self.wmask[o]) | (val & self.wmask[o]);
            new &= !(val & self.w1cmask[o]);
            self.bytes[o] = new;
            changed |= new != old;
        }
        changed
    }

    /// Little-endian u16 at `reg` (host side; out-of-range bytes are 0xff).
    pub fn read_u16(&self, reg: usize) -> u16 {
        let mut b = [0; 2];
        self.read(reg as u64, &mut b);
        u16::from_le_bytes(b)
    }

    /// Little-endian u32 at `reg` (host side; out-of-range bytes are 0xff).
    pub fn read_u32(&self, reg: usize) -> u32 {
        let mut b = [0; 4];
        self.read(reg as u64, &mut b);
        u32::from_le_bytes(b)
    }

    fn set_u16(&mut self, reg: usize, v: u16) {
        self.bytes[reg..reg + 2].copy_from_slice(&v.to_le_bytes());
    }

    fn set_u32(&mut self, reg: usize, v: u32) {
        self.bytes[reg..reg + 4].copy_from_slice(&v.to_le_bytes());
    }

    /// The COMMAND register.
    pub fn command(&self) -> u16 {
        self.read_u16(COMMAND)
    }

    /// The address programmed into BAR `index` (type bits and sub-size bits
    /// stripped), whether or not decoding is on. `None` for no BAR.
    pub fn bar_address(&self, index: usize) -> Option<u64> {
        let def = self.bar(index)?;
        let reg = BAR0 + 4 * index;
        let raw = match def.kind {
            BarKind::Mem64 { .. } => {
                u64::from(self.read_u32(reg)) | (u64::from(self.read_u32(reg + 4)) << 32)
            }
            _ => u64::from(self.read_u32(reg)),
        };
        Some(raw & !(def.size - 1))
    }

    /// Where BAR `index` decodes right now, QEMU's `pci_bar_address` rules:
    /// `None` if its decode bit in COMMAND is off, if its address is 0, if
    /// it wraps, or if a 32-bit BAR (or an I/O BAR) would reach 4 GiB - 1
    /// or beyond (which is where a BAR being sized with all-ones sits).
    pub fn bar_mapping(&self, index: usize) -> Option<u64> {
        let def = self.bar(index)?;
        let decode = if def.kind.is_memory() {
            COMMAND_MEMORY
        } else {
            COMMAND_IO
        };
        if self.command() & decode == 0 {
            return None;
        }
        let base = self.bar_address(index)?;
        let last = base.checked_add(def.size - 1)?;
        if base == 0 || last == u64::MAX {
            return None;
        }
        if !matches!(def.kind, BarKind::Mem64 { .. }) && last >= u64::from(u32::MAX) {
            return None;
        }
        Some(base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev() -> ConfigSpace {
        let mut c = ConfigSpace::new(0x1b36, 0x0005, 0xff0000, 0);
        c.set_bar(
            0,
            BarDef {
                kind: BarKind::Mem32 {
                    prefetchable: false,
                },
                size: 4096,
            },
        )
        .unwrap();
        c.set_bar(
            1,
            BarDef {
                kind: BarKind::Io,
                size: 256,
            },
        )
        .unwrap();
        c.set_bar(
            2,
            BarDef {
                kind: BarKind::Mem64 { prefetchable: true },
                size: 1 << 33,
            },
        )
        .unwrap();
        c
    }

    fn size(c: &mut ConfigSpace, bar: usize) -> u32 {
        let reg = (BAR0 + 4 * bar) as u64;
        let old = c.read_u32(reg as usize);
        c.write(reg, &[0xff; 4]);
        let got = c.read_u32(reg as usize);
        c.write(reg, &old.to_le_bytes());
        got
    }

    #[test]
    fn pci_config_identity_bytes() {
        let c = dev();
        assert_eq!(c.read_u32(0), 0x0005_1b36);
        assert_eq!(c.read_u32(8), 0xff00_0000);
        assert_eq!(c.bytes()[HEADER_TYPE], 0);
    }

    #[test]
    fn pci_config_bar_sizing_matches_qemu() {
        let mut c = dev();
        assert_eq!(size(&mut c, 0), 0xffff_f000);
        assert_eq!(size(&mut c, 1), 0xffff_ff01);
        assert_eq!(size(&mut c, 2), 0x0000_000c);
        assert_eq!(size(&mut c, 3), 0xffff_fffe);
        // Unimplemented BARs read 0 even after all-ones.
        assert_eq!(size(&mut c, 4), 0);
        assert_eq!(size(&mut c, 5), 0);
        // Restored values are back.
        assert_eq!(c.read_u32(BAR0), 0);
        assert_eq!(c.read_u32(BAR0 + 4), 1);
    }

    #[test]
    fn pci_config_read_only_and_out_of_range() {
        let mut c = dev();
        assert!(!c.write(0, &[0xff; 4]), "ids are read-only");
        assert_eq!(c.read_u32(0), 0x0005_1b36);
        let mut d = [0u8; 4];
        c.read(0xfe, &mut d);
        assert_eq!(d, [0, 0, 0xff, 0xff]);
        c.read(u64::MAX - 1, &mut d);
        assert_eq!(d, [0xff; 4]);
        assert!(!c.write(u64::MAX, &[1, 2, 3]));
        assert!(!c.write(0x100, &[1]));
    }

    #[test]
    fn pci_config_command_mask_and_status_w1c() {
        let mut c = dev();
        c.write(COMMAND as u64, &[0xff, 0xff]);
        assert_eq!(c.command(), 0x0547);
        c.bytes[STATUS + 1] = 0xf9;
        c.write(STATUS as u64, &[0x00, 0x01]);
        assert_eq!(c.read_u16(STATUS), 0xf800);
        c.write(STATUS as u64, &[0xff, 0xff]);
        assert_eq!(c.read_u16(STATUS), 0);
    }

    #[test]
    fn pci_config_mapping_rules() {
        let mut c = dev();
        c.write(BAR0 as u64, &0xfebf_f000u32.to_le_bytes());
        c.write((BAR0 + 4) as u64, &0xc000u32.to_le_bytes());
        assert_eq!(c.bar_mapping(0), None, "decoding off");
        c.write(COMMAND as u64, &[3, 0]);
        assert_eq!(c.bar_mapping(0), Some(0xfebf_f000));
        assert_eq!(c.bar_mapping(1), Some(0xc000));
        assert_eq!(c.bar_mapping(2), None, "address 0");
        c.write(BAR0 as u64, &[0xff; 4]);
        assert_eq!(c.bar_mapping(0), None, "sizing value");
        c.write(BAR0 as u64, &0xffff_e000u32.to_le_bytes());
        assert_eq!(c.bar_mapping(0), Some(0xffff_e000));
        c.write((BAR0 + 8) as u64, &[0xff; 8]);
        assert_eq!(c.bar_mapping(2), None, "64-bit all-ones");
        c.write((BAR0 + 8) as u64, &[0, 0, 0, 0, 2, 0, 0, 0]);
        assert_eq!(c.bar_mapping(2), Some(0x2_0000_0000));
    }

    #[test]
    fn pci_config_bar_declarations_validated() {
        let mut c = ConfigSpace::new(1, 2, 0, 0);
        let io = |size| BarDef {
            kind: BarKind::Io,
            size,
        };
        assert!(c.set_bar(6, io(16)).is_err());
        assert!(c.set_bar(0, io(3)).is_err());
        assert!(c.set_bar(0, io(2)).is_err());
        assert!(c
            .set_bar(
                5,
                BarDef {
                    kind: BarKind::Mem64 {
                        prefetchable: false
                    },
                    size: 16
                }
            )
            .is_err());
        c.set_bar(
            0,
            BarDef {
                kind: BarKind::Mem64 {
                    prefetchable: false,
                },
                size: 16,
            },
        )
        .unwrap();
        assert!(c.set_bar(1, io(16)).is_err(), "upper half is taken");
        assert!(c.set_bar(0, io(16)).is_err());
    }
}
