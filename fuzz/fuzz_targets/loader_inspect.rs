//! `trapline_loader::inspect` on arbitrary bytes (malformed ELF32/ELF64,
//! Multiboot headers, PT_NOTEs, bzImage setup headers).
//!
//! Checks: never panics (error messages included: every error is
//! formatted); when it accepts an image, everything it reports holds:
//! class matches the kind, segments lie in the file, filesz <= memsz, no
//! address overflow (ELF32 below 4 GiB), loaded segments do not overlap,
//! the entry point is a file byte of some segment, a Multiboot header sits
//! 4-aligned in the first 8 KiB with the magic and a valid checksum, and
//! the span covers every segment; a bzImage has both signatures, protocol
//! 2.06+, one segment holding the whole file after its setup code, loaded
//! at 1 MiB or above and ending at or below 4 GiB, entered at its start.

#![no_main]

use libfuzzer_sys::fuzz_target;
use trapline_loader::{inspect, ImageKind, MULTIBOOT_HEADER_MAGIC};

fn u32_at(b: &[u8], at: u64) -> u32 {
    let at = at as usize;
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fuzz_target!(|data: &[u8]| {
    let info = match inspect(data) {
        Ok(info) => info,
        Err(e) => {
            let _ = format!("{e} {e:?}");
            return;
        }
    };
    let len = data.len() as u64;
    match info.kind {
        ImageKind::Multiboot32 => assert_eq!(data[4], 1),
        // A PVH kernel is an ELF64 whose note gives a 32-bit entry.
        ImageKind::Elf64 => assert_eq!(data[4], 2),
        ImageKind::Pvh => {
            assert_eq!(data[4], 2);
            assert!(
                info.entry <= u64::from(u32::MAX),
                "PVH entry {:#x}",
                info.entry
            );
        }
        ImageKind::BzImage => {
            assert_eq!(&data[0x1FE..0x200], &[0x55, 0xAA]);
            assert_eq!(&data[0x202..0x206], b"HdrS");
            let h = info.bzimage.expect("a bzImage without its header");
            assert!(h.version >= 0x0206, "{h:?}");
            assert!(
                (0x23C..=0x26C).contains(&h.header_end) && h.header_end <= len,
                "{h:?}"
            );
            let [s] = &info.segments[..] else {
                panic!("a bzImage is one segment: {:?}", info.segments)
            };
            assert_eq!(s.offset, h.setup_size);
            assert_eq!(s.offset % 512, 0);
            assert_eq!(s.offset + s.filesz, len, "the whole kernel is loaded");
            assert!(s.filesz > 0);
            assert_eq!(info.entry, s.paddr, "entered at its first byte");
            assert!(s.paddr >= 1 << 20, "{s:?} below 1 MiB");
        }
    }
    if info.kind != ImageKind::BzImage {
        assert!(info.bzimage.is_none());
    }
    assert!(!info.segments.is_empty());
    let limit = if matches!(info.kind, ImageKind::Multiboot32 | ImageKind::BzImage) {
        1u64 << 32
    } else {
        u64::MAX
    };
    for s in &info.segments {
        assert!(s.filesz <= s.memsz, "{s:?}");
        assert!(
            s.offset.checked_add(s.filesz).is_some_and(|e| e <= len),
            "{s:?} outside the file"
        );
        assert!(
            s.paddr.checked_add(s.memsz).is_some_and(|e| e <= limit),
            "{s:?} overflows"
        );
    }
    let mut loaded: Vec<_> = info.segments.iter().filter(|s| s.memsz > 0).collect();
    loaded.sort_by_key(|s| s.paddr);
    for w in loaded.windows(2) {
        assert!(w[0].end() <= w[1].paddr, "overlapping segments {w:?}");
    }
    assert!(
        info.segments
            .iter()
            .any(|s| info.entry >= s.paddr && info.entry - s.paddr < s.filesz),
        "entry {:#x} not in a segment's file bytes",
        info.entry
    );
    let span = info.span();
    for s in &loaded {
        assert!(span.start <= s.paddr && s.end() <= span.end);
    }
    match (info.kind, info.multiboot) {
        (ImageKind::Multiboot32, Some(h)) => {
            assert!(
                h.offset % 4 == 0 && h.offset < 8192 && h.offset + 12 <= len,
                "{h:?}"
            );
            assert_eq!(u32_at(data, h.offset), MULTIBOOT_HEADER_MAGIC);
            assert_eq!(u32_at(data, h.offset + 4), h.flags);
            let sum = MULTIBOOT_HEADER_MAGIC
                .wrapping_add(h.flags)
                .wrapping_add(u32_at(data, h.offset + 8));
            assert_eq!(sum, 0, "Multiboot checksum");
            assert_eq!(
                h.flags & 0x1_fff8,
                0,
                "unsupported Multiboot flags accepted"
            );
        }
        (ImageKind::Elf64 | ImageKind::Pvh | ImageKind::BzImage, None) => {}
        (k, h) => panic!("kind {k:?} with multiboot header {h:?}"),
    }
    assert_eq!(
        inspect(data).ok(),
        Some(info),
        "inspect is not deterministic"
    );
});
