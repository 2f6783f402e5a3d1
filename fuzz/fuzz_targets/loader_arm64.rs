//! `trapline_loader::arch::aarch64::{inspect, load}` on arbitrary bytes
//! into small `virt` RAMs (at 0x4000_0000), with an input-chosen initrd.
//!
//! Input: a 4-byte header, then the image:
//! - byte 0: RAM size (0: 2 MiB; 1: 3 MiB; 2: 16 MiB; 3: 130 MiB + 4 KiB);
//! - byte 1: flags: bit 0 initrd, bit 1 fresh memory;
//! - bytes 2..4: initrd length (u16).
//!
//! Checks: never panics; `load` refuses exactly what `inspect` refuses
//! (and maybe more, for placement), with the same message; a refused load
//! writes nothing (sentinels over the start of RAM stay); an accepted one
//! put every segment's file bytes at its paddr with a zeroed tail (unless
//! fresh), all inside RAM; a raw image at RAM + 512 KiB, entered there;
//! the entry among some segment's file bytes; the initrd page-aligned above
//! the image holding its bytes; the device tree 2 MiB-aligned above both,
//! its room 1 byte..2 MiB and inside RAM.

#![no_main]

use std::ops::Range;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use trapline_abi::{VIRT_RAM_BASE, VIRT_RAW_IMAGE_BASE};
use trapline_loader::arch::aarch64::{
    inspect, load, Arm64Kind, LoadRequest, DTB_ALIGN, DTB_MAX_LEN, INITRD_ALIGN,
};
use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};

const MIB: u64 = 1 << 20;
const SENTINEL: u8 = 0xcc;
/// How much of RAM's start, of each segment and of the initrd the harness
/// checks.
const CHECK: u64 = 64 * 1024;

fn memories() -> &'static [(GuestMemoryMmap, Range<u64>); 4] {
    static M: OnceLock<[(GuestMemoryMmap, Range<u64>); 4]> = OnceLock::new();
    M.get_or_init(|| {
        let make = |len: u64| {
            let m =
                GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(VIRT_RAM_BASE), len as usize)])
                    .unwrap();
            (m, VIRT_RAM_BASE..VIRT_RAM_BASE + len)
        };
        [
            make(2 * MIB),
            make(3 * MIB),
            make(16 * MIB),
            make(130 * MIB + 4096),
        ]
    })
}

fn read(mem: &GuestMemoryMmap, r: &Range<u64>) -> Vec<u8> {
    let mut b = vec![0u8; (r.end - r.start) as usize];
    mem.read_slice(&mut b, GuestAddress(r.start)).unwrap();
    b
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let (h, image) = data.split_at(4);
    let (mem, ram) = &memories()[usize::from(h[0] % 4)];
    let initrd_len = usize::from(u16::from_le_bytes([h[2], h[3]]));
    let initrd: Vec<u8> = (0..initrd_len).map(|i| (i * 7 + 3) as u8).collect();
    let fresh = h[1] & 2 != 0;
    let req = LoadRequest {
        image,
        initrd: (h[1] & 1 != 0).then_some(&initrd[..]),
        fresh_memory: fresh,
    };

    let info = inspect(image);
    // Sentinels over the start of RAM (where raw images and Images go) and
    // over the first bytes of every segment inspect reports.
    let mut guard = vec![ram.start..ram.start + CHECK.min(ram.end - ram.start)];
    if let Ok(i) = &info {
        for s in &i.segments {
            let r = s.paddr.max(ram.start)..s.paddr.saturating_add(s.memsz.min(CHECK)).min(ram.end);
            if r.start < r.end {
                guard.push(r);
            }
        }
    }
    for r in &guard {
        mem.write_slice(
            &vec![SENTINEL; (r.end - r.start) as usize],
            GuestAddress(r.start),
        )
        .unwrap();
    }

    let result = load(mem, &req);
    let plan = match (result, &info) {
        (Err(e), _) => {
            let _ = format!("{e} {e:?}");
            if let Err(ie) = &info {
                assert_eq!(e.to_string(), ie.to_string(), "load and inspect disagree");
            }
            for r in &guard {
                assert!(
                    read(mem, r).iter().all(|&b| b == SENTINEL),
                    "refused load ({e}) wrote guest memory in {r:x?}"
                );
            }
            return;
        }
        (Ok(_), Err(e)) => panic!("load accepted an image inspect refuses: {e}"),
        (Ok(plan), Ok(_)) => plan,
    };
    let info = info.unwrap();
    assert_eq!(plan.kind, info.kind);
    assert_eq!(plan.entry, info.entry);
    let span = info.span();
    assert_eq!(plan.image, span.start..span.end);
    assert!(
        ram.start <= span.start && span.end <= ram.end,
        "image outside RAM"
    );
    if info.kind == Arm64Kind::Raw {
        assert_eq!(plan.entry, VIRT_RAW_IMAGE_BASE);
        assert_eq!(
            plan.image,
            VIRT_RAW_IMAGE_BASE..VIRT_RAW_IMAGE_BASE + image.len() as u64
        );
    }
    assert!(
        info.segments
            .iter()
            .any(|s| s.paddr <= plan.entry && plan.entry - s.paddr < s.filesz),
        "entry {:#x} not among the file bytes",
        plan.entry
    );
    for s in info.segments.iter().filter(|s| s.memsz > 0) {
        assert!(
            ram.start <= s.paddr && s.end() <= ram.end,
            "segment {s:?} outside RAM"
        );
        let n = s.filesz.min(CHECK);
        let file = &image[s.offset as usize..(s.offset + n) as usize];
        assert!(
            read(mem, &(s.paddr..s.paddr + n)) == file,
            "segment {} bytes differ",
            s.index
        );
        if !fresh {
            let t = s.paddr + s.filesz;
            let tail = t..t + (s.memsz - s.filesz).min(CHECK);
            assert!(
                read(mem, &tail).iter().all(|&b| b == 0),
                "BSS of {} not zeroed",
                s.index
            );
        }
    }
    let mut floor = plan.image.end;
    if let Some(r) = &plan.initrd {
        assert!(
            r.start >= plan.image.end && r.start % INITRD_ALIGN == 0,
            "initrd at {r:x?}"
        );
        assert_eq!(r.end - r.start, initrd_len as u64);
        assert!(r.end <= ram.end);
        let n = (r.end - r.start).min(CHECK);
        assert!(
            read(mem, &(r.start..r.start + n)) == initrd[..n as usize],
            "initrd bytes differ"
        );
        floor = r.end;
    } else {
        assert!(req.initrd.is_none(), "the initrd was not placed");
    }
    assert!(
        plan.dtb >= floor && plan.dtb % DTB_ALIGN == 0,
        "dtb at {:#x}",
        plan.dtb
    );
    assert!(plan.dtb_max_len > 0 && plan.dtb_max_len <= DTB_MAX_LEN);
    assert!(plan.dtb + plan.dtb_max_len <= ram.end, "dtb room past RAM");
});
