//! The ucall port: `ucall::decode` on raw messages, and `UcallPort` reading
//! them out of guest memory.
//!
//! Input: a stream of records `[ctl][gpa u16][offset u8][width sel]
//! [vcpu u8][120 message bytes]`. ctl bit 0: force the magic, bit 1: force
//! a valid kind (so decode's later fields get exercised). The message is
//! decoded directly, then written at `gpa` and announced through the port.
//!
//! Checks: decode accepts exactly magic + known kind and returns the
//! little-endian args and the text up to the first NUL; the port delivers
//! exactly the well-formed, aligned, in-RAM, 4-byte-at-offset-0
//! announcements (with the sender's vCPU and counters; for Clock, only
//! with an aligned in-RAM stamp address) and counts every other one as
//! BadUcall.

#![no_main]

use std::sync::mpsc::channel;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use trapline_abi::{UcallKind, UCALL_ARGS, UCALL_MAGIC, UCALL_SIZE, UCALL_TEXT_LEN};
use trapline_bus::{BusDevice, ExitCounters, ExitKind, IoOutcome};
use trapline_devices::ucall::{decode, UcallPort};
use trapline_fuzz::{width, Input};
use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};

const RAM: u64 = 0x1_0000;
const VCPUS: usize = 2;

fuzz_target!(|data: &[u8]| {
    let mem = GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(0), RAM as usize)]).unwrap();
    let counters: Arc<[Arc<ExitCounters>]> = (0..VCPUS)
        .map(|_| Arc::new(ExitCounters::default()))
        .collect::<Vec<_>>()
        .into();
    let (tx, rx) = channel();
    let port = UcallPort::new(mem.clone(), counters.clone(), Some(tx));
    let mut input = Input::new(data);
    let mut bad = [0u64; VCPUS];
    while !input.is_empty() {
        let ctl = input.u8();
        let gpa = u64::from(input.u16());
        let offset = u64::from(input.u8() % 6);
        let len = width(input.u8(), &mut input);
        let vcpu = usize::from(input.u8() % 4);
        let mut raw = [0u8; UCALL_SIZE];
        let b = input.bytes(UCALL_SIZE);
        raw[..b.len()].copy_from_slice(b);
        if ctl & 1 != 0 {
            raw[..4].copy_from_slice(&UCALL_MAGIC.to_le_bytes());
        }
        if ctl & 2 != 0 {
            let kind = 1 + u32::from(raw[4] % 9);
            raw[4..8].copy_from_slice(&kind.to_le_bytes());
        }

        // decode, against the ABI.
        let word = |i: usize| u32::from_le_bytes(raw[i..i + 4].try_into().unwrap());
        let decoded = decode(&raw);
        let valid = word(0) == UCALL_MAGIC && UcallKind::from_raw(word(4)).is_some();
        assert_eq!(decoded.is_some(), valid, "decode of {raw:02x?}");
        if let Some((kind, args, text)) = &decoded {
            assert_eq!(Some(*kind), UcallKind::from_raw(word(4)));
            for (i, a) in args.iter().enumerate() {
                let o = 8 + 8 * i;
                assert_eq!(*a, u64::from_le_bytes(raw[o..o + 8].try_into().unwrap()));
            }
            let t = &raw[8 + 8 * UCALL_ARGS..8 + 8 * UCALL_ARGS + UCALL_TEXT_LEN];
            let end = t.iter().position(|&c| c == 0).unwrap_or(t.len());
            assert_eq!(*text, String::from_utf8_lossy(&t[..end]));
            assert!(!text.contains('\0'));
        }

        // The port, reading it from guest memory.
        let stored = mem.write_slice(&raw, GuestAddress(gpa)).is_ok();
        let announce: Vec<u8> = (0..len)
            .map(|i| (gpa as u32).to_le_bytes().get(i).copied().unwrap_or(0))
            .collect();
        assert_eq!(
            port.write(vcpu, 0x700, offset, &announce),
            IoOutcome::Continue
        );
        // A Clock ucall also makes the host store its TSC at args[0], which
        // must be an aligned u64 in RAM, or the message is refused.
        let clock_ok = match &decoded {
            Some((UcallKind::Clock, args, _)) => {
                args[0] % 8 == 0 && args[0].checked_add(8).is_some_and(|e| e <= RAM)
            }
            _ => true,
        };
        let deliver = offset == 0 && len == 4 && gpa % 8 == 0 && stored && valid && clock_ok;
        match rx.try_recv() {
            Ok(ev) => {
                assert!(deliver, "delivered a message that should be refused");
                let (kind, args, text) = decoded.clone().unwrap();
                assert_eq!(
                    (ev.vcpu, ev.kind, ev.args, ev.text),
                    (vcpu, kind, args, text)
                );
                if let Some(c) = counters.get(vcpu) {
                    assert_eq!(ev.exits, c.snapshot());
                }
            }
            Err(_) => assert!(!deliver, "a well-formed ucall at {gpa:#x} was dropped"),
        }
        if !deliver && vcpu < VCPUS {
            bad[vcpu] += 1;
        }
        for (i, c) in counters.iter().enumerate() {
            assert_eq!(c.snapshot().get(ExitKind::BadUcall), bad[i]);
        }
        let mut r = [0u8; 4];
        port.read(vcpu, 0x700, offset, &mut r);
        assert_eq!(r, [0xff; 4]);
    }
});
