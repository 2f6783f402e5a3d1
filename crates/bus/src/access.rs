//! How a guest access is cut into the accesses a device takes: QEMU's
//! rule, so that devices modelled on QEMU's see what they would see there.

/// The widths and alignments of the accesses a device takes in one call,
/// and what the bus does with the others: QEMU's rule for a memory region
/// (`memory_access_size` and `memory_region_access_valid`), so a guest sees
/// the same values and side effects on trapline as on QEMU.
///
/// A guest access of `len` bytes at `offset` is dispatched as a run of
/// pieces, lowest address first. Each piece is as wide as possible but at
/// most [`max`](Self::max) bytes, a power of two, and (unless
/// [`unaligned`](Self::unaligned)) no wider than the largest power of two
/// dividing its offset; the next piece starts right after it, and is looked
/// up on the bus again, so it may reach another device. A piece narrower
/// than [`min`](Self::min) is invalid: it reads as zeros and its write is
/// dropped, as QEMU does. Bytes of a read are assembled little-endian, in
/// address order: piece `k` fills the bytes it covers. An `outl` to a
/// byte-wide device is thus four byte writes at port, port + 1, port + 2 and
/// port + 3, in that order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessSizes {
    min: u8,
    max: u8,
    unaligned: bool,
}

impl AccessSizes {
    /// Pieces of `min` to `max` bytes, naturally aligned. `max` is 1, 2, 4
    /// or 8 and `min` a power of two no larger (checked when built).
    pub const fn aligned(min: u8, max: u8) -> Self {
        assert!(
            max.is_power_of_two() && max <= 8,
            "max must be 1, 2, 4 or 8"
        );
        assert!(
            min.is_power_of_two() && min <= max,
            "min must be a power of two <= max"
        );
        Self {
            min,
            max,
            unaligned: false,
        }
    }

    /// Byte registers (QEMU: an access size of 1, in `.valid` or `.impl`):
    /// every access becomes single bytes.
    pub const BYTES: Self = Self::aligned(1, 1);

    /// QEMU's default for a region that declares no sizes: 1 to 4 bytes,
    /// naturally aligned (an 8-byte MMIO access is two 4-byte pieces).
    pub const QEMU_DEFAULT: Self = Self::aligned(1, 4);

    /// trapline's own devices, which have no QEMU counterpart: 1 to 8
    /// bytes at any alignment, so each access KVM reports (a power of two,
    /// at most 8 bytes) reaches them whole. (KVM's odd-length pieces of an
    /// MMIO access that crosses a page are cut into powers of two.)
    pub const ANY: Self = Self {
        min: 1,
        max: 8,
        unaligned: true,
    };

    /// The narrowest valid piece, in bytes.
    pub const fn min(self) -> usize {
        self.min as usize
    }

    /// The widest piece, in bytes.
    pub const fn max(self) -> usize {
        self.max as usize
    }

    /// Whether pieces may be misaligned (QEMU's `.impl.unaligned`).
    pub const fn unaligned(self) -> bool {
        self.unaligned
    }

    /// Whether an access of `len` bytes at `offset` is one valid piece: the
    /// device gets it unchanged. The common case, checked first.
    #[inline(always)]
    pub fn takes_whole(self, offset: u64, len: usize) -> bool {
        len.is_power_of_two()
            && len <= self.max()
            && len >= self.min()
            && (self.unaligned || offset & (len as u64 - 1) == 0)
    }

    /// The length of the first piece of an access of `len` bytes (at least
    /// 1) at `offset`: QEMU's `memory_access_size`.
    #[inline]
    pub fn piece(self, offset: u64, len: usize) -> usize {
        let mut cap = self.max();
        if !self.unaligned {
            // The largest power of two dividing the offset (none for 0).
            let align = offset & offset.wrapping_neg();
            if align != 0 && align < cap as u64 {
                cap = align as usize;
            }
        }
        pow2_floor(len.min(cap))
    }
}

/// The largest power of two not above `n` (at least 1).
#[inline]
fn pow2_floor(n: usize) -> usize {
    debug_assert!(n > 0);
    1 << (usize::BITS - 1 - n.max(1).leading_zeros())
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: [AccessSizes; 6] = [
        AccessSizes::BYTES,
        AccessSizes::QEMU_DEFAULT,
        AccessSizes::ANY,
        AccessSizes::aligned(4, 4),
        AccessSizes::aligned(2, 8),
        AccessSizes::aligned(1, 2),
    ];

    /// The pieces an access of `len` bytes at `offset` is cut into, as
    /// (offset, len), ignoring what is mapped where.
    fn pieces(rule: AccessSizes, mut offset: u64, mut len: usize) -> Vec<(u64, usize)> {
        let mut v = Vec::new();
        while len > 0 {
            let n = rule.piece(offset, len);
            v.push((offset, n));
            offset = offset.wrapping_add(n as u64);
            len -= n;
        }
        v
    }

    #[test]
    fn wide_accesses_become_pieces_of_the_largest_size() {
        assert_eq!(
            pieces(AccessSizes::BYTES, 0xb, 4),
            [(0xb, 1), (0xc, 1), (0xd, 1), (0xe, 1)]
        );
        assert_eq!(
            pieces(AccessSizes::QEMU_DEFAULT, 0x10, 8),
            [(0x10, 4), (0x14, 4)]
        );
        assert_eq!(pieces(AccessSizes::aligned(1, 2), 0, 4), [(0, 2), (2, 2)]);
        assert_eq!(pieces(AccessSizes::ANY, 0x20, 8), [(0x20, 8)]);
    }

    #[test]
    fn misaligned_accesses_become_naturally_aligned_pieces() {
        assert_eq!(
            pieces(AccessSizes::QEMU_DEFAULT, 1, 4),
            [(1, 1), (2, 2), (4, 1)]
        );
        assert_eq!(
            pieces(AccessSizes::aligned(1, 8), 6, 8),
            [(6, 2), (8, 4), (12, 2)]
        );
        // Offset 0 is aligned to everything.
        assert_eq!(pieces(AccessSizes::aligned(1, 8), 0, 8), [(0, 8)]);
        // A device taking unaligned pieces gets them whole...
        assert_eq!(pieces(AccessSizes::ANY, 3, 4), [(3, 4)]);
        // ...but lengths that are not a power of two are still cut.
        assert_eq!(pieces(AccessSizes::ANY, 3, 7), [(3, 4), (7, 2), (9, 1)]);
        assert_eq!(pieces(AccessSizes::BYTES, u64::MAX, 1), [(u64::MAX, 1)]);
    }

    #[test]
    fn whole_means_one_valid_piece() {
        for rule in RULES {
            for offset in (0..80).chain([u64::MAX - 8, u64::MAX]) {
                for len in 1..=24 {
                    let one = rule.piece(offset, len) == len && len >= rule.min();
                    assert_eq!(
                        rule.takes_whole(offset, len),
                        one,
                        "{rule:?} {offset} {len}"
                    );
                }
            }
            assert!(!rule.takes_whole(0, 0));
        }
    }

    #[test]
    fn pieces_never_exceed_the_rule() {
        for rule in RULES {
            for offset in 0..80u64 {
                for len in 1..=24 {
                    let got = pieces(rule, offset, len);
                    assert_eq!(got.iter().map(|p| p.1).sum::<usize>(), len);
                    for (o, n) in got {
                        assert!(n.is_power_of_two() && n <= rule.max(), "{rule:?} {o} {n}");
                        assert!(rule.unaligned() || o % n as u64 == 0, "{rule:?} {o} {n}");
                    }
                }
            }
        }
    }

    #[test]
    #[should_panic(expected = "min must be")]
    fn min_above_max_is_refused() {
        let _ = AccessSizes::aligned(4, 2);
    }
}
