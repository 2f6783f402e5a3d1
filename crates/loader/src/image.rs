//! What the loader learned about an image before loading it: its kind,
//! its PT_LOAD segments, its entry, and the boot-protocol header it carries
//! (Multiboot or a bzImage's setup header). [`crate::elf`] and
//! `linux::bzimage` each build an [`ImageInfo`]; `load`
//! places and loads from it.

use std::fmt;

use crate::ram::Span;

/// An architecture trapline runs guests for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageArch {
    /// 64-bit x86 (its guests may start in 32-bit modes).
    X86_64,
    /// 64-bit Arm.
    Aarch64,
}

impl fmt::Display for ImageArch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ImageArch::X86_64 => "x86_64",
            ImageArch::Aarch64 => "aarch64",
        })
    }
}

/// What kind of image this is, which decides how the boot vCPU starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageKind {
    /// ELF32 EM_386 ET_EXEC with a Multiboot v1 header (a kvm-unit-tests
    /// `.flat`): entered in flat 32-bit protected mode, paging off.
    Multiboot32,
    /// ELF64 EM_X86_64 ET_EXEC: entered in long mode on the loader's identity
    /// map of the first 4 GiB.
    Elf64,
    /// ELF64 with a Xen `XEN_ELFNOTE_PHYS32_ENTRY` note (Linux's `vmlinux`):
    /// entered at the note's address in flat 32-bit protected mode, paging
    /// off, EBX = an `hvm_start_info` (the PVH boot ABI).
    Pvh,
    /// A Linux bzImage (setup header "HdrS" at 0x202, boot protocol 2.06+):
    /// its protected-mode kernel is entered at its first byte (the 32-bit
    /// entry, `code32_start`) in flat 32-bit protected mode, paging off,
    /// ESI = `boot_params` (see `linux::zeropage`).
    BzImage,
}

/// One PT_LOAD program header, in physical addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadSegment {
    /// Index in the program header table (for messages).
    pub index: usize,
    /// Guest-physical load address (`p_paddr`).
    pub paddr: u64,
    /// Offset of the segment's bytes in the file (`p_offset`).
    pub offset: u64,
    /// Bytes taken from the file (`p_filesz`).
    pub filesz: u64,
    /// Bytes occupied in memory (`p_memsz`); the tail past `filesz` is zeroed.
    pub memsz: u64,
}

impl LoadSegment {
    /// One past the last guest-physical byte. `inspect` has checked
    /// that this does not overflow.
    pub fn end(&self) -> u64 {
        self.paddr.saturating_add(self.memsz)
    }

    /// The guest-physical range the segment occupies.
    pub fn span(&self) -> Span {
        Span {
            start: self.paddr,
            end: self.end(),
        }
    }
}

/// The Multiboot v1 header found in a [`ImageKind::Multiboot32`] image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MultibootHeader {
    /// File offset of the magic.
    pub offset: u64,
    /// The flags word (bits 0–2 are all the loader accepts in 0–15).
    pub flags: u32,
}

/// Everything `inspect` learned about an image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageInfo {
    /// How the image boots.
    pub kind: ImageKind,
    /// Entry point, a physical address inside a loaded segment: `e_entry`,
    /// or for [`ImageKind::Pvh`] the PVH note's 32-bit entry.
    pub entry: u64,
    /// The PT_LOAD segments in program-header order (including any with
    /// `memsz == 0`, which load nothing).
    pub segments: Vec<LoadSegment>,
    /// The Multiboot header, for [`ImageKind::Multiboot32`].
    pub multiboot: Option<MultibootHeader>,
    /// The setup header, for [`ImageKind::BzImage`].
    pub bzimage: Option<BzImageHeader>,
}

impl ImageInfo {
    /// Lowest and one-past-highest guest-physical byte the image occupies
    /// (segments with `memsz == 0` do not count). Never empty: the entry
    /// point lies in a segment with file bytes.
    pub fn span(&self) -> Span {
        segments_span(&self.segments)
    }
}

/// What `linux::bzimage::inspect` learned from a bzImage's setup
/// header, for `load` and the zero page (`linux::zeropage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BzImageHeader {
    /// Boot protocol version (`0x020f` is 2.15).
    pub version: u16,
    /// Bytes of real-mode setup code, header included: the protected-mode
    /// kernel starts at this file offset.
    pub setup_size: u64,
    /// One past the last header byte copied into `boot_params.hdr`: where the
    /// image says its header ends (`0x202 + byte at 0x201`), at least the
    /// fields its protocol version defines, at most `SETUP_HEADER_MAX_END`.
    pub header_end: u64,
    /// The longest command line the kernel takes, NUL excluded.
    pub cmdline_size: u32,
    /// The highest address the initrd may occupy.
    pub initrd_addr_max: u32,
    /// `relocatable_kernel`: the kernel runs wherever it is loaded (above
    /// its preferred address).
    pub relocatable: bool,
    /// `pref_address` (protocol 2.10+, else 0): where the kernel prefers to
    /// run; the decompressor never runs below it.
    pub pref_address: u64,
    /// `init_size` (2.10+, else 0): bytes the kernel needs from where it runs
    /// until it has read the memory map (decompression happens in there).
    pub init_size: u32,
}

/// Lowest and one-past-highest guest-physical byte `segments` occupy
/// (those with `memsz == 0` do not count); empty at 0 when none loads.
pub fn segments_span(segments: &[LoadSegment]) -> Span {
    let mut it = segments.iter().filter(|s| s.memsz > 0);
    let first = it
        .next()
        .map(|s| s.span())
        .unwrap_or(Span { start: 0, end: 0 });
    it.fold(first, |acc, s| Span {
        start: acc.start.min(s.paddr),
        end: acc.end.max(s.end()),
    })
}
