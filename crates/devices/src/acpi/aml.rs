//! The few bytes of AML the DSDT needs: named packages of integers, and
//! for the hardware-reduced machine one device with an ID and a resource
//! template. Encodings from the ACPI spec, section 20 (AML grammar), and
//! 6.4 (resource descriptors).

/// NameOp: `Name(NameString, DataRefObject)`.
const NAME_OP: u8 = 0x08;
/// PackageOp: `Package(PkgLength NumElements PackageElementList)`.
const PACKAGE_OP: u8 = 0x12;
/// Constant integers with one-byte encodings.
const ZERO_OP: u8 = 0x00;
const ONE_OP: u8 = 0x01;
/// BytePrefix: an 8-bit integer follows.
const BYTE_PREFIX: u8 = 0x0A;
/// StringPrefix: a NUL-terminated ASCII string follows.
const STRING_PREFIX: u8 = 0x0D;
/// DWordPrefix: a 32-bit integer follows.
const DWORD_PREFIX: u8 = 0x0C;
/// BufferOp: `Buffer(PkgLength BufferSize ByteList)`.
const BUFFER_OP: u8 = 0x11;
/// ExtOpPrefix, DeviceOp: `Device(PkgLength NameString TermList)`.
const DEVICE_OP: [u8; 2] = [0x5B, 0x82];
/// Small resource: I/O port descriptor (type 0x08, 7 bytes of data).
const RES_IO: [u8; 1] = [0x47];
/// I/O descriptor information: the device decodes 16 address bits.
const RES_IO_DECODE16: u8 = 1;
/// Large resource: 32-bit fixed memory range descriptor (type 0x06).
const RES_MEM32_FIXED: u8 = 0x86;
/// Memory range information: read/write.
const RES_MEM_READ_WRITE: u8 = 1;
/// Large resource: extended interrupt descriptor (type 0x09).
const RES_EXT_IRQ: u8 = 0x89;
/// Extended interrupt flags: consumer (bit 0), edge triggered (bit 1),
/// active high (bit 2 clear), exclusive (bit 3 clear).
const RES_EXT_IRQ_CONSUMER_EDGE_HIGH: u8 = 0b0011;
/// End tag; a checksum byte of 0 means "not checked".
const RES_END: [u8; 2] = [0x79, 0x00];
/// The longest PkgLength the one-byte encoding can express (6 bits).
const PKG_LENGTH_ONE_BYTE_MAX: usize = 0x3F;
/// The longest PkgLength the 2-byte encoding can express (4 + 8 bits).
const PKG_LENGTH_TWO_BYTE_MAX: usize = 0xFFF;

/// Encode a small integer as a ComputationalData term.
fn integer(out: &mut Vec<u8>, value: u8) {
    match value {
        0 => out.push(ZERO_OP),
        1 => out.push(ONE_OP),
        v => out.extend_from_slice(&[BYTE_PREFIX, v]),
    }
}

/// Append a PkgLength for a body of `body_len` bytes. The encoded length
/// counts the PkgLength bytes themselves.
fn pkg_length(out: &mut Vec<u8>, body_len: usize) {
    if body_len < PKG_LENGTH_ONE_BYTE_MAX {
        out.push((body_len + 1) as u8);
    } else {
        // Two bytes: lead byte bits 7:6 = 1 (one following byte), bits
        // 3:0 the low nibble; the next byte bits 11:4. Our packages are
        // tiny, so larger encodings are never needed.
        let total = (body_len + 2).min(PKG_LENGTH_TWO_BYTE_MAX);
        out.push(0x40 | (total & 0xF) as u8);
        out.push((total >> 4) as u8);
    }
}

/// `Name(<name>, Package() { values... })` where `name` is a 4-character
/// NameSeg in the current scope. At most 255 values (NumElements is a byte).
pub(super) fn named_package(out: &mut Vec<u8>, name: &[u8; 4], values: &[u8]) {
    let mut body = Vec::new();
    body.push(values.len().min(u8::MAX as usize) as u8);
    for &v in values.iter().take(u8::MAX as usize) {
        integer(&mut body, v);
    }
    out.push(NAME_OP);
    out.extend_from_slice(name);
    out.push(PACKAGE_OP);
    pkg_length(out, body.len());
    out.extend_from_slice(&body);
}

/// `Name(<name>, <DWord>)`.
pub(super) fn named_dword(out: &mut Vec<u8>, name: &[u8; 4], value: u32) {
    out.push(NAME_OP);
    out.extend_from_slice(name);
    out.push(DWORD_PREFIX);
    out.extend_from_slice(&value.to_le_bytes());
}

/// `Name(<name>, <small integer>)`.
pub(super) fn named_integer(out: &mut Vec<u8>, name: &[u8; 4], value: u8) {
    out.push(NAME_OP);
    out.extend_from_slice(name);
    integer(out, value);
}

/// `Name(<name>, Buffer() { bytes })`. Resource templates are far shorter
/// than the 255 bytes a BytePrefix size holds; longer input is cut there.
pub(super) fn named_buffer(out: &mut Vec<u8>, name: &[u8; 4], bytes: &[u8]) {
    let bytes = &bytes[..bytes.len().min(u8::MAX as usize)];
    let mut body = vec![BYTE_PREFIX, bytes.len() as u8];
    body.extend_from_slice(bytes);
    out.push(NAME_OP);
    out.extend_from_slice(name);
    out.push(BUFFER_OP);
    pkg_length(out, body.len());
    out.extend_from_slice(&body);
}

/// `Device(<name>) { body }`.
pub(super) fn device(out: &mut Vec<u8>, name: &[u8; 4], body: &[u8]) {
    let mut inner = name.to_vec();
    inner.extend_from_slice(body);
    out.extend_from_slice(&DEVICE_OP);
    pkg_length(out, inner.len());
    out.extend_from_slice(&inner);
}

/// `EisaId("PNPxxxx")` as the 32-bit integer it compiles to: three
/// letters of 5 bits each (A = 1) and four hex digits, stored big-endian.
/// `None` for a malformed ID.
pub(super) fn eisa_id(id: &[u8; 7]) -> Option<u32> {
    let mut v: u32 = 0;
    for &c in &id[..3] {
        if !c.is_ascii_uppercase() {
            return None;
        }
        v = v << 5 | u32::from(c - b'@');
    }
    for &c in &id[3..] {
        v = v << 4 | (c as char).to_digit(16)?;
    }
    // 15 bits of letters and 16 of digits, high bit clear; the bytes in
    // memory are the big-endian value, so the AML DWord is its swap.
    Some(v.swap_bytes())
}

/// A resource template with one read/write 32-bit memory range of `len`
/// bytes at `base` and one exclusive, edge-triggered, active-high
/// interrupt on `gsi` (a virtio-mmio transport, as QEMU's microvm declares
/// them, with the edge trigger the PC's ISA IRQs have).
pub(super) fn memory_and_interrupt(base: u32, len: u32, gsi: u32) -> Vec<u8> {
    let mut r = vec![RES_MEM32_FIXED];
    r.extend_from_slice(&9u16.to_le_bytes());
    r.push(RES_MEM_READ_WRITE);
    r.extend_from_slice(&base.to_le_bytes());
    r.extend_from_slice(&len.to_le_bytes());
    let mut irq = interrupt(gsi);
    r.append(&mut irq);
    r.extend_from_slice(&RES_END);
    r
}

/// One extended interrupt descriptor: consumer, edge, active high,
/// exclusive, `gsi`.
fn interrupt(gsi: u32) -> Vec<u8> {
    let data = [
        &[RES_EXT_IRQ_CONSUMER_EDGE_HIGH, 1][..],
        &gsi.to_le_bytes()[..],
    ]
    .concat();
    let mut r = vec![RES_EXT_IRQ];
    r.extend_from_slice(&(data.len() as u16).to_le_bytes());
    r.extend_from_slice(&data);
    r
}

/// A resource template with one 16-bit-decoded I/O range of `len` ports at
/// `port` and one exclusive, edge-triggered, active-high interrupt on
/// `gsi`, as a PC serial port declares them (what QEMU's microvm writes
/// for COM1).
pub(super) fn io_and_interrupt(port: u16, len: u8, gsi: u32) -> Vec<u8> {
    let mut r = RES_IO.to_vec();
    r.push(RES_IO_DECODE16);
    r.extend_from_slice(&port.to_le_bytes()); // minimum base
    r.extend_from_slice(&port.to_le_bytes()); // maximum base
    r.push(1); // alignment
    r.push(len);
    r.append(&mut interrupt(gsi));
    r.extend_from_slice(&RES_END);
    r
}

/// A `_HID` that is a string, not an EISA ID (`"LNRO0005"`).
pub(super) fn named_string(out: &mut Vec<u8>, name: &[u8; 4], value: &str) {
    out.push(NAME_OP);
    out.extend_from_slice(name);
    out.push(STRING_PREFIX);
    out.extend_from_slice(value.as_bytes());
    out.push(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eisa_ids_compile_like_iasl() {
        // iasl: EisaId ("PNP0501") -> 0x0105D041, EisaId ("PNP0A03") -> 0x030AD041.
        assert_eq!(eisa_id(b"PNP0501"), Some(0x0105_D041));
        assert_eq!(eisa_id(b"PNP0A03"), Some(0x030A_D041));
        assert_eq!(eisa_id(b"pnp0501"), None);
        assert_eq!(eisa_id(b"PNP05G1"), None);
    }

    #[test]
    fn com1_resources_match_iasl() {
        // iasl compiles `IO (Decode16, 0x03F8, 0x03F8, 0x01, 0x08)` and
        // `Interrupt (ResourceConsumer, Edge, ActiveHigh, Exclusive) {4}`
        // to these bytes, then the end tag.
        assert_eq!(
            io_and_interrupt(0x3F8, 8, 4),
            [
                0x47, 0x01, 0xF8, 0x03, 0xF8, 0x03, 0x01, 0x08, //
                0x89, 0x06, 0x00, 0x03, 0x01, 0x04, 0x00, 0x00, 0x00, //
                0x79, 0x00
            ]
        );
    }

    #[test]
    fn virtio_mmio_resources_match_iasl() {
        // iasl: `Memory32Fixed (ReadWrite, 0xD8000000, 0x00001000)` and
        // `Interrupt (ResourceConsumer, Edge, ActiveHigh, Exclusive) {5}`.
        assert_eq!(
            memory_and_interrupt(0xD800_0000, 0x1000, 5),
            [
                0x86, 0x09, 0x00, 0x01, 0x00, 0x00, 0x00, 0xD8, 0x00, 0x10, 0x00, 0x00, //
                0x89, 0x06, 0x00, 0x03, 0x01, 0x05, 0x00, 0x00, 0x00, //
                0x79, 0x00
            ]
        );
        let mut out = Vec::new();
        named_string(&mut out, b"_HID", "LNRO0005");
        assert_eq!(out, b"\x08_HID\x0DLNRO0005\x00");
    }

    #[test]
    fn a_device_wraps_its_name_and_body() {
        let mut body = Vec::new();
        named_dword(&mut body, b"_HID", 0x0105_D041);
        named_integer(&mut body, b"_UID", 0);
        let mut out = Vec::new();
        device(&mut out, b"COM1", &body);
        assert_eq!(&out[..2], &DEVICE_OP);
        assert_eq!(usize::from(out[2]), 1 + 4 + body.len());
        assert_eq!(&out[3..7], b"COM1");
        assert_eq!(&out[7..], &body[..]);
        assert_eq!(
            body,
            [
                0x08, b'_', b'H', b'I', b'D', 0x0C, 0x41, 0xD0, 0x05, 0x01, 0x08, b'_', b'U', b'I',
                b'D', 0x00
            ]
        );
        let mut buf = Vec::new();
        named_buffer(&mut buf, b"_CRS", &[1, 2, 3]);
        assert_eq!(
            buf,
            [0x08, b'_', b'C', b'R', b'S', 0x11, 0x06, 0x0A, 3, 1, 2, 3]
        );
    }

    #[test]
    fn s5_package_matches_iasl() {
        // iasl compiles `Name (_S5, Package (0x04) {Zero, Zero, Zero, Zero})`
        // to exactly these bytes.
        let mut out = Vec::new();
        named_package(&mut out, b"_S5_", &[0, 0, 0, 0]);
        assert_eq!(
            out,
            [0x08, b'_', b'S', b'5', b'_', 0x12, 0x06, 0x04, 0, 0, 0, 0]
        );
        // And with other values: One and BytePrefix.
        let mut out = Vec::new();
        named_package(&mut out, b"_S5_", &[5, 1]);
        assert_eq!(
            out,
            [0x08, b'_', b'S', b'5', b'_', 0x12, 0x05, 0x02, 0x0A, 5, 0x01]
        );
    }

    #[test]
    fn long_packages_use_two_byte_lengths() {
        let mut out = Vec::new();
        let values = [7u8; 40]; // 1 + 80 body bytes
        named_package(&mut out, b"TEST", &values);
        assert_eq!(out[5], PACKAGE_OP);
        let len = usize::from(out[6] & 0xF) | usize::from(out[7]) << 4;
        assert_eq!(out[6] >> 6, 1);
        assert_eq!(len, 2 + 81);
        assert_eq!(out.len(), 6 + len);
    }
}
