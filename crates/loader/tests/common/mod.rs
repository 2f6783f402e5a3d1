//! A tiny ELF writer for the loader tests: just enough ELF32/ELF64 to build
//! valid images and then break them one field at a time.

#![allow(dead_code)]

use vm_memory::{Bytes, GuestAddress, GuestMemoryMmap};

pub const PT_LOAD: u32 = 1;
pub const PT_NOTE: u32 = 4;
pub const EM_386: u16 = 3;
pub const EM_X86_64: u16 = 62;
pub const MB_MAGIC: u32 = 0x1BAD_B002;

/// One program header and the file bytes behind it.
#[derive(Clone)]
pub struct Seg {
    pub p_type: u32,
    pub paddr: u64,
    pub data: Vec<u8>,
    pub memsz: u64,
}

impl Seg {
    pub fn load(paddr: u64, data: Vec<u8>, memsz: u64) -> Seg {
        Seg {
            p_type: PT_LOAD,
            paddr,
            data,
            memsz,
        }
    }
}

#[derive(Clone)]
pub struct ElfBuilder {
    pub class64: bool,
    pub machine: u16,
    pub e_type: u16,
    pub entry: u64,
    pub segs: Vec<Seg>,
}

/// Deterministic, recognisable filler bytes.
pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(7).wrapping_add(seed) | 1)
        .collect()
}

pub fn multiboot_header(flags: u32) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&MB_MAGIC.to_le_bytes());
    v.extend_from_slice(&flags.to_le_bytes());
    v.extend_from_slice(
        &0u32
            .wrapping_sub(MB_MAGIC)
            .wrapping_sub(flags)
            .to_le_bytes(),
    );
    v
}

/// Bytes between the end of the program header table and the first segment:
/// keeps segment data 16-byte aligned (so the Multiboot header is 4-aligned).
fn align16(v: usize) -> usize {
    (v + 15) & !15
}

impl ElfBuilder {
    pub fn ehsize(&self) -> usize {
        if self.class64 {
            64
        } else {
            52
        }
    }
    pub fn phentsize(&self) -> usize {
        if self.class64 {
            56
        } else {
            32
        }
    }
    /// File offset of program header `i`.
    pub fn phdr_off(&self, i: usize) -> usize {
        self.ehsize() + i * self.phentsize()
    }
    /// File offset where segment `i`'s bytes start.
    pub fn data_off(&self, i: usize) -> usize {
        let mut off = align16(self.phdr_off(self.segs.len()));
        for s in &self.segs[..i] {
            off = align16(off + s.data.len());
        }
        off
    }

    pub fn build(&self) -> Vec<u8> {
        let n = self.segs.len();
        let total = if n == 0 {
            self.ehsize()
        } else {
            self.data_off(n - 1) + self.segs[n - 1].data.len()
        };
        let mut f = vec![0u8; total];
        f[0..4].copy_from_slice(b"\x7fELF");
        f[4] = if self.class64 { 2 } else { 1 };
        f[5] = 1; // little endian
        f[6] = 1; // EV_CURRENT
        put16(&mut f, 16, self.e_type);
        put16(&mut f, 18, self.machine);
        put32(&mut f, 20, 1);
        let phoff = self.ehsize() as u64;
        if self.class64 {
            put64(&mut f, 24, self.entry);
            put64(&mut f, 32, phoff);
            put16(&mut f, 52, 64);
            put16(&mut f, 54, 56);
            put16(&mut f, 56, n as u16);
        } else {
            put32(&mut f, 24, self.entry as u32);
            put32(&mut f, 28, phoff as u32);
            put16(&mut f, 40, 52);
            put16(&mut f, 42, 32);
            put16(&mut f, 44, n as u16);
        }
        for (i, s) in self.segs.iter().enumerate() {
            let ph = self.phdr_off(i);
            let off = self.data_off(i);
            f[off..off + s.data.len()].copy_from_slice(&s.data);
            let filesz = s.data.len() as u64;
            if self.class64 {
                put32(&mut f, ph, s.p_type);
                put32(&mut f, ph + 4, 7);
                put64(&mut f, ph + 8, off as u64);
                put64(&mut f, ph + 16, s.paddr);
                put64(&mut f, ph + 24, s.paddr);
                put64(&mut f, ph + 32, filesz);
                put64(&mut f, ph + 40, s.memsz);
                put64(&mut f, ph + 48, 0x1000);
            } else {
                put32(&mut f, ph, s.p_type);
                put32(&mut f, ph + 4, off as u32);
                put32(&mut f, ph + 8, s.paddr as u32);
                put32(&mut f, ph + 12, s.paddr as u32);
                put32(&mut f, ph + 16, filesz as u32);
                put32(&mut f, ph + 20, s.memsz as u32);
                put32(&mut f, ph + 24, 7);
                put32(&mut f, ph + 28, 0x1000);
            }
        }
        f
    }
}

pub const MB_TEXT: u64 = 0x10_0000;
pub const MB_DATA: u64 = 0x10_2000;
pub const MB_BSS: u64 = 0x4_0000;

/// A Multiboot ELF32 like a small kvm-unit-tests `.flat`: text at 1 MiB
/// starting with the Multiboot header, entry right after it; data + BSS.
pub fn multiboot_builder(flags: u32) -> ElfBuilder {
    let mut text = multiboot_header(flags);
    text.extend(pattern(0x1F4, 0x11));
    ElfBuilder {
        class64: false,
        machine: EM_386,
        e_type: 2,
        entry: MB_TEXT + 12,
        segs: vec![
            Seg::load(MB_TEXT, text, 0x200),
            Seg::load(MB_DATA, pattern(0x80, 0x22), MB_BSS),
        ],
    }
}

pub fn multiboot_image() -> Vec<u8> {
    multiboot_builder(0).build()
}

pub const E64_TEXT: u64 = 0x20_0000;
pub const E64_DATA: u64 = 0x20_1000;
pub const E64_BSS: u64 = 0x2_0000;

pub fn elf64_builder() -> ElfBuilder {
    ElfBuilder {
        class64: true,
        machine: EM_X86_64,
        e_type: 2,
        entry: E64_TEXT + 0x10,
        segs: vec![
            Seg::load(E64_TEXT, pattern(0x300, 0x33), 0x300),
            Seg::load(E64_DATA, pattern(0x40, 0x44), E64_BSS),
        ],
    }
}

pub fn elf64_image() -> Vec<u8> {
    elf64_builder().build()
}

pub fn put16(f: &mut [u8], off: usize, v: u16) {
    f[off..off + 2].copy_from_slice(&v.to_le_bytes());
}
pub fn put32(f: &mut [u8], off: usize, v: u32) {
    f[off..off + 4].copy_from_slice(&v.to_le_bytes());
}
pub fn put64(f: &mut [u8], off: usize, v: u64) {
    f[off..off + 8].copy_from_slice(&v.to_le_bytes());
}

pub fn guest_mem(bytes: usize) -> GuestMemoryMmap {
    GuestMemoryMmap::from_ranges(&[(GuestAddress(0), bytes)]).unwrap()
}

pub fn rd32(mem: &GuestMemoryMmap, addr: u64) -> u32 {
    mem.read_obj::<u32>(GuestAddress(addr)).unwrap()
}
pub fn rd64(mem: &GuestMemoryMmap, addr: u64) -> u64 {
    mem.read_obj::<u64>(GuestAddress(addr)).unwrap()
}
pub fn rd_bytes(mem: &GuestMemoryMmap, addr: u64, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    mem.read_slice(&mut v, GuestAddress(addr)).unwrap();
    v
}
pub fn rd_cstr(mem: &GuestMemoryMmap, addr: u64) -> String {
    let mut out = Vec::new();
    let mut a = addr;
    loop {
        let b: u8 = mem.read_obj(GuestAddress(a)).unwrap();
        if b == 0 {
            break;
        }
        out.push(b);
        a += 1;
    }
    String::from_utf8(out).unwrap()
}
pub fn fill(mem: &GuestMemoryMmap, addr: u64, len: usize, byte: u8) {
    mem.write_slice(&vec![byte; len], GuestAddress(addr))
        .unwrap();
}

/// Memory map entries as kvm-unit-tests walks them: next at `+size+4`.
pub fn read_mmap(mem: &GuestMemoryMmap, addr: u64, len: u32) -> Vec<(u64, u64, u32)> {
    let mut out = Vec::new();
    let mut a = addr;
    while a < addr + u64::from(len) {
        let size = rd32(mem, a);
        out.push((rd64(mem, a + 4), rd64(mem, a + 12), rd32(mem, a + 20)));
        a += u64::from(size) + 4;
    }
    out
}

/// One ELF note (name and descriptor already padded by the caller).
pub fn note(namesz: u32, descsz: u32, n_type: u32, name: &[u8], desc: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&namesz.to_le_bytes());
    v.extend_from_slice(&descsz.to_le_bytes());
    v.extend_from_slice(&n_type.to_le_bytes());
    v.extend_from_slice(name);
    v.extend_from_slice(desc);
    v
}

/// The ELF64 test image with a Xen PVH entry note (`XEN_ELFNOTE_PHYS32_ENTRY`,
/// type 18) pointing at `entry`, like a Linux `vmlinux`.
pub fn pvh_image(entry: u32) -> Vec<u8> {
    let mut b = elf64_builder();
    let mut n = note(4, 4, 1, b"GNU\0", &[0; 4]);
    n.extend(note(4, 4, 18, b"Xen\0", &entry.to_le_bytes()));
    b.segs.push(Seg {
        p_type: PT_NOTE,
        paddr: 0,
        data: n,
        memsz: 0,
    });
    b.build()
}
