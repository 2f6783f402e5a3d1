//! Mutation fuzzing: random byte flips, field smashes and truncations of valid
//! images must make `inspect` and `load` return (Ok or Err), never panic.
//! Deterministic (fixed seeds) so a failure reproduces.

#![cfg(target_arch = "x86_64")] // the x86 boot protocols; arm64: tests/arm64.rs

mod common;

use common::*;
use trapline_loader::*;

/// xorshift64*: tiny, deterministic, good enough to pick bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Values that tend to hit edge cases when written over a header field.
const INTERESTING: [u64; 10] = [
    0,
    1,
    0x7F,
    0xFFFF,
    0x7FFF_FFFF,
    0xFFFF_FFFF,
    0x1_0000_0000,
    0x10_0000,
    u64::MAX,
    u64::MAX - 0xFFF,
];

fn mutate(rng: &mut Rng, base: &[u8]) -> Vec<u8> {
    let mut img = base.to_vec();
    for _ in 0..1 + rng.below(6) {
        if img.is_empty() {
            break;
        }
        // Headers are where the parsing happens: aim there most of the time.
        let hot = img.len().min(0x200);
        let pos = if rng.below(4) == 0 {
            rng.below(img.len())
        } else {
            rng.below(hot)
        };
        match rng.below(5) {
            0 => img[pos] = rng.next() as u8,
            1 => img[pos] ^= 1 << rng.below(8),
            2 => {
                let v = INTERESTING[rng.below(INTERESTING.len())].to_le_bytes();
                let width = [1usize, 2, 4, 8][rng.below(4)];
                for (i, b) in v.iter().take(width).enumerate() {
                    if let Some(slot) = img.get_mut(pos + i) {
                        *slot = *b;
                    }
                }
            }
            3 => {
                let v = (rng.next() as u32).to_le_bytes();
                for (i, b) in v.iter().enumerate() {
                    if let Some(slot) = img.get_mut(pos + i) {
                        *slot = *b;
                    }
                }
            }
            _ => img.truncate(rng.below(img.len() + 1)),
        }
    }
    img
}

fn seeds() -> Vec<Vec<u8>> {
    let mut with_note = elf64_builder();
    // A PT_NOTE segment, so linux-loader's note parser sees mutated notes too.
    let mut note = Vec::new();
    note.extend_from_slice(&4u32.to_le_bytes()); // namesz
    note.extend_from_slice(&4u32.to_le_bytes()); // descsz
    note.extend_from_slice(&18u32.to_le_bytes()); // XEN_ELFNOTE_PHYS32_ENTRY
    note.extend_from_slice(b"Xen\0");
    note.extend_from_slice(&0x20_0010u32.to_le_bytes());
    with_note.segs.push(Seg {
        p_type: PT_NOTE,
        paddr: 0,
        data: note,
        memsz: 0,
    });
    vec![
        multiboot_image(),
        multiboot_builder(3).build(),
        elf64_image(),
        with_note.build(),
    ]
}

#[test]
fn inspect_never_panics_on_mutated_images() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let seeds = seeds();
    let mut accepted = 0;
    for i in 0..40_000 {
        let img = mutate(&mut rng, &seeds[i % seeds.len()]);
        if inspect(&img).is_ok() {
            accepted += 1;
        }
    }
    // Sanity: the mutator does not destroy everything (it flips, not wipes).
    assert!(accepted > 100, "only {accepted} mutated images parsed");
}

#[test]
fn load_never_panics_on_mutated_images() {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let seeds = seeds();
    // Small RAM keeps each load cheap (a mutated memsz can ask for all of it).
    let mem = guest_mem(3 << 20);
    let initrd = vec![0x5Au8; 0x3000];
    let reserved = [Reserved {
        base: 0x2C_0000,
        len: 0x1000,
        name: "dev",
    }];
    let mut loaded = 0;
    for i in 0..20_000 {
        let img = mutate(&mut rng, &seeds[i % seeds.len()]);
        let ok = load(
            &mem,
            &LoadRequest {
                fresh_memory: false,
                rsdp: None,
                image: &img,
                image_name: "fuzz.flat",
                append: "a b c",
                initrd: if i % 2 == 0 { Some(&initrd) } else { None },
                reserved: &reserved,
            },
        );
        match ok {
            Ok(setup) => {
                loaded += 1;
                // Whatever got through must be consistent with inspect.
                let info = inspect(&img).unwrap();
                assert_eq!(setup.kind, info.kind);
                assert!(setup.image.end <= 3 << 20);
            }
            // inspect() is meant to catch everything wrong with the image
            // itself, so the copy step (ours or linux-loader's) never fails.
            Err(e @ (LoadError::Elf64Copy(_) | LoadError::GuestMemory { .. })) => {
                panic!("iteration {i}: load failed after its checks passed: {e}")
            }
            Err(_) => {}
        }
    }
    assert!(loaded > 100, "only {loaded} mutated images loaded");
}

#[test]
fn every_truncation_of_valid_images_is_handled() {
    let mem = guest_mem(4 << 20);
    for seed in seeds() {
        for len in 0..seed.len() {
            let img = &seed[..len];
            let a = inspect(img);
            let b = load(
                &mem,
                &LoadRequest {
                    fresh_memory: false,
                    rsdp: None,
                    image: img,
                    image_name: "t",
                    append: "",
                    initrd: None,
                    reserved: &[],
                },
            );
            assert_eq!(a.is_ok(), b.is_ok(), "len {len}");
        }
    }
}
