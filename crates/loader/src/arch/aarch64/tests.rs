//! The placement arithmetic on its own; loading real and broken images is
//! in `tests/arm64.rs`.

use super::*;

const MIB: u64 = 1 << 20;

fn run(mib: u64) -> Range<u64> {
    VIRT_RAM_BASE..VIRT_RAM_BASE + mib * MIB
}

#[test]
fn without_initrd_the_dtb_goes_where_qemu_puts_it() {
    // 128 MiB: RAM / 2 = 64 MiB; 1 GiB: capped at 128 MiB.
    let (initrd, dtb, room) = place_initrd_and_dtb(&run(128), VIRT_RAM_BASE + MIB, None).unwrap();
    assert_eq!(initrd, None);
    assert_eq!((dtb, room), (VIRT_RAM_BASE + 64 * MIB, DTB_MAX_LEN));
    let (_, dtb, _) = place_initrd_and_dtb(&run(1024), VIRT_RAM_BASE + MIB, None).unwrap();
    assert_eq!(dtb, VIRT_RAM_BASE + 128 * MIB);
}

#[test]
fn the_initrd_goes_first_and_the_dtb_2mib_aligned_after_it() {
    let (initrd, dtb, _) =
        place_initrd_and_dtb(&run(128), VIRT_RAM_BASE + MIB, Some(0x1234)).unwrap();
    let start = VIRT_RAM_BASE + 64 * MIB;
    assert_eq!(initrd, Some(start..start + 0x1234));
    assert_eq!(dtb, start + 2 * MIB);
}

#[test]
fn a_large_image_pushes_both_above_its_end() {
    let end = VIRT_RAM_BASE + 70 * MIB + 5;
    let (initrd, dtb, _) = place_initrd_and_dtb(&run(128), end, Some(10)).unwrap();
    let start = align_up(end, INITRD_ALIGN);
    assert_eq!(initrd, Some(start..start + 10));
    assert_eq!(dtb, VIRT_RAM_BASE + 72 * MIB);
    assert_eq!(dtb % DTB_ALIGN, 0);
}

#[test]
fn the_room_shrinks_at_the_end_of_ram_and_none_left_is_an_error() {
    // 3 MiB of RAM: the DTB goes at +2 MiB with 1 MiB of room.
    let (_, dtb, room) = place_initrd_and_dtb(&run(3), VIRT_RAM_BASE + 0x1000, None).unwrap();
    assert_eq!((dtb, room), (VIRT_RAM_BASE + 2 * MIB, MIB));
    let e = place_initrd_and_dtb(&run(4), VIRT_RAM_BASE + 3 * MIB, None).unwrap_err();
    assert!(matches!(e, LoadError::NoRoomForDeviceTree { .. }), "{e}");
    assert!(e.to_string().contains("--mem"), "{e}");
    let e = place_initrd_and_dtb(&run(4), VIRT_RAM_BASE + MIB, Some(4 * MIB)).unwrap_err();
    assert!(matches!(e, LoadError::BeyondRam { .. }), "{e}");
    assert!(e.to_string().contains("initrd"), "{e}");
}
