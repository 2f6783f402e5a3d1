//! fw_cfg: a builder configured from the input, then selector/data port
//! accesses of any width, against an independent model.
//!
//! Input:
//! - header: ram u64, cpus u16, flags u8 (bit 0: max_cpus u16 follows,
//!   bit 1: max_ram u64 follows), item count u8 (%8) then per item key u16,
//!   len u8, bytes; file count u8 (%8) then per file name_len u8 (%64),
//!   name bytes (lossy UTF-8), len u16 (%600), fill byte;
//! - ops: `[ctl]`: bit 0 write, bits 1..2 port offset (0..3: 2 and 3 are
//!   past the device), bits 3..5 width selector, then a u16 value for
//!   writes.
//!
//! Checks: the builder accepts and refuses exactly the documented keys and
//! file names; every item, the file directory (count, sizes, keys, names,
//! sorted) and `file_key` match the model; every byte read returns the
//! selected item's next byte, zero past its end; wider reads are invalid
//! (zeros, the cursor stays); reads past the ports are all-ones; only
//! 16-bit writes select.

#![no_main]

use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;
use trapline_bus::{BusDevice, IoOutcome};
use trapline_devices::fw_cfg::*;
use trapline_fuzz::{width, Input};

const WRITE_CHANNEL: u16 = 0x4000;

fn key_reserved(key: u16) -> bool {
    let index = key & !(WRITE_CHANNEL | FW_CFG_ARCH_LOCAL);
    let generic = key & FW_CFG_ARCH_LOCAL == 0;
    key & WRITE_CHANNEL != 0
        || (generic && (index == FW_CFG_FILE_DIR || index >= FW_CFG_FILE_FIRST))
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mut items: BTreeMap<u16, Vec<u8>> = BTreeMap::new();
    items.insert(FW_CFG_SIGNATURE, b"QEMU".to_vec());
    items.insert(FW_CFG_ID, 1u32.to_le_bytes().to_vec());

    let ram = input.u64();
    let cpus = input.u16();
    let flags = input.u8();
    let mut b = FwCfg::builder().ram(ram).cpus(cpus);
    items.insert(FW_CFG_RAM_SIZE, ram.to_le_bytes().to_vec());
    items.insert(FW_CFG_MAX_RAM, 0u64.to_le_bytes().to_vec());
    let mut max_cpus = cpus;
    if flags & 1 != 0 {
        max_cpus = input.u16();
        b = b.max_cpus(max_cpus);
    }
    if flags & 2 != 0 {
        let max_ram = input.u64();
        b = b.max_ram(max_ram);
        items.insert(FW_CFG_MAX_RAM, max_ram.to_le_bytes().to_vec());
    }
    for _ in 0..input.u8() % 8 {
        let key = input.u16();
        let len = usize::from(input.u8());
        let bytes = input.bytes(len).to_vec();
        match b.clone().item(key, bytes.clone()) {
            Ok(nb) => {
                assert!(!key_reserved(key), "item key {key:#x} should be refused");
                b = nb;
                items.insert(key, bytes);
            }
            Err(e) => {
                assert!(key_reserved(key), "item key {key:#x} refused: {e}");
                assert_eq!(e, FwCfgError::ReservedKey(key));
            }
        }
    }
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for _ in 0..input.u8() % 8 {
        let name_len = usize::from(input.u8() % 64);
        let name = String::from_utf8_lossy(input.bytes(name_len)).into_owned();
        let len = usize::from(input.u16() % 600);
        let fill = input.u8();
        let bytes: Vec<u8> = (0..len).map(|i| fill ^ i as u8).collect();
        let bad_name = name.is_empty() || name.len() >= FW_CFG_MAX_FILE_NAME || name.contains('\0');
        match b.clone().add_file(&name, bytes.clone()) {
            Ok(nb) => {
                assert!(
                    !bad_name && !files.contains_key(&name),
                    "file {name:?} accepted"
                );
                b = nb;
                files.insert(name, bytes);
            }
            Err(FwCfgError::BadFileName(n)) => assert!(bad_name && n == name),
            Err(FwCfgError::DuplicateFile(n)) => assert!(!bad_name && files.contains_key(&n)),
            Err(e) => panic!("unexpected builder error {e}"),
        }
    }
    let dev = b.build();

    items.insert(FW_CFG_NB_CPUS, cpus.to_le_bytes().to_vec());
    items.insert(FW_CFG_MAX_CPUS, max_cpus.to_le_bytes().to_vec());
    let mut dir = (files.len() as u32).to_be_bytes().to_vec();
    for (key, (name, bytes)) in (FW_CFG_FILE_FIRST..).zip(&files) {
        dir.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
        dir.extend_from_slice(&key.to_be_bytes());
        dir.extend_from_slice(&[0, 0]);
        let mut field = [0u8; FW_CFG_MAX_FILE_NAME];
        field[..name.len()].copy_from_slice(name.as_bytes());
        dir.extend_from_slice(&field);
        items.insert(key, bytes.clone());
        assert_eq!(dev.file_key(name), Some(key), "file_key({name:?})");
    }
    items.insert(FW_CFG_FILE_DIR, dir);
    for (key, bytes) in &items {
        assert_eq!(dev.item(*key), Some(&bytes[..]), "item {key:#x}");
    }

    // Port accesses. The cursor starts on the signature.
    let lookup = |key: u16| items.get(&(key & !WRITE_CHANNEL));
    let mut selected = lookup(FW_CFG_SIGNATURE);
    let mut cursor = 0usize;
    while !input.is_empty() {
        let ctl = input.u8();
        let offset = u64::from((ctl >> 1) & 3);
        let len = width(ctl >> 3, &mut input);
        if ctl & 1 != 0 {
            let v = input.u16().to_le_bytes();
            let bytes: Vec<u8> = (0..len).map(|i| v[i % 2]).collect();
            assert_eq!(dev.write(0, 0x510, offset, &bytes), IoOutcome::Continue);
            if offset < FW_CFG_IO_LEN && len == 2 {
                selected = lookup(u16::from_le_bytes(v));
                cursor = 0;
            }
        } else {
            let mut buf = vec![0x5a; len];
            dev.read(0, 0x510, offset, &mut buf);
            if offset >= FW_CFG_IO_LEN {
                assert!(
                    buf.iter().all(|&b| b == 0xff),
                    "fw_cfg+{offset} read {buf:02x?}"
                );
                continue;
            }
            if len != 1 {
                assert!(buf.iter().all(|&b| b == 0), "fw_cfg wide read {buf:02x?}");
                continue;
            }
            let want = selected.and_then(|s| s.get(cursor)).copied().unwrap_or(0);
            assert_eq!(
                buf[0], want,
                "fw_cfg data byte {cursor} of the selected item"
            );
            cursor += 1;
        }
    }
});
