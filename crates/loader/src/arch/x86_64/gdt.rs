//! The boot GDT and its decoding into plain segment fields.
//!
//! The loader writes [`GDT`] at the boot area's [`gdt`](crate::BootArea::gdt)
//! (by default [`crate::layout::GDT_ADDR`]); the KVM code loads GDTR with
//! that base ([`crate::BootSetup::gdt`]) and [`GDT_LIMIT`] and
//! fills each `kvm_segment` from [`gdt_segment`], so the hidden segment state
//! and the table in guest memory cannot disagree (a guest that reloads a
//! selector gets what it already had). Nothing here depends on KVM types.

/// Selector of the flat 32-bit code segment (CS for Multiboot entry; QEMU
/// uses 0x08 too).
pub const SELECTOR_CODE32: u16 = 0x08;
/// Selector of the flat data segment (DS/ES/FS/GS/SS for both entry modes).
pub const SELECTOR_DATA: u16 = 0x10;
/// Selector of the 64-bit code segment (CS for ELF64 entry).
pub const SELECTOR_CODE64: u16 = 0x18;

/// The descriptors, indexed by selector >> 3. All are base 0, limit 4 GiB
/// (G=1, limit 0xFFFFF), DPL 0, present, with the accessed bit already set:
/// VMX refuses guest state whose usable code/data segments are not marked
/// accessed, and setting it here means the CPU never writes the table.
pub const GDT: [u64; 4] = [
    // 0x00: null.
    0,
    // 0x08: code, execute/read, accessed (type 0xB), S=1, D=1, G=1.
    0x00CF_9B00_0000_FFFF,
    // 0x10: data, read/write, accessed (type 0x3), S=1, B=1, G=1.
    0x00CF_9300_0000_FFFF,
    // 0x18: code, execute/read, accessed (type 0xB), S=1, L=1, D=0, G=1.
    0x00AF_9B00_0000_FFFF,
];

/// GDTR limit: size of [`GDT`] in bytes minus one.
pub const GDT_LIMIT: u16 = (GDT.len() * 8 - 1) as u16;

/// The GDT as the bytes written to guest memory.
pub fn gdt_bytes() -> [u8; GDT.len() * 8] {
    let mut out = [0u8; GDT.len() * 8];
    for (chunk, entry) in out.chunks_exact_mut(8).zip(GDT) {
        chunk.copy_from_slice(&entry.to_le_bytes());
    }
    out
}

/// A segment descriptor decoded into the fields of a segment register's
/// hidden part (the same fields as `kvm_segment`, minus `unusable`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentFields {
    /// The selector this descriptor is loaded through.
    pub selector: u16,
    /// Linear base address.
    pub base: u64,
    /// Limit in bytes (already scaled by 4 KiB when `g` is set, as
    /// `kvm_segment.limit` expects).
    pub limit: u32,
    /// The 4-bit type field (e.g. 0xB code execute/read accessed).
    pub type_: u8,
    /// Descriptor type: true for code/data, false for system.
    pub s: bool,
    /// Descriptor privilege level (0–3).
    pub dpl: u8,
    /// Present bit.
    pub present: bool,
    /// Available-for-software bit.
    pub avl: bool,
    /// 64-bit code segment.
    pub l: bool,
    /// Default operation size (1 = 32-bit) / big.
    pub db: bool,
    /// Granularity: limit counts 4 KiB units.
    pub g: bool,
}

/// Decodes a raw 8-byte descriptor. Pure bit-slicing; any value decodes.
pub fn decode_gdt_entry(selector: u16, entry: u64) -> SegmentFields {
    let bit = |n: u32| (entry >> n) & 1 == 1;
    let base = ((entry >> 16) & 0xFF_FFFF) | (((entry >> 56) & 0xFF) << 24);
    let raw_limit = ((entry & 0xFFFF) | ((entry >> 32) & 0xF_0000)) as u32;
    let g = bit(55);
    SegmentFields {
        selector,
        base,
        limit: if g {
            (raw_limit << 12) | 0xFFF
        } else {
            raw_limit
        },
        type_: ((entry >> 40) & 0xF) as u8,
        s: bit(44),
        dpl: ((entry >> 45) & 0x3) as u8,
        present: bit(47),
        avl: bit(52),
        l: bit(53),
        db: bit(54),
        g,
    }
}

/// The decoded [`GDT`] entry for `selector` (RPL and TI bits ignored), or
/// `None` for the null selector or one past the table.
pub fn gdt_segment(selector: u16) -> Option<SegmentFields> {
    let index = usize::from(selector >> 3);
    match GDT.get(index) {
        Some(&entry) if index != 0 => Some(decode_gdt_entry(selector & !0x7, entry)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code32_is_flat_32bit_code() {
        let s = gdt_segment(SELECTOR_CODE32).unwrap();
        assert_eq!((s.base, s.limit, s.type_), (0, 0xFFFF_FFFF, 0xB));
        assert!(s.s && s.present && s.db && s.g && !s.l && !s.avl);
        assert_eq!(s.dpl, 0);
        assert_eq!(s.selector, 0x08);
    }

    #[test]
    fn data_is_flat_writable() {
        let s = gdt_segment(SELECTOR_DATA).unwrap();
        assert_eq!((s.base, s.limit, s.type_), (0, 0xFFFF_FFFF, 0x3));
        assert!(s.s && s.present && s.db && s.g && !s.l);
    }

    #[test]
    fn code64_has_l_and_not_db() {
        let s = gdt_segment(SELECTOR_CODE64).unwrap();
        assert_eq!(s.type_, 0xB);
        assert!(s.l && !s.db && s.present && s.s);
    }

    #[test]
    fn null_and_out_of_range_selectors() {
        assert!(gdt_segment(0).is_none());
        assert!(gdt_segment(0x20).is_none());
        assert_eq!(gdt_segment(0x0B).unwrap().selector, 0x08);
    }

    #[test]
    fn decodes_base_limit_and_bits_from_all_fields() {
        // base 0x12345678, limit 0xABCDE byte-granular, type 0x2, S=1, DPL 3,
        // P=1, AVL=1, L=0, D/B=0, G=0.
        let e: u64 = 0x121A_F234_5678_BCDE;
        let s = decode_gdt_entry(0x2b, e);
        assert_eq!(s.base, 0x1234_5678);
        assert_eq!(s.limit, 0xABCDE);
        assert_eq!((s.type_, s.dpl), (0x2, 3));
        assert!(s.s && s.present && s.avl && !s.l && !s.db && !s.g);
    }

    #[test]
    fn bytes_are_little_endian_entries() {
        let b = gdt_bytes();
        assert_eq!(b.len(), usize::from(GDT_LIMIT) + 1);
        assert_eq!(&b[8..16], &GDT[1].to_le_bytes());
    }
}
