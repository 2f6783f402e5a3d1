//! Where the boot area goes: its default place unless something else claims
//! that memory, otherwise free RAM the image does not use.
//!
//! The loader never refuses an image for its own sake: QEMU's `-kernel`
//! loads an image linked at 0x8000 (kvm-unit-tests' real-mode tests link
//! low so their 16-bit code can run), so trapline must too. The order of
//! preference keeps the area where guests expect boot data and where a
//! kvm-unit-tests-style allocator (which hands out `[edata, mem_upper)`
//! without reading the memory map) will not reuse it:
//!
//! 1. the default place `0x1000..0x10000`, when it is free;
//! 2. the lowest free, page-aligned range in conventional memory
//!    (`0x1000..0x9FC00`), around or below a low image;
//! 3. the highest free, page-aligned range below 4 GiB (the top of RAM), so
//!    `mem_upper` loses as little as possible.
//!
//! "Free" means RAM that is not page 0 (kvm-unit-tests' AP trampoline), not
//! the PC firmware area (EBDA, VGA hole, ACPI tables), not a loaded segment,
//! not the initrd and not a device range; everything in the area must also
//! be below 4 GiB, since the Multiboot fields are 32-bit and ELF64 entry
//! relies on the 0..4 GiB identity map.

use std::ops::Range;

use vm_memory::GuestMemoryMmap;

use crate::arch::x86_64::layout::*;
use crate::error::{LoadError, Mib};
use crate::guest::{write, zero};
use crate::ram::{subtract, Ram};

/// Where the boot structures (GDT, page tables, Multiboot info, module list,
/// memory map, command line, boot stack) are, as one page-aligned block of
/// [`BOOT_AREA_SIZE`] bytes. Each structure sits at a fixed offset from the
/// base (the `*_OFFSET` constants in [`crate::layout`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BootArea {
    base: u64,
}

impl BootArea {
    /// The default place, `0x1000..0x10000`.
    pub const DEFAULT: BootArea = BootArea {
        base: LOADER_AREA_START,
    };

    /// The area at `base` (callers place it; see [`crate::load`]).
    pub(crate) const fn at(base: u64) -> BootArea {
        BootArea { base }
    }

    /// First byte.
    pub const fn base(self) -> u64 {
        self.base
    }

    /// One past the last byte.
    pub const fn end(self) -> u64 {
        self.base + BOOT_AREA_SIZE
    }

    /// The whole area.
    pub const fn range(self) -> Range<u64> {
        self.base..self.end()
    }

    /// True at the default place, `0x1000..0x10000`.
    pub const fn is_default(self) -> bool {
        self.base == LOADER_AREA_START
    }

    /// The area as every boot protocol starts it, in guest memory: zero
    /// (guest RAM fresh from the kernel already is: it is then not written,
    /// so its pages are not faulted in), with the boot GDT in place. The
    /// protocol then writes its own structures at their absolute addresses.
    pub(crate) fn image(self, mem: &GuestMemoryMmap, fresh: bool) -> AreaImage<'_> {
        let mut image = AreaImage {
            area: self,
            mem,
            failed: None,
        };
        if !fresh {
            image.failed = zero(mem, "the boot structures", self.base, BOOT_AREA_SIZE).err();
        }
        image.put(self.gdt(), &crate::arch::x86_64::gdt::gdt_bytes());
        image
    }

    /// The GDT (GDTR base).
    pub const fn gdt(self) -> u64 {
        self.base + GDT_OFFSET
    }

    /// The PML4 of the boot identity map (CR3 for ELF64 entry).
    pub const fn pml4(self) -> u64 {
        self.base + PML4_OFFSET
    }

    /// The PDPT of the boot identity map.
    pub const fn pdpt(self) -> u64 {
        self.base + PDPT_OFFSET
    }

    /// Page directory `i` (`0..PD_COUNT`): maps GiB `i`.
    pub const fn pd(self, i: u64) -> u64 {
        self.base + PD_OFFSET + i * PAGE_SIZE
    }

    /// The Multiboot info block (EBX/RBX at entry).
    pub const fn mbi(self) -> u64 {
        self.base + MBI_OFFSET
    }

    /// The Multiboot module list.
    pub const fn modules(self) -> u64 {
        self.base + MODULES_OFFSET
    }

    /// The boot loader name.
    pub const fn bootloader_name(self) -> u64 {
        self.base + BOOTLOADER_NAME_OFFSET
    }

    /// The module's (empty) command line.
    pub const fn module_cmdline(self) -> u64 {
        self.base + MODULE_CMDLINE_OFFSET
    }

    /// The Multiboot memory map.
    pub const fn mmap(self) -> u64 {
        self.base + MMAP_OFFSET
    }

    /// The command line.
    pub const fn cmdline(self) -> u64 {
        self.base + CMDLINE_OFFSET
    }

    /// Initial ESP/RSP: the top of the boot stack.
    pub const fn stack_top(self) -> u64 {
        self.base + BOOT_STACK_TOP_OFFSET
    }
}

/// A [`BootArea`] being written, addressed by guest-physical address. Its
/// structures go straight into guest memory: a staging copy of the whole
/// area would cost a page fault per page of it twice (the copy's and the
/// guest's), where most of the area (stack, unused slots) stays zero. The
/// callers have checked that what they write fits its slot; an address
/// outside the area is a bug in the loader and panics. The first failed
/// write is kept for [`AreaImage::finish`] (the placement checks make one
/// impossible; nothing panics on it).
pub(crate) struct AreaImage<'m> {
    area: BootArea,
    mem: &'m GuestMemoryMmap,
    failed: Option<LoadError>,
}

impl AreaImage<'_> {
    /// `bytes` at guest-physical `addr`.
    pub(crate) fn put(&mut self, addr: u64, bytes: &[u8]) {
        let inside = addr >= self.area.base()
            && addr
                .checked_add(bytes.len() as u64)
                .is_some_and(|end| end <= self.area.end());
        assert!(inside, "boot structure at {addr:#x} outside the boot area");
        if self.failed.is_none() {
            self.failed = write(self.mem, "the boot structures", addr, bytes).err();
        }
    }

    /// A little-endian u32 at `addr`.
    pub(crate) fn put32(&mut self, addr: u64, v: u32) {
        self.put(addr, &v.to_le_bytes());
    }

    /// A little-endian u64 at `addr`.
    pub(crate) fn put64(&mut self, addr: u64, v: u64) {
        self.put(addr, &v.to_le_bytes());
    }

    /// Done: the first write that failed, if any.
    pub(crate) fn finish(self) -> Result<(), LoadError> {
        self.failed.map_or(Ok(()), Err)
    }
}

/// Chooses the boot area's place (see the module comment for the order).
/// `taken` holds every guest-physical range something else uses: loaded
/// segments, the initrd, device ranges; in any order, empty ones ignored.
pub(crate) fn place_boot_area(ram: &Ram, taken: &[Range<u64>]) -> Result<BootArea, LoadError> {
    let mut holes: Vec<Range<u64>> = taken.iter().filter(|r| !r.is_empty()).cloned().collect();
    holes.push(0..PAGE_SIZE);
    holes.push(EBDA_START..HIGH_MEMORY_START);
    holes.push(IDENTITY_MAP_END..u64::MAX);
    holes.sort_by_key(|r| r.start);
    let free = subtract(&ram.runs, &holes);

    let fits = |r: &Range<u64>| free.iter().any(|f| f.start <= r.start && r.end <= f.end);
    if fits(&BootArea::DEFAULT.range()) {
        return Ok(BootArea::DEFAULT);
    }
    let lowest_conventional = free.iter().filter(|f| f.end <= EBDA_START).find_map(|f| {
        let base = align_up(f.start);
        (base.checked_add(BOOT_AREA_SIZE)? <= f.end).then_some(base)
    });
    let highest = || {
        free.iter().rev().find_map(|f| {
            let base = f.end.checked_sub(BOOT_AREA_SIZE)? & !(PAGE_SIZE - 1);
            (base >= f.start).then_some(base)
        })
    };
    match lowest_conventional.or_else(highest) {
        Some(base) => Ok(BootArea::at(base)),
        None => Err(LoadError::NoRoomForBootStructures {
            size: BOOT_AREA_SIZE,
            ram_mib: Mib(ram.size()),
        }),
    }
}

fn align_up(v: u64) -> u64 {
    v.checked_add(PAGE_SIZE - 1)
        .map_or(!(PAGE_SIZE - 1), |x| x & !(PAGE_SIZE - 1))
}

#[cfg(test)]
// The tests pass lists of taken ranges; a one-range list is still a list.
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn ram(runs: &[Range<u64>]) -> Ram {
        Ram {
            runs: runs.to_vec(),
        }
    }

    fn place(runs: &[Range<u64>], taken: &[Range<u64>]) -> Result<BootArea, LoadError> {
        place_boot_area(&ram(runs), taken)
    }

    fn overlaps(a: &Range<u64>, b: &Range<u64>) -> bool {
        a.start < b.end && b.start < a.end
    }

    #[test]
    fn default_place_when_the_image_is_above_1_mib() {
        let a = place(&[0..32 * MIB], &[0x40_0000..0x50_0000]).unwrap();
        assert_eq!(a, BootArea::DEFAULT);
        assert_eq!(a.range(), 0x1000..0x1_0000);
        assert!(a.is_default());
        // The structures land where they always did.
        assert_eq!(
            (
                a.gdt(),
                a.pml4(),
                a.mbi(),
                a.mmap(),
                a.cmdline(),
                a.stack_top()
            ),
            (
                GDT_ADDR,
                PML4_ADDR,
                MBI_ADDR,
                MMAP_ADDR,
                CMDLINE_ADDR,
                BOOT_STACK_TOP
            )
        );
    }

    #[test]
    fn an_image_at_0x8000_moves_the_area_into_free_conventional_memory() {
        // A kvm-unit-tests real-mode test: one page of code and data at 0x8000.
        let image = 0x8000..0x9000;
        let a = place(&[0..32 * MIB], std::slice::from_ref(&image)).unwrap();
        assert!(!a.is_default());
        assert!(!overlaps(&a.range(), &image));
        // 0x1000..0x8000 is too small (28 KiB); the next gap starts at 0x9000.
        assert_eq!(a.base(), 0x9000);
        assert!(a.end() <= EBDA_START);
        assert_eq!(a.mbi(), 0x9000 + MBI_OFFSET);
        assert_eq!(a.stack_top() % 16, 0);
    }

    #[test]
    fn an_unaligned_image_end_rounds_the_area_up_to_a_page() {
        let a = place(&[0..32 * MIB], &[0x8000..0x9010]).unwrap();
        assert_eq!(a.base(), 0xA000);
    }

    #[test]
    fn an_image_below_the_default_place_leaves_room_above_it() {
        // Linked at 0x4000 like kvm-unit-tests' realmode.flat, 20 KiB long.
        let a = place(&[0..16 * MIB], &[0x4000..0x9000]).unwrap();
        assert_eq!(a.base(), 0x9000);
    }

    #[test]
    fn an_image_covering_conventional_memory_moves_the_area_to_the_top_of_ram() {
        let image = 0x1000..0x9_F000;
        let a = place(&[0..32 * MIB], &[image.clone(), 0x10_0000..0x20_0000]).unwrap();
        assert_eq!(a.end(), 32 * MIB);
        assert!(!overlaps(&a.range(), &image));
    }

    #[test]
    fn the_area_avoids_the_initrd_and_device_ranges() {
        // Image low, initrd after it at 1 MiB, a device range at the top of RAM.
        let taken = [
            0x1000..0x9_F000,
            0x10_0000..0x18_0000,
            (16 * MIB - 0x8000)..16 * MIB,
        ];
        let a = place(&[0..16 * MIB], &taken).unwrap();
        for t in &taken {
            assert!(!overlaps(&a.range(), t), "{:x?} over {t:x?}", a.range());
        }
        assert_eq!(a.end(), 16 * MIB - 0x8000);
    }

    #[test]
    fn a_gap_between_segments_is_used_when_the_top_is_taken() {
        let taken = [0x1000..0x9_F000, 0x10_0000..0x20_0000, 0x30_0000..4 * MIB];
        let a = place(&[0..4 * MIB], &taken).unwrap();
        assert_eq!(a.end(), 0x30_0000);
    }

    #[test]
    fn never_page_0_the_firmware_area_or_above_4_gib() {
        // Only page 0, the firmware area and RAM above 4 GiB are free.
        let runs = [0..2 * MIB, (4 << 30)..(4 << 30) + 64 * MIB];
        let taken = [0x1000..0x9_FC00, 0x10_0000..2 * MIB];
        let e = place(&runs, &taken).unwrap_err();
        assert!(
            matches!(e, LoadError::NoRoomForBootStructures { .. }),
            "{e}"
        );
    }

    #[test]
    fn an_image_filling_ram_is_the_only_refusal() {
        let e = place(&[0..4 * MIB], &[0x1000..0x9_FC00, 0x10_0000..4 * MIB]).unwrap_err();
        assert!(matches!(e, LoadError::NoRoomForBootStructures { .. }));
        let msg = e.to_string();
        assert!(msg.contains("--mem"), "{msg}");
        assert!(msg.contains("4 MiB"), "{msg}");
        // One free area-sized page run anywhere is enough.
        let a = place(
            &[0..4 * MIB],
            &[0x1000..0x9_FC00, 0x10_0000..(4 * MIB - BOOT_AREA_SIZE)],
        )
        .unwrap();
        assert_eq!(a.range(), (4 * MIB - BOOT_AREA_SIZE)..4 * MIB);
    }

    #[test]
    fn a_hole_in_ram_is_not_free() {
        // RAM 0..1 MiB and 2..3 MiB; the image covers conventional memory.
        let runs = [0..MIB, 2 * MIB..3 * MIB];
        let a = place(&runs, &[0x1000..0x9_F000]).unwrap();
        assert_eq!(a.range(), (3 * MIB - BOOT_AREA_SIZE)..3 * MIB);
    }
}
