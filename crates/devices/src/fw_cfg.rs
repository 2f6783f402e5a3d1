//! QEMU's firmware configuration device (fw_cfg), legacy I/O interface
//! only: no DMA, no MMIO, no guest writes to items.
//!
//! Map one [`FwCfg`] at [`FW_CFG_IO_BASE`] (0x510) with length
//! [`FW_CFG_IO_LEN`] (2). Like QEMU's x86 "combined" region, the two ports
//! are decoded by access width rather than address, and only two widths
//! are valid (QEMU's `fw_cfg_comb_valid`):
//!
//! * a 16-bit write selects the item whose key is the value (little-endian)
//!   and rewinds its read offset to 0;
//! * an 8-bit read, at either port, returns the next byte of the selected
//!   item; past the end of the item, and for unknown keys, it reads 0;
//! * 8-bit writes were data-port writes, which QEMU ignores since 2.4;
//! * any other access is invalid: a read returns zeros and moves nothing,
//!   a write is ignored.
//!
//! The bus cuts accesses as QEMU does (1 to 4 bytes, naturally aligned), so
//! `inw(0x510)` is invalid (0), `inw(0x511)` is a data byte and then 0x512
//! (unmapped, 0xff), and `outw(0x511)` is a data byte write and a byte at
//! 0x512.
//!
//! The item table is built once ([`FwCfg::builder`]) and never changes, so
//! the only shared mutable state is the (key, offset) cursor behind a
//! mutex: each access is atomic with respect to the others, so two vCPUs
//! racing cannot tear a read or lose a byte (the guest serialises with a
//! spinlock anyway).
//!
//! Items provided (kvm-unit-tests reads 0x05, 0x11 and 0x03):
//!
//! | key | item | contents |
//! |-----|------|----------|
//! | 0x00 | signature | `"QEMU"` |
//! | 0x01 | id | u32 1: traditional interface only, no DMA |
//! | 0x03 | RAM size | u64 bytes |
//! | 0x05 | nb_cpus | u16 |
//! | 0x0F | max_cpus | u16 (default: nb_cpus) |
//! | 0x11 | "MAX_RAM" | u64, default 0 — see [`FW_CFG_MAX_RAM`] |
//! | 0x19 | file directory | big-endian count + 64-byte entries |
//! | 0x20.. | files | in name order, as QEMU assigns them |

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use trapline_bus::{fill_all_ones, AccessSizes, BusDevice, IoOutcome};

/// The selector port; the data port is the next one.
pub const FW_CFG_IO_BASE: u16 = 0x510;
/// Ports decoded: selector (+0) and data (+1).
pub const FW_CFG_IO_LEN: u64 = 2;

/// Key 0x00: the signature `"QEMU"`.
pub const FW_CFG_SIGNATURE: u16 = 0x00;
/// Key 0x01: feature bitmap (bit 0 traditional interface, bit 1 DMA).
pub const FW_CFG_ID: u16 = 0x01;
/// Key 0x03: RAM size in bytes (u64 LE).
pub const FW_CFG_RAM_SIZE: u16 = 0x03;
/// Key 0x05: number of vCPUs brought up at boot (u16 LE).
pub const FW_CFG_NB_CPUS: u16 = 0x05;
/// Key 0x0F: maximum number of vCPUs (u16 LE).
pub const FW_CFG_MAX_CPUS: u16 = 0x0F;
/// Key 0x11: kvm-unit-tests' "FW_CFG_MAX_RAM", the highest physical address
/// its allocator may use, 0 meaning no limit. (In QEMU the key is really
/// FW_CFG_KERNEL_DATA and returns the image's first bytes, 0x1BADB002; it
/// is harmless there only by accident of QEMU's memory map.)
///
/// trapline defaults to 0, not the top of RAM: "no limit" is the value the
/// library is designed around (its bare-metal and `MEMLIMIT`-less path),
/// it cannot be wrong whatever RAM layout or holes the machine picks, and
/// the MBI memory map already bounds what `find_highmem` may use. A machine
/// that wants a cap sets one with [`FwCfgBuilder::max_ram`].
pub const FW_CFG_MAX_RAM: u16 = 0x11;
/// Key 0x19: the file directory.
pub const FW_CFG_FILE_DIR: u16 = 0x19;
/// First key given to a file.
pub const FW_CFG_FILE_FIRST: u16 = 0x20;
/// Set in a key for architecture-specific items (kept as part of the key).
pub const FW_CFG_ARCH_LOCAL: u16 = 0x8000;
/// Set in a key to ask for write access, which QEMU grants to nothing on
/// this interface; it is masked off on select, as QEMU does.
const FW_CFG_WRITE_CHANNEL: u16 = 0x4000;
/// Key bits that index an item within the generic or arch-local space.
const FW_CFG_ENTRY_MASK: u16 = !(FW_CFG_WRITE_CHANNEL | FW_CFG_ARCH_LOCAL);

/// FW_CFG_ID value: the traditional (port) interface, no DMA.
const ID_TRADITIONAL: u32 = 1;
/// The signature item's contents.
const SIGNATURE: &[u8; 4] = b"QEMU";
/// A file name field in the directory, NUL terminator included.
pub const FW_CFG_MAX_FILE_NAME: usize = 56;
/// Bytes per directory entry: size u32, select u16, reserved u16, name.
const FILE_DIR_ENTRY_LEN: usize = 4 + 2 + 2 + FW_CFG_MAX_FILE_NAME;
/// How many files fit between FW_CFG_FILE_FIRST and the end of the
/// generic key space.
const MAX_FILES: usize = (FW_CFG_ENTRY_MASK - FW_CFG_FILE_FIRST + 1) as usize;
/// Width of the selector write.
const SELECTOR_WIDTH: usize = 2;

/// Why an item or file was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FwCfgError {
    /// The name is empty or does not fit the 56-byte field with its NUL
    /// (or contains a NUL).
    #[error("fw_cfg file name {0:?} is empty, too long (max 55 bytes) or contains NUL")]
    BadFileName(String),
    /// Two files with the same name.
    #[error("fw_cfg file {0:?} added twice")]
    DuplicateFile(String),
    /// More files than keys between 0x20 and 0x3FFF.
    #[error("too many fw_cfg files (max {MAX_FILES})")]
    TooManyFiles,
    /// A file's size does not fit the directory's u32.
    #[error("fw_cfg file {0:?} is larger than 4 GiB")]
    FileTooLarge(String),
    /// The key belongs to the file directory or file range, or has the
    /// write-channel bit set.
    #[error("fw_cfg key {0:#x} is reserved (directory, files or write channel)")]
    ReservedKey(u16),
}

/// Collects items; [`FwCfgBuilder::build`] freezes them into a [`FwCfg`].
#[derive(Debug, Clone)]
pub struct FwCfgBuilder {
    items: BTreeMap<u16, Vec<u8>>,
    cpus: u16,
    max_cpus: Option<u16>,
    files: BTreeMap<String, Vec<u8>>,
}

impl Default for FwCfgBuilder {
    fn default() -> Self {
        let mut items = BTreeMap::new();
        items.insert(FW_CFG_SIGNATURE, SIGNATURE.to_vec());
        items.insert(FW_CFG_ID, ID_TRADITIONAL.to_le_bytes().to_vec());
        items.insert(FW_CFG_RAM_SIZE, 0u64.to_le_bytes().to_vec());
        items.insert(FW_CFG_MAX_RAM, 0u64.to_le_bytes().to_vec());
        Self {
            items,
            cpus: 1,
            max_cpus: None,
            files: BTreeMap::new(),
        }
    }
}

impl FwCfgBuilder {
    /// RAM size in bytes (key 0x03).
    pub fn ram(mut self, bytes: u64) -> Self {
        self.items
            .insert(FW_CFG_RAM_SIZE, bytes.to_le_bytes().to_vec());
        self
    }

    /// Number of vCPUs (key 0x05; also key 0x0F unless [`Self::max_cpus`]
    /// is given). Default 1.
    pub fn cpus(mut self, n: u16) -> Self {
        self.cpus = n;
        self
    }

    /// Maximum number of vCPUs (key 0x0F).
    pub fn max_cpus(mut self, n: u16) -> Self {
        self.max_cpus = Some(n);
        self
    }

    /// Key 0x11 (kvm-unit-tests' MAX_RAM): highest usable physical address,
    /// 0 for no limit (the default; see [`FW_CFG_MAX_RAM`]).
    pub fn max_ram(mut self, addr: u64) -> Self {
        self.items
            .insert(FW_CFG_MAX_RAM, addr.to_le_bytes().to_vec());
        self
    }

    /// Add or replace a raw item. Keys of the directory, the file range and
    /// the write channel are refused: files go through [`Self::add_file`].
    pub fn item(mut self, key: u16, bytes: impl Into<Vec<u8>>) -> Result<Self, FwCfgError> {
        let index = key & FW_CFG_ENTRY_MASK;
        let generic = key & FW_CFG_ARCH_LOCAL == 0;
        if key & FW_CFG_WRITE_CHANNEL != 0
            || (generic && (index == FW_CFG_FILE_DIR || index >= FW_CFG_FILE_FIRST))
        {
            return Err(FwCfgError::ReservedKey(key));
        }
        self.items.insert(key, bytes.into());
        Ok(self)
    }

    /// Add a named file. Keys are assigned at [`Self::build`] in name
    /// order from [`FW_CFG_FILE_FIRST`] (QEMU sorts the same way); look
    /// them up with [`FwCfg::file_key`].
    pub fn add_file(mut self, name: &str, bytes: impl Into<Vec<u8>>) -> Result<Self, FwCfgError> {
        if name.is_empty() || name.len() >= FW_CFG_MAX_FILE_NAME || name.contains('\0') {
            return Err(FwCfgError::BadFileName(name.into()));
        }
        if self.files.contains_key(name) {
            return Err(FwCfgError::DuplicateFile(name.into()));
        }
        if self.files.len() >= MAX_FILES {
            return Err(FwCfgError::TooManyFiles);
        }
        let bytes = bytes.into();
        if u32::try_from(bytes.len()).is_err() {
            return Err(FwCfgError::FileTooLarge(name.into()));
        }
        self.files.insert(name.into(), bytes);
        Ok(self)
    }

    /// Freeze the table.
    pub fn build(self) -> FwCfg {
        let mut items = self.items;
        items.insert(FW_CFG_NB_CPUS, self.cpus.to_le_bytes().to_vec());
        items.insert(
            FW_CFG_MAX_CPUS,
            self.max_cpus.unwrap_or(self.cpus).to_le_bytes().to_vec(),
        );

        // The directory: big-endian count, then one entry per file, in the
        // BTreeMap's (name) order, keys assigned in the same order.
        let mut dir = Vec::with_capacity(4 + self.files.len() * FILE_DIR_ENTRY_LEN);
        dir.extend_from_slice(&(self.files.len() as u32).to_be_bytes());
        let mut files = Vec::with_capacity(self.files.len());
        for (key, (name, bytes)) in (FW_CFG_FILE_FIRST..).zip(self.files) {
            dir.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
            dir.extend_from_slice(&key.to_be_bytes());
            dir.extend_from_slice(&0u16.to_be_bytes());
            let mut field = [0u8; FW_CFG_MAX_FILE_NAME];
            field[..name.len()].copy_from_slice(name.as_bytes());
            dir.extend_from_slice(&field);
            items.insert(key, bytes);
            files.push((name, key));
        }
        items.insert(FW_CFG_FILE_DIR, dir);

        let dev = FwCfg {
            items: items
                .into_iter()
                .map(|(k, v)| (k, v.into_boxed_slice()))
                .collect(),
            files,
            cursor: Mutex::new(Cursor::default()),
        };
        // QEMU selects key 0 at reset.
        dev.select(FW_CFG_SIGNATURE);
        dev
    }
}

/// Which item is selected and how far the guest has read into it.
#[derive(Debug, Default)]
struct Cursor {
    /// Index into `FwCfg::items`; `None` for an unknown key.
    item: Option<usize>,
    offset: usize,
}

/// The fw_cfg device. See the module docs for the register semantics.
#[derive(Debug)]
pub struct FwCfg {
    /// Sorted by key; never changes after build.
    items: Box<[(u16, Box<[u8]>)]>,
    /// (name, key) of each file, in key order.
    files: Vec<(String, u16)>,
    cursor: Mutex<Cursor>,
}

impl FwCfg {
    /// A builder with the signature, ID 1, one vCPU, RAM size 0 and
    /// MAX_RAM 0.
    pub fn builder() -> FwCfgBuilder {
        FwCfgBuilder::default()
    }

    /// The key a file was given, if it exists.
    pub fn file_key(&self, name: &str) -> Option<u16> {
        self.files.iter().find(|(n, _)| n == name).map(|&(_, k)| k)
    }

    /// The bytes of an item, as the guest would read them after selecting
    /// `key` (for the machine's own checks and listings).
    pub fn item(&self, key: u16) -> Option<&[u8]> {
        self.index_of(key).map(|i| &*self.items[i].1)
    }

    fn index_of(&self, key: u16) -> Option<usize> {
        self.items.binary_search_by_key(&key, |&(k, _)| k).ok()
    }

    fn cursor(&self) -> std::sync::MutexGuard<'_, Cursor> {
        // The cursor is two integers; a panic elsewhere cannot break it.
        self.cursor.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn select(&self, key: u16) {
        let item = self.index_of(key & !FW_CFG_WRITE_CHANNEL);
        *self.cursor() = Cursor { item, offset: 0 };
    }
}

impl Default for FwCfg {
    fn default() -> Self {
        FwCfg::builder().build()
    }
}

impl BusDevice for FwCfg {
    fn read(&self, _vcpu: usize, _base: u64, offset: u64, data: &mut [u8]) {
        if offset >= FW_CFG_IO_LEN {
            // Only reachable if mapped with a larger length.
            fill_all_ones(data);
            return;
        }
        let [byte] = data else {
            // Only byte reads are valid (QEMU reads 0 for the others).
            data.fill(0);
            return;
        };
        let mut cursor = self.cursor();
        let item: &[u8] = match cursor.item {
            Some(i) => &self.items[i].1,
            None => &[],
        };
        *byte = item.get(cursor.offset).copied().unwrap_or(0);
        cursor.offset = cursor.offset.saturating_add(1);
    }

    fn write(&self, _vcpu: usize, _base: u64, offset: u64, data: &[u8]) -> IoOutcome {
        if offset < FW_CFG_IO_LEN && data.len() == SELECTOR_WIDTH {
            self.select(u16::from_le_bytes([data[0], data[1]]));
        }
        IoOutcome::Continue
    }

    fn access_sizes(&self) -> AccessSizes {
        // QEMU's fw_cfg_comb_mem_ops declare no sizes (only which widths
        // are valid, checked above).
        AccessSizes::QEMU_DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEL: u64 = 0;
    const DATA: u64 = 1;

    fn select(dev: &FwCfg, key: u16) {
        assert_eq!(
            dev.write(0, 0x510, SEL, &key.to_le_bytes()),
            IoOutcome::Continue
        );
    }

    /// Read `n` bytes the way kvm-unit-tests does: n 8-bit INs at 0x511.
    fn read_bytes(dev: &FwCfg, n: usize) -> Vec<u8> {
        (0..n)
            .map(|_| {
                let mut b = [0u8; 1];
                dev.read(0, 0x510, DATA, &mut b);
                b[0]
            })
            .collect()
    }

    fn read_u64(dev: &FwCfg, key: u16, width: usize) -> u64 {
        select(dev, key);
        let mut buf = [0u8; 8];
        buf[..width].copy_from_slice(&read_bytes(dev, width));
        u64::from_le_bytes(buf)
    }

    fn machine() -> FwCfg {
        FwCfg::builder().ram(128 << 20).cpus(3).build()
    }

    #[test]
    fn standard_items() {
        let dev = machine();
        select(&dev, FW_CFG_SIGNATURE);
        assert_eq!(read_bytes(&dev, 4), b"QEMU");
        assert_eq!(read_u64(&dev, FW_CFG_ID, 4), 1);
        assert_eq!(read_u64(&dev, FW_CFG_RAM_SIZE, 8), 0x0800_0000);
        assert_eq!(read_u64(&dev, FW_CFG_NB_CPUS, 2), 3);
        assert_eq!(read_u64(&dev, FW_CFG_MAX_CPUS, 2), 3);
        assert_eq!(read_u64(&dev, FW_CFG_MAX_RAM, 8), 0);
    }

    #[test]
    fn builder_options() {
        let dev = FwCfg::builder()
            .cpus(0x1234)
            .max_cpus(0x4000)
            .max_ram(0x1_4000_0000)
            .item(0x8003, vec![9, 8, 7])
            .unwrap()
            .build();
        // Little-endian byte by byte.
        select(&dev, FW_CFG_NB_CPUS);
        assert_eq!(read_bytes(&dev, 2), [0x34, 0x12]);
        assert_eq!(read_u64(&dev, FW_CFG_MAX_CPUS, 2), 0x4000);
        assert_eq!(read_u64(&dev, FW_CFG_MAX_RAM, 8), 0x1_4000_0000);
        assert_eq!(read_u64(&dev, 0x8003, 3), 0x070809);
        assert_eq!(dev.item(0x8003), Some(&[9u8, 8, 7][..]));
        // QEMU-faithful key 0x11 is possible if someone wants it.
        let q = FwCfg::builder()
            .item(FW_CFG_MAX_RAM, 0x1BAD_B002u64.to_le_bytes())
            .unwrap()
            .build();
        assert_eq!(read_u64(&q, FW_CFG_MAX_RAM, 8), 0x1BAD_B002);
    }

    #[test]
    fn reads_past_the_end_are_zero_and_reselect_rewinds() {
        let dev = machine();
        select(&dev, FW_CFG_NB_CPUS);
        assert_eq!(read_bytes(&dev, 6), [3, 0, 0, 0, 0, 0]);
        select(&dev, FW_CFG_SIGNATURE);
        assert_eq!(read_bytes(&dev, 2), b"QE");
        // Reselecting the same key starts over.
        select(&dev, FW_CFG_SIGNATURE);
        assert_eq!(read_bytes(&dev, 6), b"QEMU\0\0");
    }

    #[test]
    fn initial_selection_is_the_signature() {
        let dev = machine();
        assert_eq!(read_bytes(&dev, 4), b"QEMU");
    }

    #[test]
    fn unknown_keys_read_zero() {
        let dev = machine();
        for key in [0x02, 0x04, 0x10, 0x1f, 0x20, 0x3fff, 0x8000, 0xffff] {
            select(&dev, key);
            assert_eq!(read_bytes(&dev, 8), [0; 8], "key {key:#x}");
        }
    }

    #[test]
    fn write_channel_bit_is_masked() {
        let dev = machine();
        assert_eq!(read_u64(&dev, FW_CFG_NB_CPUS | FW_CFG_WRITE_CHANNEL, 2), 3);
    }

    #[test]
    fn wide_reads_are_invalid_and_move_nothing() {
        let dev = machine();
        select(&dev, FW_CFG_SIGNATURE);
        for width in [2, 4, 8] {
            let mut buf = [0xaau8; 8];
            dev.read(0, 0x510, DATA, &mut buf[..width]);
            assert_eq!(&buf[..width], &[0; 8][..width]);
            dev.read(0, 0x510, SEL, &mut buf[..width]);
            assert_eq!(&buf[..width], &[0; 8][..width]);
        }
        assert_eq!(read_bytes(&dev, 2), b"QE");
        // The selector port reads data too, as in QEMU's combined region.
        let mut b = [0u8; 1];
        dev.read(0, 0x510, SEL, &mut b);
        assert_eq!(b[0], b'M');
    }

    #[test]
    fn through_the_bus_wide_accesses_are_cut_as_in_qemu() {
        let mut bus = trapline_bus::BusBuilder::new();
        bus.insert(
            "fw_cfg",
            0x510,
            FW_CFG_IO_LEN,
            std::sync::Arc::new(machine()),
        )
        .unwrap();
        let bus = bus.build();
        // outw 0x510 selects; outw 0x511 is a (dropped) data byte and a
        // byte at 0x512, so it selects nothing.
        let _ = bus.write(0, 0x510, &FW_CFG_NB_CPUS.to_le_bytes());
        let _ = bus.write(0, 0x511, &FW_CFG_SIGNATURE.to_le_bytes());
        let mut w = [0u8; 2];
        // inw 0x511: a data byte, then unmapped 0x512.
        let _ = bus.read(0, 0x511, &mut w);
        assert_eq!(w, [3, 0xff]);
        // inw 0x510 is invalid (0) and reads no data; inl likewise.
        let _ = bus.read(0, 0x510, &mut w);
        assert_eq!(w, [0, 0]);
        let mut l = [0xaau8; 4];
        let _ = bus.read(0, 0x510, &mut l);
        assert_eq!(l, [0; 4]);
        let _ = bus.read(0, 0x511, &mut w[..1]);
        assert_eq!(w[0], 0);
    }

    #[test]
    fn only_16_bit_writes_select() {
        let dev = machine();
        select(&dev, FW_CFG_NB_CPUS);
        // 8-bit, 32-bit and empty writes leave the selection and offset.
        for data in [&[0u8][..], &[0, 0, 0, 0], &[]] {
            assert_eq!(dev.write(0, 0x510, SEL, data), IoOutcome::Continue);
            assert_eq!(dev.write(0, 0x510, DATA, data), IoOutcome::Continue);
        }
        assert_eq!(read_bytes(&dev, 1), [3]);
        // A 16-bit write at the data port selects, like QEMU.
        assert_eq!(dev.write(0, 0x510, DATA, &[0, 0]), IoOutcome::Continue);
        assert_eq!(read_bytes(&dev, 1), [b'Q']);
    }

    #[test]
    fn file_directory() {
        let dev = FwCfg::builder()
            .add_file("opt/zeta", vec![1, 2, 3])
            .unwrap()
            .add_file("etc/alpha", b"hello".to_vec())
            .unwrap()
            .build();
        // Sorted by name: etc/alpha = 0x20, opt/zeta = 0x21.
        assert_eq!(dev.file_key("etc/alpha"), Some(0x20));
        assert_eq!(dev.file_key("opt/zeta"), Some(0x21));
        assert_eq!(dev.file_key("nope"), None);

        select(&dev, FW_CFG_FILE_DIR);
        let count = u32::from_be_bytes(read_bytes(&dev, 4).try_into().unwrap());
        assert_eq!(count, 2);
        let mut seen = Vec::new();
        for _ in 0..count {
            let e = read_bytes(&dev, FILE_DIR_ENTRY_LEN);
            let size = u32::from_be_bytes(e[0..4].try_into().unwrap());
            let key = u16::from_be_bytes(e[4..6].try_into().unwrap());
            assert_eq!(&e[6..8], &[0, 0]);
            let name_len = e[8..].iter().position(|&b| b == 0).unwrap();
            let name = String::from_utf8(e[8..8 + name_len].to_vec()).unwrap();
            seen.push((name, key, size));
        }
        assert_eq!(
            seen,
            [
                ("etc/alpha".to_string(), 0x20, 5),
                ("opt/zeta".to_string(), 0x21, 3)
            ]
        );
        assert_eq!(read_bytes(&dev, 2), [0, 0], "end of directory");
        select(&dev, 0x20);
        assert_eq!(read_bytes(&dev, 6), b"hello\0");
        select(&dev, 0x21);
        assert_eq!(read_bytes(&dev, 3), [1, 2, 3]);
    }

    #[test]
    fn empty_directory() {
        let dev = machine();
        select(&dev, FW_CFG_FILE_DIR);
        assert_eq!(read_bytes(&dev, 8), [0; 8]);
    }

    #[test]
    fn builder_errors() {
        let b = FwCfg::builder;
        assert!(matches!(
            b().add_file("", vec![]),
            Err(FwCfgError::BadFileName(_))
        ));
        assert!(matches!(
            b().add_file(&"x".repeat(56), vec![]),
            Err(FwCfgError::BadFileName(_))
        ));
        assert!(b().add_file(&"x".repeat(55), vec![]).is_ok());
        assert!(matches!(
            b().add_file("a\0b", vec![]),
            Err(FwCfgError::BadFileName(_))
        ));
        assert_eq!(
            b().add_file("a", vec![])
                .unwrap()
                .add_file("a", vec![1])
                .err(),
            Some(FwCfgError::DuplicateFile("a".into()))
        );
        for key in [FW_CFG_FILE_DIR, FW_CFG_FILE_FIRST, 0x3fff, 0x4005, 0xc005] {
            assert_eq!(
                b().item(key, vec![]).err(),
                Some(FwCfgError::ReservedKey(key)),
                "{key:#x}"
            );
        }
        // Arch-local keys share no space with files.
        assert!(b().item(0x8020, vec![]).is_ok());
    }

    #[test]
    fn racing_readers_never_tear_or_lose_bytes() {
        // Every thread reads single bytes; because each access is atomic,
        // the bytes handed out across all threads are exactly the item's,
        // each once.
        let data: Vec<u8> = (0..4000u32).map(|i| (i % 251) as u8).collect();
        let dev = FwCfg::builder().item(0x8001, data.clone()).unwrap().build();
        select(&dev, 0x8001);
        let mut all: Vec<u8> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        (0..1000)
                            .map(|_| {
                                let mut b = [0u8; 1];
                                dev.read(0, 0x510, DATA, &mut b);
                                b[0]
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        all.sort_unstable();
        let mut want = data;
        want.sort_unstable();
        assert_eq!(all, want);
    }

    #[test]
    fn hostile_accesses_never_panic() {
        let dev = FwCfg::builder()
            .ram(1 << 30)
            .cpus(2)
            .add_file("etc/x", vec![0xaa; 100])
            .unwrap()
            .build();
        crate::hostile::each_access(0x2545_f491_4f6c_dd1d, FW_CFG_IO_LEN, 20_000, |a| {
            assert_eq!(dev.write(0, 0x510, a.offset, a.data), IoOutcome::Continue);
            dev.read(0, 0x510, a.offset, a.data);
            if a.offset >= FW_CFG_IO_LEN {
                assert!(a.data.iter().all(|&b| b == 0xff));
            }
        });
        // Still works afterwards.
        assert_eq!(read_u64(&dev, FW_CFG_NB_CPUS, 2), 2);
    }
}
