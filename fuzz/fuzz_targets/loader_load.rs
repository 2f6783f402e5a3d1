//! `trapline_loader::load` into small guest memories, with input-chosen
//! RAM layout, reserved ranges, command line and initrd.
//!
//! Input: a 16-byte header, then the image:
//! - byte 0: RAM layout (0: 8 MiB; 1: 1 MiB + hole + 6 MiB; 2: 640 KiB
//!   only; 3: 1 MiB + 4..6 MiB);
//! - byte 1: flags: bit 0 initrd, bit 1 the machine's device holes as
//!   reserved ranges, bit 2 the custom reserved range below, bit 3 a NUL
//!   in the arguments, bit 4 whitespace in the image name, bit 5 empty
//!   image name;
//! - bytes 2..4: length of the arguments (u16 % 8300, around the 8 KiB
//!   command-line capacity);
//! - bytes 4..8 / 8..12: custom reserved base / length (u32 each);
//! - bytes 12..14: initrd length (u16);
//! - bytes 14..16: unused.
//!
//! Checks: never panics; page 0 is never written (unless the image itself
//! loads there); a refused load writes nothing (sentinels at the boot area's default place and over every segment stay);
//! an accepted one put every segment's file bytes at its paddr with a
//! zeroed tail, put the initrd page-aligned above the image and 1 MiB,
//! put the boot area in RAM below 4 GiB clear of page 0, the segments, the
//! initrd and the reserved ranges (the MBI inside it),
//! kept everything out of reserved ranges and inside RAM, wrote the
//! command line the MBI points at, and reported a sorted, disjoint memory
//! map whose RAM entries are RAM and avoid every reserved range.

#![no_main]

use std::ops::Range;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use trapline_loader::layout::*;
use trapline_loader::*;
use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};

const MIB: u64 = 1 << 20;
const SENTINEL: u8 = 0xcc;
const PAGE0: u8 = 0x5a;
/// How much of each segment and of the initrd the harness checks.
const CHECK: u64 = 64 * 1024;

fn layouts() -> &'static [(GuestMemoryMmap, Vec<Range<u64>>); 4] {
    static L: OnceLock<[(GuestMemoryMmap, Vec<Range<u64>>); 4]> = OnceLock::new();
    L.get_or_init(|| {
        let make = |runs: &[(u64, u64)]| {
            let ranges: Vec<_> = runs
                .iter()
                .map(|&(b, l)| (GuestAddress(b), l as usize))
                .collect();
            let m = GuestMemoryMmap::<()>::from_ranges(&ranges).unwrap();
            (m, runs.iter().map(|&(b, l)| b..b + l).collect())
        };
        [
            make(&[(0, 8 * MIB)]),
            make(&[(0, MIB), (2 * MIB, 6 * MIB)]),
            make(&[(0, 640 * 1024)]),
            make(&[(0, MIB), (4 * MIB, 2 * MIB)]),
        ]
    })
}

/// trapline's device holes (crates/machine/src/layout.rs) plus pc-testdev.
const HOLES: &[Reserved] = &[
    Reserved {
        base: 0xc000_0000,
        len: 0x10_0000,
        name: "PCI ECAM window",
    },
    Reserved {
        base: 0xd000_0000,
        len: 0x2_0000,
        name: "trapline probe window",
    },
    Reserved {
        base: 0xe000_0000,
        len: 0xfec0_0000 - 0xe000_0000,
        name: "PCI MMIO window",
    },
    Reserved {
        base: 0xfec0_0000,
        len: 0x1000,
        name: "IOAPIC",
    },
    Reserved {
        base: 0xfee0_0000,
        len: 0x1000,
        name: "LAPIC",
    },
    Reserved {
        base: 0xfeff_c000,
        len: 0x4000,
        name: "KVM identity map/TSS",
    },
    Reserved {
        base: 0xff00_0000,
        len: 0x1_0000,
        name: "pc-testdev iomem",
    },
];

fn in_ram(runs: &[Range<u64>], r: &Range<u64>) -> bool {
    r.is_empty()
        || runs
            .iter()
            .any(|run| run.start <= r.start && r.end <= run.end)
}

fn overlaps(a: &Range<u64>, b: &Range<u64>) -> bool {
    !a.is_empty() && !b.is_empty() && a.start < b.end && b.start < a.end
}

/// Ranges a refused load must leave alone, clipped to RAM and CHECK bytes.
fn guarded(info: Option<&ImageInfo>, runs: &[Range<u64>]) -> Vec<Range<u64>> {
    let mut v = Vec::new();
    v.push(LOADER_AREA_START..LOADER_AREA_END);
    for s in info.map(|i| &i.segments[..]).unwrap_or(&[]) {
        // Page 0 has its own pattern (checked separately).
        let r = s.paddr.max(PAGE_SIZE)..s.paddr.saturating_add(s.memsz.min(CHECK));
        for run in runs {
            let c = r.start.max(run.start)..r.end.min(run.end);
            if !c.is_empty() {
                v.push(c);
            }
        }
    }
    v
}

fn read(mem: &GuestMemoryMmap, r: &Range<u64>) -> Vec<u8> {
    let mut b = vec![0u8; (r.end - r.start) as usize];
    mem.read_slice(&mut b, GuestAddress(r.start)).unwrap();
    b
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 16 {
        return;
    }
    let (h, image) = data.split_at(16);
    let (mem, runs) = &layouts()[usize::from(h[0] % 4)];
    let flags = h[1];
    let arg_len = usize::from(u16::from_le_bytes([h[2], h[3]])) % 8300;
    let mut append: String = (0..arg_len)
        .map(|i| (b'a' + (i % 26) as u8) as char)
        .collect();
    if flags & 8 != 0 && !append.is_empty() {
        append.replace_range(0..1, "\0");
    }
    let name = match (flags & 0x20 != 0, flags & 0x10 != 0) {
        (true, _) => "",
        (false, true) => "my kernel\t.flat",
        _ => "x86/fuzz.flat",
    };
    let mut reserved: Vec<Reserved> = Vec::new();
    if flags & 2 != 0 {
        reserved.extend_from_slice(HOLES);
    }
    if flags & 4 != 0 {
        reserved.push(Reserved {
            base: u64::from(u32::from_le_bytes(h[4..8].try_into().unwrap())),
            len: u64::from(u32::from_le_bytes(h[8..12].try_into().unwrap())),
            name: "fuzz",
        });
    }
    let initrd_len = usize::from(u16::from_le_bytes([h[12], h[13]]));
    let initrd: Vec<u8> = (0..initrd_len).map(|i| (i * 7 + 3) as u8).collect();
    let req = LoadRequest {
        image,
        image_name: name,
        append: &append,
        initrd: (flags & 1 != 0).then_some(&initrd[..]),
        reserved: &reserved,
        // The memories are reused across runs (and hold sentinels), so
        // BSS must be zeroed explicitly.
        fresh_memory: false,
        rsdp: (flags & 2 != 0).then_some(0xE_0000),
    };

    let info = inspect(image).ok();
    let guard = guarded(info.as_ref(), runs);
    for r in &guard {
        mem.write_slice(
            &vec![SENTINEL; (r.end - r.start) as usize],
            GuestAddress(r.start),
        )
        .unwrap();
    }

    mem.write_slice(&[PAGE0; 4096], GuestAddress(0)).unwrap();

    let result = load(mem, &req);
    // The loader's own structures never touch page 0 (kvm-unit-tests puts
    // its AP trampoline there); an image may ask for it, though.
    let image_in_page0 = info.as_ref().is_some_and(|i| {
        i.segments
            .iter()
            .any(|s| s.memsz > 0 && s.paddr < PAGE_SIZE)
    });
    if result.is_err() || !image_in_page0 {
        assert!(
            read(mem, &(0..4096)).iter().all(|&b| b == PAGE0),
            "page 0 was written"
        );
    }
    let setup = match result {
        Err(e) => {
            let _ = format!("{e} {e:?}");
            for r in &guard {
                assert!(
                    read(mem, r).iter().all(|&b| b == SENTINEL),
                    "refused load ({e}) wrote guest memory in {r:x?}"
                );
            }
            return;
        }
        Ok(s) => s,
    };
    let info = info.expect("load accepted an image inspect refuses");
    assert_eq!(setup.kind, info.kind);
    let span = info.span();
    assert_eq!(setup.image, span.start..span.end);
    let area = setup.boot_area.range();
    assert!(in_ram(runs, &area), "boot area {area:x?} outside RAM");
    assert!(area.start >= PAGE_SIZE && area.end <= IDENTITY_MAP_END);
    assert!(area.contains(&setup.mbi_address));
    for res in &reserved {
        assert!(
            !overlaps(&area, &(res.base..res.base.saturating_add(res.len))),
            "boot area over {}",
            res.name
        );
    }
    if let Some(r) = &setup.initrd {
        assert!(!overlaps(&area, r), "boot area over the initrd");
    }
    for s in info.segments.iter().filter(|s| s.memsz > 0) {
        let r = s.paddr..s.end();
        assert!(in_ram(runs, &r), "segment {s:?} outside RAM");
        assert!(!overlaps(&r, &area), "segment over the boot area");
        assert!(
            !overlaps(&r, &(EBDA_START..HIGH_MEMORY_START)),
            "segment over the BIOS area"
        );
        for res in &reserved {
            assert!(
                !overlaps(&r, &(res.base..res.base.saturating_add(res.len))),
                "segment over {}",
                res.name
            );
        }
        let n = s.filesz.min(CHECK);
        let file = &image[s.offset as usize..(s.offset + n) as usize];
        assert!(
            read(mem, &(s.paddr..s.paddr + n)) == file,
            "segment {} bytes differ",
            s.index
        );
        let tail = (s.paddr + s.filesz)..(s.paddr + s.filesz + (s.memsz - s.filesz).min(CHECK));
        assert!(
            read(mem, &tail).iter().all(|&b| b == 0),
            "segment {} BSS not zeroed",
            s.index
        );
    }
    match (req.initrd, &setup.initrd) {
        (None, None) => {}
        (Some(d), Some(r)) => {
            assert_eq!(r.start % PAGE_SIZE, 0);
            assert!(r.start >= span.end.max(HIGH_MEMORY_START));
            assert_eq!(r.end - r.start, d.len() as u64);
            assert!(in_ram(runs, r));
            for res in &reserved {
                assert!(!overlaps(r, &(res.base..res.base.saturating_add(res.len))));
            }
            let n = (d.len() as u64).min(CHECK);
            assert!(
                read(mem, &(r.start..r.start + n)) == d[..n as usize],
                "initrd bytes differ"
            );
        }
        (a, b) => panic!("initrd asked {:?}, placed {b:?}", a.map(<[u8]>::len)),
    }
    // The command line where the boot information says it is.
    let u32_at = |addr: u64| {
        let mut b = [0u8; 4];
        mem.read_slice(&mut b, GuestAddress(addr)).unwrap();
        u32::from_le_bytes(b)
    };
    let cmd_at = match setup.kind {
        // boot_params.hdr.cmd_line_ptr; Linux takes the arguments as given.
        ImageKind::BzImage => u64::from(u32_at(setup.mbi_address + 0x228)),
        // hvm_start_info.cmdline_paddr (its high half is 0 below 4 GiB).
        ImageKind::Pvh => u64::from(u32_at(setup.mbi_address + 24)),
        ImageKind::Multiboot32 | ImageKind::Elf64 => u64::from(u32_at(setup.mbi_address + 16)),
    };
    let stored = read(mem, &(cmd_at..cmd_at + setup.cmdline.len() as u64 + 1));
    assert_eq!(&stored[..setup.cmdline.len()], setup.cmdline.as_bytes());
    assert_eq!(stored[setup.cmdline.len()], 0);
    assert!(!setup.cmdline.contains(char::is_control) || append.contains(char::is_control));
    match setup.kind {
        ImageKind::Multiboot32 | ImageKind::Elf64 => {
            let first = setup.cmdline.split(' ').next().unwrap();
            assert!(
                !first.is_empty() && !first.contains(char::is_whitespace),
                "argv[0] {first:?}"
            );
            assert_eq!(u32_at(setup.mbi_address + 8), setup.mem_upper_kib);
        }
        ImageKind::Pvh => assert_eq!(setup.cmdline, append),
        ImageKind::BzImage => {
            assert_eq!(setup.cmdline, append);
            let bp = setup.mbi_address;
            assert_eq!(u32_at(bp + 0x202), u32::from_le_bytes(*b"HdrS"));
            let (image, size) = setup
                .initrd
                .as_ref()
                .map_or((0, 0), |r| (r.start as u32, (r.end - r.start) as u32));
            assert_eq!((u32_at(bp + 0x218), u32_at(bp + 0x21C)), (image, size));
            let mut n = [0u8; 1];
            mem.read_slice(&mut n, GuestAddress(bp + 0x1E8)).unwrap();
            assert_eq!(usize::from(n[0]), setup.memory_map.len(), "e820_entries");
        }
    }
    // The memory map.
    let map = &setup.memory_map;
    for w in map.windows(2) {
        assert!(
            w[0].base + w[0].len <= w[1].base,
            "memory map not sorted/disjoint: {map:x?}"
        );
    }
    for e in map.iter().filter(|e| e.kind == MMAP_RAM) {
        let r = e.base..e.base + e.len;
        assert!(in_ram(runs, &r), "mmap RAM entry {e:x?} is not RAM");
        for res in &reserved {
            assert!(
                !overlaps(&r, &(res.base..res.base.saturating_add(res.len))),
                "mmap RAM over {}",
                res.name
            );
        }
    }
});
