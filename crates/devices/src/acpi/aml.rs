//! The few bytes of AML the DSDT needs: a named package of integers.
//! Encodings from the ACPI spec, section 20 (AML grammar).

/// NameOp: `Name(NameString, DataRefObject)`.
const NAME_OP: u8 = 0x08;
/// PackageOp: `Package(PkgLength NumElements PackageElementList)`.
const PACKAGE_OP: u8 = 0x12;
/// Constant integers with one-byte encodings.
const ZERO_OP: u8 = 0x00;
const ONE_OP: u8 = 0x01;
/// BytePrefix: an 8-bit integer follows.
const BYTE_PREFIX: u8 = 0x0A;
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

#[cfg(test)]
mod tests {
    use super::*;

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
