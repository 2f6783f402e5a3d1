//! trapline-bus's `BusBuilder`/`Bus`: arbitrary range tables, then
//! lookups and dispatches, against a linear-scan model.
//!
//! Input: count u8 (%64), then per range `[mode][base][len]` where mode
//! picks small/large/near-the-top encodings (so wrapping and u64::MAX edges
//! come up), then a stream of queries `[mode][addr][width sel]`.
//!
//! Checks: `insert` fails exactly for empty/wrapping ranges (`BadRange`)
//! and ranges intersecting an accepted one (`Overlap`, naming it); the
//! built table is sorted; `find` agrees with a linear scan for every
//! query, including each range's first/last byte and the bytes around
//! them; each access is cut into the pieces `trapline_fuzz::model_pieces`
//! predicts (devices have varied access sizes), every piece reaches the
//! device where it starts with the right base and offset, pieces below a
//! device's minimum read zeros and never reach it, and unmapped pieces
//! read all-ones.

#![no_main]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use trapline_bus::{Access, AccessSizes, BusBuilder, BusDevice, BusError, IoOutcome};
use trapline_fuzz::{model_pieces, width, Input};

/// The sizes device `i` takes: `SIZES[i % 4]`.
const SIZES: [AccessSizes; 4] = [
    AccessSizes::ANY,
    AccessSizes::BYTES,
    AccessSizes::QEMU_DEFAULT,
    AccessSizes::aligned(4, 8),
];

struct Dev {
    id: u8,
    /// Absolute address of the last piece written.
    last: AtomicU64,
    /// Calls (reads and writes) since the last reset.
    calls: AtomicU64,
}

impl BusDevice for Dev {
    fn read(&self, _vcpu: usize, base: u64, offset: u64, data: &mut [u8]) {
        for (i, b) in data.iter_mut().enumerate() {
            *b = self.id ^ (base ^ offset.wrapping_add(i as u64)) as u8;
        }
        self.calls.fetch_add(1, Ordering::Relaxed);
    }
    fn write(&self, _vcpu: usize, base: u64, offset: u64, _data: &[u8]) -> IoOutcome {
        self.last
            .store(base.wrapping_add(offset), Ordering::Relaxed);
        self.calls.fetch_add(1, Ordering::Relaxed);
        IoOutcome::Continue
    }
    fn access_sizes(&self) -> AccessSizes {
        SIZES[usize::from(self.id) % SIZES.len()]
    }
}

/// Static names (leaking per-run names would trip LeakSanitizer).
const NAMES: [&str; 64] = [
    "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "r13", "r14",
    "r15", "r16", "r17", "r18", "r19", "r20", "r21", "r22", "r23", "r24", "r25", "r26", "r27",
    "r28", "r29", "r30", "r31", "r32", "r33", "r34", "r35", "r36", "r37", "r38", "r39", "r40",
    "r41", "r42", "r43", "r44", "r45", "r46", "r47", "r48", "r49", "r50", "r51", "r52", "r53",
    "r54", "r55", "r56", "r57", "r58", "r59", "r60", "r61", "r62", "r63",
];

fn number(mode: u8, input: &mut Input<'_>) -> u64 {
    match mode & 3 {
        0 => u64::from(input.u8()),
        1 => u64::from(input.u16()),
        2 => input.u64(),
        _ => u64::MAX - u64::from(input.u8()),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let mut builder = BusBuilder::new();
    let mut accepted: Vec<(u64, u64, usize, Arc<Dev>)> = Vec::new();
    let n = usize::from(input.u8() % 64);
    for (i, name) in NAMES.iter().enumerate().take(n) {
        let mode = input.u8();
        let base = number(mode, &mut input);
        let len = number(mode >> 2, &mut input);
        let dev = Arc::new(Dev {
            id: i as u8,
            last: AtomicU64::new(0),
            calls: AtomicU64::new(0),
        });
        let got = builder.insert(name, base, len, dev.clone());
        let last = len.checked_sub(1).and_then(|l| base.checked_add(l));
        match (got, last) {
            (Err(BusError::BadRange { .. }), None) => {}
            (Err(BusError::Overlap { old, .. }), Some(last)) => {
                let hit = accepted
                    .iter()
                    .find(|(b, l, _, _)| base <= *l && *b <= last);
                let (_, _, j, _) = hit.expect("Overlap reported without an overlap");
                assert_eq!(old, NAMES[*j]);
            }
            (Ok(()), Some(last)) => {
                assert!(
                    !accepted.iter().any(|(b, l, _, _)| base <= *l && *b <= last),
                    "overlapping range accepted"
                );
                accepted.push((base, last, i, dev));
            }
            (r, l) => panic!("insert({base:#x}, {len:#x}) = {r:?}, last {l:?}"),
        }
    }
    let bus = builder.build();
    let maps = bus.mappings();
    assert_eq!(maps.len(), accepted.len());
    assert!(
        maps.windows(2).all(|w| w[0].last < w[1].base),
        "table not sorted/disjoint"
    );

    let scan = |addr: u64| {
        accepted
            .iter()
            .find(|(b, l, _, _)| *b <= addr && addr <= *l)
    };
    let check = |addr: u64, len: usize| {
        let want = scan(addr);
        let got = bus.find(addr);
        assert_eq!(got.map(|m| m.base), want.map(|w| w.0), "find({addr:#x})");
        let pieces = model_pieces(
            |a| scan(a).map(|(b, _, i, _)| (*b, SIZES[*i % SIZES.len()])),
            addr,
            len,
        );
        // An empty access reaches the mapping at its address but no device.
        let mapped = if len == 0 {
            want.is_some()
        } else {
            pieces.iter().any(|p| p.base.is_some())
        };
        let expect = if mapped {
            Access::Handled(IoOutcome::Continue)
        } else {
            Access::Unmapped
        };
        for (_, _, _, dev) in &accepted {
            dev.calls.store(0, Ordering::Relaxed);
        }
        let mut buf = vec![0x33; len];
        assert_eq!(bus.read(0, addr, &mut buf), expect, "read {addr:#x}+{len}");
        for p in &pieces {
            let bytes = &buf[p.at..p.at + p.len];
            match p.base {
                None => assert!(bytes.iter().all(|&b| b == 0xff), "{p:?} {bytes:02x?}"),
                Some(_) if !p.delivered => assert!(bytes.iter().all(|&b| b == 0), "{p:?}"),
                Some(base) => {
                    let (_, _, i, _) = scan(p.addr).expect("a mapped piece");
                    for (k, b) in bytes.iter().enumerate() {
                        let offset = (p.addr - base).wrapping_add(k as u64);
                        assert_eq!(*b, *i as u8 ^ (base ^ offset) as u8, "{p:?}[{k}]");
                    }
                }
            }
        }
        assert_eq!(bus.write(0, addr, &buf), expect, "write {addr:#x}+{len}");
        for (b, _, _, dev) in &accepted {
            let mine: Vec<_> = pieces
                .iter()
                .filter(|p| p.delivered && p.base == Some(*b))
                .collect();
            // One read and one write call per delivered piece.
            assert_eq!(
                dev.calls.load(Ordering::Relaxed),
                2 * mine.len() as u64,
                "calls to {b:#x}"
            );
            if let Some(last) = mine.last() {
                assert_eq!(dev.last.load(Ordering::Relaxed), last.addr);
            }
        }
    };
    for (b, l, _, _) in &accepted {
        for a in [b.wrapping_sub(1), *b, *l, l.wrapping_add(1)] {
            check(a, 1);
        }
    }
    while !input.is_empty() {
        let mode = input.u8();
        let addr = match (mode >> 2) & 3 {
            0 if !maps.is_empty() => {
                let m = &maps[usize::from(input.u8()) % maps.len()];
                m.base.wrapping_add(u64::from(input.u16()))
            }
            _ => number(mode, &mut input),
        };
        let len = width(mode >> 4, &mut input);
        check(addr, len);
    }
});
