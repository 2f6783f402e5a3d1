//! The one error type of the loader.
//!
//! Every message names the offending thing (which header, which segment, which
//! range) and, where there is one, what the user can do about it: the loader's
//! errors end up in front of someone who typed `trapline run foo.flat`, not in
//! front of the person who wrote the ELF parser.

use std::fmt;

use thiserror::Error;

use crate::image::ImageArch;
use crate::ram::Span;

/// Why an image could not be inspected or loaded.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The image file is empty.
    #[error(
        "the guest image is empty (0 bytes): pass an ELF executable such as a kvm-unit-tests .flat"
    )]
    Empty,

    /// The image ends before a header that must be there.
    #[error("the guest image is truncated: it is {len} bytes but its {what} needs {need} bytes")]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Bytes needed.
        need: u64,
        /// Bytes in the file.
        len: u64,
    },

    /// A file often passed as a kernel by mistake, named for what it is
    /// (a compressed file, an initramfs) on x86.
    #[error("the guest image is {what}, not a kernel trapline can boot: {hint}")]
    NotAKernel {
        /// What the file is, in words.
        what: &'static str,
        /// What to do instead.
        hint: &'static str,
    },

    /// The image does not start with `\x7fELF`.
    #[error("the guest image is not an ELF file (it does not start with \\x7fELF): trapline boots a Multiboot ELF32 (a kvm-unit-tests .flat), an ELF64, a Linux vmlinux through its PVH note, or a Linux bzImage (boot_flag 0xAA55 at 0x1FE, \"HdrS\" at 0x202); raw binaries are not supported")]
    NotElf,

    /// A Linux bzImage whose boot protocol is older than trapline supports.
    #[error("the guest image is a Linux bzImage with boot protocol {major}.{minor:02}; trapline needs 2.06 or newer (Linux 2.6.22+, which states its command-line limit): boot a newer kernel, or its vmlinux through the PVH entry")]
    BzImageTooOld {
        /// Boot protocol major version.
        major: u8,
        /// Boot protocol minor version.
        minor: u8,
    },

    /// A Linux bzImage whose setup header trapline cannot honour.
    #[error("the guest image is a Linux bzImage, but {reason}")]
    BadBzImage {
        /// What is wrong, and what to do about it.
        reason: String,
    },

    /// The initrd would end above the highest address the bzImage accepts.
    #[error("{what} would end at {end:#x}, above the kernel's initrd_addr_max {max:#x}: use a smaller initrd (it goes page-aligned right after the kernel and the space it decompresses into)")]
    InitrdAboveAddrMax {
        /// The initrd and where it would go.
        what: String,
        /// Its exclusive end.
        end: u64,
        /// The header's `initrd_addr_max` (the highest byte allowed).
        max: u64,
    },

    /// `EI_CLASS` is neither ELFCLASS32 nor ELFCLASS64.
    #[error("the guest image has ELF class {0} (EI_CLASS); expected 1 (ELF32) or 2 (ELF64)")]
    BadClass(u8),

    /// `EI_DATA` is not little-endian.
    #[error("the guest image is not little-endian (EI_DATA = {0}); trapline loads ELFDATA2LSB (1) images")]
    NotLittleEndian(u8),

    /// `e_machine` does not match the class.
    #[error("the guest image is an ELF{bits} file for machine {machine} (e_machine); trapline boots {expected}")]
    WrongMachine {
        /// 32 or 64.
        bits: u8,
        /// The `e_machine` found.
        machine: u16,
        /// What this architecture's loader boots.
        expected: &'static str,
    },

    /// The image is for the other architecture.
    #[error("the guest image is {what}, an image for {image_arch}, but this machine runs {machine_arch} guests: run it with trapline on an {image_arch} host, or build it for {machine_arch}")]
    WrongArchitecture {
        /// The image's format, in words.
        what: &'static str,
        /// The architecture it is for.
        image_arch: ImageArch,
        /// The architecture the loader was asked to load for.
        machine_arch: ImageArch,
    },

    /// A compressed kernel, which trapline does not decompress.
    #[error("the guest image is {what}; trapline loads uncompressed images: decompress it first (a gzip'ed arm64 vmlinuz: `zcat vmlinuz > Image`), or use the kernel build's arch/arm64/boot/Image")]
    Compressed {
        /// The compression format, in words.
        what: &'static str,
    },

    /// An arm64 Linux `Image` whose header trapline cannot honour.
    #[error("the guest image is an arm64 Linux Image, but {reason}")]
    BadArm64Image {
        /// What is wrong, and what to do about it.
        reason: String,
    },

    /// Something would lie (partly) outside guest RAM, below it or in a hole
    /// (arm64: RAM starts at 1 GiB, devices live below it).
    #[error("{what} ({range}) is outside guest RAM ({ram}): link or place it inside RAM")]
    OutsideRam {
        /// What was being placed.
        what: String,
        /// Where it would go.
        range: Span,
        /// The RAM range it should be in.
        ram: Span,
    },

    /// No RAM is left above the image (and initrd) for the device tree.
    #[error("no room is left for the device tree above {what} (it goes 2 MiB-aligned at {dtb:#x}; RAM ends at {ram_end:#x}): give the VM more memory with --mem (at least {need_mib})")]
    NoRoomForDeviceTree {
        /// What the device tree goes above.
        what: &'static str,
        /// Where the device tree would start.
        dtb: u64,
        /// One past the last byte of RAM.
        ram_end: u64,
        /// RAM needed.
        need_mib: Mib,
    },

    /// The device tree the machine built is larger than its room.
    #[error("the device tree is {len} bytes; at most {room} fit at {dtb:#x} (arm64 Linux takes at most 2 MiB, and RAM ends after that room)")]
    DeviceTreeTooLarge {
        /// Its size.
        len: u64,
        /// The room the plan left.
        room: u64,
        /// Where it goes.
        dtb: u64,
    },

    /// `e_type` is not ET_EXEC.
    #[error("the guest image has ELF type {0} (e_type); trapline loads only ET_EXEC (2) executables linked at fixed physical addresses")]
    NotExecutable(u16),

    /// `e_phentsize` is not the size of a program header of this class.
    #[error("the guest image's program headers are {got} bytes each (e_phentsize); ELF{bits} needs {expected}")]
    BadPhentsize {
        /// 32 or 64.
        bits: u8,
        /// The `e_phentsize` found.
        got: u16,
        /// The size of `Elf32_Phdr`/`Elf64_Phdr`.
        expected: u16,
    },

    /// `e_phnum` is PN_XNUM (extended numbering through section header 0).
    #[error("the guest image uses extended program header numbering (e_phnum = 0xffff); trapline supports at most 65534 program headers")]
    ExtendedPhnum,

    /// The program header table does not lie inside the file.
    #[error("the guest image's program header table ({phnum} entries of {phentsize} bytes at file offset {phoff:#x}) does not fit in the {len}-byte file: the file is truncated or corrupt")]
    PhdrTableOutOfFile {
        /// `e_phoff`.
        phoff: u64,
        /// `e_phnum`.
        phnum: u16,
        /// `e_phentsize`.
        phentsize: u16,
        /// File length.
        len: u64,
    },

    /// The program header table overlaps the ELF header.
    #[error("the guest image's program header table starts at file offset {phoff:#x}, inside the {ehsize}-byte ELF header: the file is corrupt")]
    PhdrTableInHeader {
        /// `e_phoff`.
        phoff: u64,
        /// Size of the ELF header of this class.
        ehsize: u64,
    },

    /// A PT_LOAD's file bytes lie (partly) outside the file.
    #[error("PT_LOAD segment {index}: its {filesz:#x} file bytes at offset {offset:#x} run past the end of the {len}-byte file: the file is truncated or corrupt")]
    SegmentOutOfFile {
        /// Index in the program header table.
        index: usize,
        /// `p_offset`.
        offset: u64,
        /// `p_filesz`.
        filesz: u64,
        /// File length.
        len: u64,
    },

    /// A PT_LOAD has more file bytes than memory bytes.
    #[error("PT_LOAD segment {index}: p_filesz {filesz:#x} is larger than p_memsz {memsz:#x}: the file is corrupt")]
    FileszExceedsMemsz {
        /// Index in the program header table.
        index: usize,
        /// `p_filesz`.
        filesz: u64,
        /// `p_memsz`.
        memsz: u64,
    },

    /// `p_paddr + p_memsz` wraps around the address space of the class.
    #[error("PT_LOAD segment {index}: p_paddr {paddr:#x} + p_memsz {memsz:#x} overflows the {bits}-bit physical address space")]
    SegmentAddressOverflow {
        /// Index in the program header table.
        index: usize,
        /// `p_paddr`.
        paddr: u64,
        /// `p_memsz`.
        memsz: u64,
        /// 32 or 64.
        bits: u8,
    },

    /// Two PT_LOAD segments claim the same guest-physical bytes.
    #[error("PT_LOAD segments {first} ({first_range}) and {second} ({second_range}) overlap in physical memory: the image is corrupt or not linked for physical loading")]
    OverlappingSegments {
        /// Lower-addressed segment's index.
        first: usize,
        /// Its range.
        first_range: Span,
        /// The other segment's index.
        second: usize,
        /// Its range.
        second_range: Span,
    },

    /// An ELF64 PT_NOTE segment is malformed.
    #[error("PT_NOTE segment {index} is malformed: {reason}: the file is truncated or corrupt")]
    BadNote {
        /// Index in the program header table.
        index: usize,
        /// What is wrong.
        reason: String,
    },

    /// No PT_LOAD program header at all.
    #[error("the guest image has no PT_LOAD program header, so there is nothing to load")]
    NoLoadSegment,

    /// `e_entry` is not inside the file-backed part of any PT_LOAD.
    #[error("the entry point {entry:#x} (e_entry) is not inside the loaded bytes of any PT_LOAD segment (physical addresses): the image would start executing garbage")]
    EntryOutsideSegments {
        /// `e_entry`.
        entry: u64,
    },

    /// ELF32 without a (valid) Multiboot v1 header.
    #[error("the guest image is ELF32 but has no Multiboot v1 header (magic 0x1badb002, 4-byte aligned, in the first 8 KiB): trapline boots ELF32 images only as Multiboot kernels; link it with a Multiboot header or build it as ELF64")]
    Elf32WithoutMultiboot,

    /// A Multiboot magic was found but its checksum is wrong.
    #[error("the Multiboot header at file offset {offset:#x} has a bad checksum (magic + flags + checksum must be 0 mod 2^32; flags {flags:#x}, checksum {checksum:#x}): the image is corrupt")]
    MultibootBadChecksum {
        /// File offset of the header.
        offset: u64,
        /// Its flags word.
        flags: u32,
        /// Its checksum word.
        checksum: u32,
    },

    /// The Multiboot header asks for a mandatory feature we do not provide.
    #[error("the Multiboot header (flags {flags:#x}) requires feature bit {bit}, which trapline cannot honour (it provides bit 0 page-aligned modules and bit 1 memory information, and ignores bit 2 video mode as QEMU does)")]
    MultibootUnsupportedFlag {
        /// The lowest unsupported bit in 0–15.
        bit: u32,
        /// The whole flags word.
        flags: u32,
    },

    /// The Multiboot header uses the a.out kludge (flags bit 16).
    #[error("the Multiboot header (flags {flags:#x}) sets bit 16 (a.out kludge: load addresses in the header); trapline loads Multiboot kernels from their ELF program headers only: relink without the kludge")]
    MultibootAoutKludge {
        /// The whole flags word.
        flags: u32,
    },

    /// An ELF64 entry point the loader's identity map does not cover.
    #[error("the ELF64 entry point {entry:#x} is above 4 GiB; trapline starts ELF64 images with an identity map of the first 4 GiB only")]
    EntryNotIdentityMapped {
        /// `e_entry`.
        entry: u64,
    },

    /// Guest RAM does not cover the first megabyte.
    #[error("guest RAM must be one contiguous range from address 0 to at least 1 MiB (the boot structures and the low-memory map live there); RAM starts {found}")]
    NoLowRam {
        /// Description of what was found.
        found: String,
    },

    /// Something would end past the top of guest RAM.
    #[error("{what} ends at {end_mib} ({end:#x}), beyond the {ram_mib} of guest RAM: give the VM more memory with --mem (it needs at least {need_mib})")]
    BeyondRam {
        /// What was being placed.
        what: String,
        /// Its exclusive end address.
        end: u64,
        /// `end` in MiB from the start of RAM, for humans.
        end_mib: Mib,
        /// RAM size.
        ram_mib: Mib,
        /// RAM needed, rounded up to a MiB.
        need_mib: Mib,
    },

    /// Something would land in a hole of guest RAM.
    #[error(
        "{what} is not backed by guest RAM at {addr:#x} (a hole in the guest-physical memory map)"
    )]
    NotInRam {
        /// What was being placed.
        what: String,
        /// First address not in RAM.
        addr: u64,
    },

    /// Something would overlap a device range owned by the machine.
    #[error("{what} overlaps the {name} range {range}, which the machine reserves for a device")]
    OverlapsReserved {
        /// What was being placed.
        what: String,
        /// The reserved range's name.
        name: &'static str,
        /// The reserved range.
        range: Span,
    },

    /// Something would overlap the PC firmware area below 1 MiB.
    #[error("{what} overlaps {area} {range}, which a PC keeps for firmware data (reported reserved, or absent, in the memory map): link the image elsewhere in RAM, below {ebda:#x} or at 1 MiB or above")]
    OverlapsFirmwareArea {
        /// What was being placed.
        what: String,
        /// Name of the area.
        area: &'static str,
        /// The area.
        range: Span,
        /// Where the area starts (the highest end a low image may have).
        ebda: u64,
    },

    /// Image, initrd and device ranges leave no free RAM for the boot area.
    #[error("no free {} KiB page-aligned range of guest RAM below 4 GiB is left for trapline's boot structures (GDT, page tables, Multiboot info, memory map, command line, boot stack) once the image, the initrd and the device ranges are placed in the {ram_mib} of RAM: give the VM more memory with --mem", .size / 1024)]
    NoRoomForBootStructures {
        /// Bytes the boot area needs.
        size: u64,
        /// RAM size.
        ram_mib: Mib,
    },

    /// The initrd would not be addressable by 32-bit Multiboot module fields.
    #[error("{what} would end above 4 GiB; Multiboot module addresses are 32-bit")]
    InitrdAbove4GiB {
        /// The initrd and where it would go.
        what: String,
    },

    /// The command line does not fit its slot in low memory.
    #[error("the guest command line is {len} bytes; at most {max} fit (it is copied to its slot among the boot structures)")]
    CmdlineTooLong {
        /// Its length in bytes.
        len: usize,
        /// The maximum.
        max: usize,
    },

    /// The command line contains a NUL byte, which would silently cut it.
    #[error("the guest command line contains a NUL byte, which would cut it short in the guest: remove it")]
    CmdlineNul,

    /// Too many memory map entries for the mmap slot.
    #[error("the Multiboot memory map would need {entries} entries; at most {max} fit: the machine reserves too many separate ranges")]
    TooManyMmapEntries {
        /// Entries needed.
        entries: usize,
        /// Capacity.
        max: usize,
    },

    /// linux-loader refused the ELF64 image after our own checks passed.
    #[error("linux-loader could not copy the ELF64 image into guest memory: {0}")]
    Elf64Copy(#[source] linux_loader::loader::Error),

    /// A guest-memory access failed (cannot happen after the placement checks
    /// unless the memory map changed under us; kept so nothing panics).
    #[error("writing {what} to guest memory at {addr:#x} failed: {source}")]
    GuestMemory {
        /// What was being written.
        what: &'static str,
        /// Where.
        addr: u64,
        /// vm-memory's error.
        #[source]
        source: vm_memory::GuestMemoryError,
    },
}

/// A byte count shown in MiB: whole MiB print as `8 MiB`, others with one
/// decimal (`16.4 MiB`), or three when one would round to a whole number and
/// hide the difference (`8.004 MiB`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mib(pub u64);

impl fmt::Display for Mib {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const MIB: u64 = 1 << 20;
        if self.0 & (MIB - 1) == 0 {
            return write!(f, "{} MiB", self.0 / MIB);
        }
        let v = self.0 as f64 / MIB as f64;
        let one = format!("{v:.1}");
        if one.ends_with(".0") {
            write!(f, "{v:.3} MiB")
        } else {
            write!(f, "{one} MiB")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mib_formatting() {
        assert_eq!(Mib(8 << 20).to_string(), "8 MiB");
        assert_eq!(Mib(0x106_0000).to_string(), "16.4 MiB");
        assert_eq!(Mib((8 << 20) + 4096).to_string(), "8.004 MiB");
        assert_eq!(Mib(512 << 10).to_string(), "0.5 MiB");
    }
}
