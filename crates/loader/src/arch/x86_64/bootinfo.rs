//! The Multiboot memory map, and the boot area's bytes (GDT, page tables,
//! MBI, module list, strings, mmap, command line, stack).
//!
//! The whole boot area is built in a host buffer and written to guest
//! memory in one go, so everything there is deterministic: bytes the loader
//! does not set are zero, whatever the memory held before.

use std::ops::Range;

use vm_memory::GuestMemoryMmap;

use crate::arch::x86_64::layout::*;
use crate::arch::x86_64::place::BootArea;
use crate::error::LoadError;
use crate::ram::{merge, reserved_range, subtract, Ram, Reserved};

/// Multiboot memory map type of usable RAM.
pub const MMAP_RAM: u32 = 1;
/// Multiboot memory map type of reserved memory.
pub const MMAP_RESERVED: u32 = 2;

/// One entry of the Multiboot memory map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MmapEntry {
    /// First byte.
    pub base: u64,
    /// Length in bytes.
    pub len: u64,
    /// [`MMAP_RAM`] or [`MMAP_RESERVED`].
    pub kind: u32,
}

/// The memory map and `mem_upper` the guest is told about.
#[derive(Debug, Clone)]
pub struct MemoryMap {
    /// The entries, sorted by base.
    pub entries: Vec<MmapEntry>,
    /// KiB of contiguous usable RAM from 1 MiB (0 if none).
    pub mem_upper: u32,
}

/// Builds the memory map: RAM minus the PC low-memory holes and minus every
/// reserved device range; the fixed reserved blocks (EBDA, ACPI area); and
/// each reserved device range below 4 GiB. The VGA hole 0xA0000–0xE0000 is
/// left out entirely, as on QEMU. `mem_upper` is where usable RAM starting at
/// 1 MiB first stops (kvm-unit-tests hands `[edata, mem_upper KiB)` to its
/// page allocator, so it must not run into a device range).
///
/// A boot area moved from its default place is reserved too, so a guest
/// that builds its allocator from the map (or from `mem_upper`, when the
/// area sits at the top of RAM) does not hand out its own boot data. At the
/// default place the map stays QEMU's shape (0..0x9FC00 all RAM), which is
/// what guests written for QEMU have always seen.
pub fn memory_map(ram: &Ram, reserved: &[Reserved], area: BootArea) -> MemoryMap {
    let mut fixed_reserved = vec![
        EBDA_START..LOW_RAM_END,
        FIRMWARE_AREA_START..HIGH_MEMORY_START,
    ];
    if !area.is_default() {
        fixed_reserved.push(area.range());
    }
    let mut device: Vec<Range<u64>> = reserved
        .iter()
        .map(reserved_range)
        .filter(|r| !r.is_empty())
        .collect();

    let mut holes: Vec<Range<u64>> = fixed_reserved.clone();
    holes.push(LOW_RAM_END..FIRMWARE_AREA_START);
    holes.extend(device.iter().cloned());
    holes.sort_by_key(|r| r.start);
    let usable = subtract(&ram.runs, &holes);

    // Reserved entries: the fixed blocks plus devices below 4 GiB, merged so
    // a device range that duplicates or touches a fixed block (say the ACPI
    // area passed in again) yields one entry.
    device.retain(|r| r.start < IDENTITY_MAP_END);
    let mut res: Vec<Range<u64>> = fixed_reserved;
    res.extend(device);
    res.sort_by_key(|r| r.start);
    let res = join_device_ranges(merge(res), &ram.runs);

    let mut entries: Vec<MmapEntry> = usable
        .iter()
        .map(|r| MmapEntry {
            base: r.start,
            len: r.end - r.start,
            kind: MMAP_RAM,
        })
        .chain(res.iter().map(|r| MmapEntry {
            base: r.start,
            len: r.end - r.start,
            kind: MMAP_RESERVED,
        }))
        .collect();
    entries.sort_by_key(|e| (e.base, e.kind));

    let upper_end = usable
        .iter()
        .find(|r| r.start == HIGH_MEMORY_START)
        .map_or(HIGH_MEMORY_START, |r| r.end.min(IDENTITY_MAP_END));
    let mem_upper = ((upper_end - HIGH_MEMORY_START) / 1024) as u32;
    MemoryMap { entries, mem_upper }
}

/// Joins consecutive reserved ranges above 1 MiB when the gap between them
/// holds no RAM: the gap is nothing's (no RAM, no device), so reserving it
/// changes nothing a guest may use, and the map gets shorter. Linux prints
/// every entry of its memory map to the console at boot, and each console
/// byte costs the guest two port exits and its 8250 driver's code: the
/// machine's device ranges below 4 GiB (ECAM, the probe window, virtio-mmio,
/// the PCI window with the IOAPIC, the LAPIC, KVM's pages) become one entry
/// instead of five. The low blocks (EBDA, the firmware area) keep QEMU's
/// shape.
fn join_device_ranges(reserved: Vec<Range<u64>>, ram: &[Range<u64>]) -> Vec<Range<u64>> {
    let holds_ram = |gap: &Range<u64>| ram.iter().any(|r| r.start < gap.end && gap.start < r.end);
    let mut out: Vec<Range<u64>> = Vec::with_capacity(reserved.len());
    for r in reserved {
        match out.last_mut() {
            Some(last) if last.start >= HIGH_MEMORY_START && !holds_ram(&(last.end..r.start)) => {
                last.end = last.end.max(r.end);
            }
            _ => out.push(r),
        }
    }
    out
}

/// Multiboot info `flags` bits the loader sets.
pub mod mbi_flags {
    /// mem_lower / mem_upper valid.
    pub const MEM: u32 = 1 << 0;
    /// cmdline valid.
    pub const CMDLINE: u32 = 1 << 2;
    /// mods_count / mods_addr valid.
    pub const MODS: u32 = 1 << 3;
    /// mmap_length / mmap_addr valid.
    pub const MMAP: u32 = 1 << 6;
    /// boot_loader_name valid.
    pub const LOADER_NAME: u32 = 1 << 9;
}

/// The boot loader name in the MBI.
pub const BOOTLOADER_NAME: &str = "trapline";

/// Inputs of the boot area that vary per boot.
pub struct AreaContents<'a> {
    pub area: BootArea,
    pub cmdline: &'a [u8],
    pub initrd: Option<Range<u64>>,
    pub map: &'a MemoryMap,
}

/// Page-table entry bits.
const PTE_PRESENT: u64 = 1 << 0;
const PTE_WRITE: u64 = 1 << 1;
const PTE_HUGE: u64 = 1 << 7;

/// Writes the boot area at `a.area.base()` (`fresh`: guest memory is still
/// zero). Every pointer inside (page tables, MBI fields) is absolute, from
/// the area's base. The caller has checked that the command line and memory
/// map fit their slots and that the area lies below 4 GiB.
pub fn write_boot_area(
    mem: &GuestMemoryMmap,
    fresh: bool,
    a: &AreaContents<'_>,
) -> Result<(), LoadError> {
    let area = a.area;
    let mut img = area.image(mem, fresh);
    // Checked by the caller: the whole area is below 4 GiB.
    let addr32 = |addr: u64| addr as u32;

    // Identity map 0..4 GiB: PML4[0] -> PDPT; PDPT[i] -> PD i; PD i maps GiB
    // i with 512 2 MiB pages. The same shape kvm-unit-tests builds itself.
    img.put64(area.pml4(), area.pdpt() | PTE_PRESENT | PTE_WRITE);
    for i in 0..PD_COUNT {
        let pd = area.pd(i);
        img.put64(area.pdpt() + i * 8, pd | PTE_PRESENT | PTE_WRITE);
        // A page directory is built whole, then written in one copy.
        let mut table = [0u8; PAGE_SIZE as usize];
        for (j, entry) in table.chunks_exact_mut(8).enumerate() {
            let phys = (i << 30) | ((j as u64) << 21);
            entry.copy_from_slice(&(phys | PTE_PRESENT | PTE_WRITE | PTE_HUGE).to_le_bytes());
        }
        img.put(pd, &table);
    }

    img.put(area.cmdline(), a.cmdline); // NUL: buffer is zeroed
    img.put(area.bootloader_name(), BOOTLOADER_NAME.as_bytes());
    // area.module_cmdline() holds "" (already zero).

    for (i, e) in a.map.entries.iter().enumerate() {
        let addr = area.mmap() + i as u64 * MMAP_ENTRY_SIZE;
        img.put32(addr, (MMAP_ENTRY_SIZE - 4) as u32);
        img.put64(addr + 4, e.base);
        img.put64(addr + 12, e.len);
        img.put32(addr + 20, e.kind);
    }

    let mbi = area.mbi();
    let mut flags = mbi_flags::MEM | mbi_flags::CMDLINE | mbi_flags::MMAP | mbi_flags::LOADER_NAME;
    if let Some(initrd) = &a.initrd {
        flags |= mbi_flags::MODS;
        // Bounds were checked below 4 GiB by the caller.
        img.put32(area.modules(), initrd.start as u32);
        img.put32(area.modules() + 4, initrd.end as u32);
        img.put32(area.modules() + 8, addr32(area.module_cmdline()));
        img.put32(mbi + 20, 1);
        img.put32(mbi + 24, addr32(area.modules()));
    }
    img.put32(mbi, flags);
    img.put32(mbi + 4, MEM_LOWER_KIB);
    img.put32(mbi + 8, a.map.mem_upper);
    img.put32(mbi + 16, addr32(area.cmdline()));
    img.put32(
        mbi + 44,
        (a.map.entries.len() as u64 * MMAP_ENTRY_SIZE) as u32,
    );
    img.put32(mbi + 48, addr32(area.mmap()));
    img.put32(mbi + 64, addr32(area.bootloader_name()));
    img.finish()
}

/// Most memory-map entries that fit the mmap slot.
pub const MMAP_MAX_ENTRIES: usize = (MMAP_CAPACITY / MMAP_ENTRY_SIZE) as usize;

#[cfg(test)]
mod tests {
    use super::*;

    fn ram(runs: &[Range<u64>]) -> Ram {
        Ram {
            runs: runs.to_vec(),
        }
    }

    #[test]
    fn memory_map_for_plain_ram_matches_qemu_shape() {
        let m = memory_map(
            &ram(&[Range {
                start: 0,
                end: 32 << 20,
            }]),
            &[],
            BootArea::DEFAULT,
        );
        let got: Vec<(u64, u64, u32)> = m.entries.iter().map(|e| (e.base, e.len, e.kind)).collect();
        assert_eq!(
            got,
            vec![
                (0, 0x9FC00, MMAP_RAM),
                (0x9FC00, 0x400, MMAP_RESERVED),
                (0xE0000, 0x20000, MMAP_RESERVED),
                (0x100000, (32 << 20) - 0x100000, MMAP_RAM),
            ]
        );
        assert_eq!(m.mem_upper, 31 * 1024);
    }

    #[test]
    fn device_ranges_above_ram_are_one_entry() {
        // trapline's holes in the shape they have: gaps between them hold
        // nothing, so the map lists one reserved entry from the first to
        // the last.
        let dev = |base: u64, len: u64| Reserved {
            base,
            len,
            name: "dev",
        };
        let r = [
            dev(0xC000_0000, 0x10_0000),
            dev(0xD000_0000, 0x2_0000),
            dev(0xE000_0000, 0x1EC0_1000),
            dev(0xFEE0_0000, 0x1000),
            dev(0xFEFF_C000, 0x4000),
        ];
        let m = memory_map(
            &ram(&[Range {
                start: 0,
                end: 128 << 20,
            }]),
            &r,
            BootArea::DEFAULT,
        );
        let got: Vec<(u64, u64, u32)> = m.entries.iter().map(|e| (e.base, e.len, e.kind)).collect();
        assert_eq!(
            got,
            vec![
                (0, 0x9FC00, MMAP_RAM),
                (0x9FC00, 0x400, MMAP_RESERVED),
                (0xE0000, 0x20000, MMAP_RESERVED),
                (0x100000, (128 << 20) - 0x100000, MMAP_RAM),
                (0xC000_0000, 0xFF00_0000 - 0xC000_0000, MMAP_RESERVED),
            ]
        );
    }

    #[test]
    fn device_ranges_with_ram_between_stay_apart() {
        let r = [
            Reserved {
                base: 0x80_0000,
                len: 0x1000,
                name: "a",
            },
            Reserved {
                base: 0x90_0000,
                len: 0x1000,
                name: "b",
            },
        ];
        let m = memory_map(
            &ram(&[Range {
                start: 0,
                end: 16 << 20,
            }]),
            &r,
            BootArea::DEFAULT,
        );
        let reserved: Vec<u64> = m
            .entries
            .iter()
            .filter(|e| e.kind == MMAP_RESERVED)
            .map(|e| e.base)
            .collect();
        assert_eq!(reserved, vec![0x9FC00, 0xE0000, 0x80_0000, 0x90_0000]);
    }

    #[test]
    fn reserved_inside_ram_cuts_ram_and_mem_upper() {
        let r = [Reserved {
            base: 0x80_0000,
            len: 0x1000,
            name: "dev",
        }];
        let m = memory_map(
            &ram(&[Range {
                start: 0,
                end: 16 << 20,
            }]),
            &r,
            BootArea::DEFAULT,
        );
        assert_eq!(m.mem_upper, (0x80_0000 - 0x10_0000) / 1024);
        assert!(m.entries.contains(&MmapEntry {
            base: 0x80_1000,
            len: (16 << 20) - 0x80_1000,
            kind: MMAP_RAM
        }));
    }

    #[test]
    fn a_moved_boot_area_is_reserved_and_cuts_mem_upper() {
        let r = ram(&[Range {
            start: 0,
            end: 16 << 20,
        }]);
        let low = BootArea::at(0x9000);
        let m = memory_map(&r, &[], low);
        let got: Vec<(u64, u64, u32)> = m.entries.iter().map(|e| (e.base, e.len, e.kind)).collect();
        assert_eq!(
            got,
            vec![
                (0, 0x9000, MMAP_RAM),
                (0x9000, BOOT_AREA_SIZE, MMAP_RESERVED),
                (0x18000, 0x9FC00 - 0x18000, MMAP_RAM),
                (0x9FC00, 0x400, MMAP_RESERVED),
                (0xE0000, 0x20000, MMAP_RESERVED),
                (0x100000, (16 << 20) - 0x100000, MMAP_RAM),
            ]
        );
        let top = BootArea::at((16 << 20) - BOOT_AREA_SIZE);
        let m = memory_map(&r, &[], top);
        assert_eq!(
            u64::from(m.mem_upper) * 1024,
            top.base() - HIGH_MEMORY_START
        );
        assert_eq!(
            m.entries.last(),
            Some(&MmapEntry {
                base: top.base(),
                len: BOOT_AREA_SIZE,
                kind: MMAP_RESERVED
            })
        );
    }
}
