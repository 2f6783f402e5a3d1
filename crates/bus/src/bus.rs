//! Sorted, frozen address-range tables.

use std::sync::Arc;

use crate::access::AccessSizes;
use crate::device::{fill_all_ones, BusDevice, IoOutcome, StopReason};

/// How an address nothing is mapped at is cut into pieces: QEMU's
/// unassigned regions declare no sizes, so its default, aligned to the
/// address itself. Reads of such a piece are all-ones, writes are dropped.
const UNMAPPED_SIZES: AccessSizes = AccessSizes::QEMU_DEFAULT;

/// Errors while building a bus. They name both ranges so the machine
/// builder's message points at the two devices that collide.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BusError {
    /// The new range overlaps one already inserted.
    #[error(
        "{what}: range {new_base:#x}+{new_len:#x} overlaps {old} at {old_base:#x}+{old_len:#x}"
    )]
    Overlap {
        /// Name of the device being inserted.
        what: String,
        /// Base of the new range.
        new_base: u64,
        /// Length of the new range.
        new_len: u64,
        /// Name of the device already there.
        old: String,
        /// Base of the existing range.
        old_base: u64,
        /// Length of the existing range.
        old_len: u64,
    },
    /// Zero-length ranges and ranges that wrap past the end of the address
    /// space are refused.
    #[error("{what}: range {base:#x}+{len:#x} is empty or wraps the address space")]
    BadRange {
        /// Name of the device.
        what: String,
        /// Base of the range.
        base: u64,
        /// Length of the range.
        len: u64,
    },
}

/// One device range on a bus.
#[derive(Clone)]
pub struct Mapping {
    /// First address of the range.
    pub base: u64,
    /// Last address of the range (inclusive, so a range may end at u64::MAX).
    pub last: u64,
    /// A short name for messages and listings.
    pub name: &'static str,
    /// The device.
    pub device: Arc<dyn BusDevice>,
    /// [`BusDevice::read_stops`], asked once when the range was inserted,
    /// so a read costs no extra call.
    pub read_stops: Option<StopReason>,
    /// [`BusDevice::access_sizes`], asked once when the range was inserted.
    pub sizes: AccessSizes,
}

impl Mapping {
    /// What a read of this mapping tells the vCPU loop.
    #[inline(always)]
    fn read_outcome(&self) -> IoOutcome {
        self.read_stops.map_or(IoOutcome::Continue, IoOutcome::Stop)
    }
}

impl std::fmt::Debug for Mapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#x}..={:#x} {}", self.base, self.last, self.name)
    }
}

/// Collects ranges while the machine is being built.
#[derive(Default)]
pub struct BusBuilder {
    maps: Vec<Mapping>,
}

impl BusBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Map `device` at `[base, base + len)`.
    pub fn insert(
        &mut self,
        name: &'static str,
        base: u64,
        len: u64,
        device: Arc<dyn BusDevice>,
    ) -> Result<(), BusError> {
        let last = match len.checked_sub(1).and_then(|l| base.checked_add(l)) {
            Some(last) => last,
            None => {
                return Err(BusError::BadRange {
                    what: name.into(),
                    base,
                    len,
                });
            }
        };
        if let Some(old) = self.maps.iter().find(|m| base <= m.last && m.base <= last) {
            return Err(BusError::Overlap {
                what: name.into(),
                new_base: base,
                new_len: len,
                old: old.name.into(),
                old_base: old.base,
                old_len: old.last - old.base + 1,
            });
        }
        let read_stops = device.read_stops();
        let sizes = device.access_sizes();
        self.maps.push(Mapping {
            base,
            last,
            name,
            device,
            read_stops,
            sizes,
        });
        Ok(())
    }

    /// Freeze the table.
    pub fn build(mut self) -> Bus {
        self.maps.sort_by_key(|m| m.base);
        Bus {
            maps: self.maps.into_boxed_slice(),
        }
    }
}

/// The result of a lookup, for callers that count what they dispatched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A device handled it.
    Handled(IoOutcome),
    /// Nothing is mapped there: reads returned all-ones, writes were dropped.
    Unmapped,
}

/// A frozen table of device ranges. Cheap to share (`Arc<Bus>`); never
/// changes after [`BusBuilder::build`].
#[derive(Debug, Default)]
pub struct Bus {
    maps: Box<[Mapping]>,
}

impl Bus {
    /// The mappings, sorted by base.
    pub fn mappings(&self) -> &[Mapping] {
        &self.maps
    }

    /// The mapping containing `addr`, if any. A binary search: O(log n),
    /// no allocation, no lock.
    #[inline]
    pub fn find(&self, addr: u64) -> Option<&Mapping> {
        // Index of the first mapping whose base is above addr; the candidate
        // is the one before it.
        let idx = self.maps.partition_point(|m| m.base <= addr);
        let m = self.maps.get(idx.checked_sub(1)?)?;
        (addr <= m.last).then_some(m)
    }

    /// Dispatch a guest read of `data.len()` bytes at `addr`.
    ///
    /// An access the device at `addr` takes whole (its [`AccessSizes`]) is
    /// one call; any other is cut into pieces as QEMU cuts it, each looked
    /// up on its own: see [`AccessSizes`]. The result is `Handled` if any
    /// piece reached a mapping (a stopping read's reason wins), `Unmapped`
    /// if none did.
    #[inline]
    pub fn read(&self, vcpu: usize, addr: u64, data: &mut [u8]) -> Access {
        match self.find(addr) {
            Some(m) if m.sizes.takes_whole(addr - m.base, data.len()) => {
                m.device.read(vcpu, m.base, addr - m.base, data);
                Access::Handled(m.read_outcome())
            }
            None if UNMAPPED_SIZES.takes_whole(addr, data.len()) => {
                fill_all_ones(data);
                Access::Unmapped
            }
            _ => self.read_pieces(vcpu, addr, data),
        }
    }

    /// Dispatch a guest write of `data` at `addr`, cut into pieces like
    /// [`Bus::read`]. The first piece whose device stops the VM ends the
    /// access: the pieces after it are not written (QEMU's isa-debug-exit,
    /// for one, exits the process in the middle of the access).
    #[inline]
    pub fn write(&self, vcpu: usize, addr: u64, data: &[u8]) -> Access {
        match self.find(addr) {
            Some(m) if m.sizes.takes_whole(addr - m.base, data.len()) => {
                Access::Handled(m.device.write(vcpu, m.base, addr - m.base, data))
            }
            None if UNMAPPED_SIZES.takes_whole(addr, data.len()) => Access::Unmapped,
            _ => self.write_pieces(vcpu, addr, data),
        }
    }

    /// The piece of an access that starts at `addr` with `len` bytes left:
    /// its mapping (if any), offset and length.
    #[inline]
    fn piece(&self, addr: u64, len: usize) -> (Option<&Mapping>, u64, usize) {
        match self.find(addr) {
            Some(m) => {
                let offset = addr - m.base;
                (Some(m), offset, m.sizes.piece(offset, len))
            }
            None => (None, addr, UNMAPPED_SIZES.piece(addr, len)),
        }
    }

    /// [`Bus::read`] for an access that is not one valid piece.
    #[cold]
    #[inline(never)]
    fn read_pieces(&self, vcpu: usize, addr: u64, data: &mut [u8]) -> Access {
        if data.is_empty() {
            // Nothing to read: no device is called.
            return self
                .find(addr)
                .map_or(Access::Unmapped, |_| Access::Handled(IoOutcome::Continue));
        }
        let mut outcome: Option<IoOutcome> = None;
        let mut done = 0;
        while done < data.len() {
            let Some(at) = addr.checked_add(done as u64) else {
                // Past the top of the address space nothing answers.
                fill_all_ones(&mut data[done..]);
                break;
            };
            let (mapping, offset, len) = self.piece(at, data.len() - done);
            let piece = &mut data[done..done + len];
            match mapping {
                Some(m) => {
                    let this = if len >= m.sizes.min() {
                        m.device.read(vcpu, m.base, offset, piece);
                        m.read_outcome()
                    } else {
                        // Too narrow for the device: QEMU reads 0.
                        piece.fill(0);
                        IoOutcome::Continue
                    };
                    outcome = match outcome {
                        Some(stop @ IoOutcome::Stop(_)) => Some(stop),
                        _ => Some(this),
                    };
                }
                None => fill_all_ones(piece),
            }
            done += len;
        }
        outcome.map_or(Access::Unmapped, Access::Handled)
    }

    /// [`Bus::write`] for an access that is not one valid piece.
    #[cold]
    #[inline(never)]
    fn write_pieces(&self, vcpu: usize, addr: u64, data: &[u8]) -> Access {
        let mut reached = self.find(addr).is_some() && data.is_empty();
        let mut done = 0;
        while done < data.len() {
            let Some(at) = addr.checked_add(done as u64) else {
                break;
            };
            let (mapping, offset, len) = self.piece(at, data.len() - done);
            if let Some(m) = mapping {
                reached = true;
                // A piece too narrow for the device is dropped, as in QEMU.
                if len >= m.sizes.min() {
                    let outcome = m
                        .device
                        .write(vcpu, m.base, offset, &data[done..done + len]);
                    if let IoOutcome::Stop(_) = outcome {
                        return Access::Handled(outcome);
                    }
                }
            }
            done += len;
        }
        if reached {
            Access::Handled(IoOutcome::Continue)
        } else {
            Access::Unmapped
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::StopReason;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// Records the last access; reads return the offset.
    #[derive(Default)]
    struct Probe {
        last: AtomicU64,
    }

    impl BusDevice for Probe {
        fn read(&self, _vcpu: usize, _base: u64, offset: u64, data: &mut [u8]) {
            for (i, b) in data.iter_mut().enumerate() {
                *b = (offset as u8).wrapping_add(i as u8);
            }
        }
        fn write(&self, _vcpu: usize, _base: u64, offset: u64, data: &[u8]) -> IoOutcome {
            self.last.store(offset, Ordering::Relaxed);
            if data == [0xee] {
                IoOutcome::Stop(StopReason::PowerOff)
            } else {
                IoOutcome::Continue
            }
        }
        fn access_sizes(&self) -> AccessSizes {
            AccessSizes::ANY
        }
    }

    fn bus() -> (Bus, Arc<Probe>, Arc<Probe>) {
        let a = Arc::new(Probe::default());
        let b = Arc::new(Probe::default());
        let mut builder = BusBuilder::new();
        builder.insert("b", 0x100, 0x10, b.clone()).unwrap();
        builder.insert("a", 0x10, 0x8, a.clone()).unwrap();
        (builder.build(), a, b)
    }

    #[test]
    fn finds_by_binary_search_at_edges() {
        let (bus, _, _) = bus();
        assert!(bus.find(0xf).is_none());
        assert_eq!(bus.find(0x10).unwrap().name, "a");
        assert_eq!(bus.find(0x17).unwrap().name, "a");
        assert!(bus.find(0x18).is_none());
        assert_eq!(bus.find(0x100).unwrap().name, "b");
        assert_eq!(bus.find(0x10f).unwrap().name, "b");
        assert!(bus.find(0x110).is_none());
        assert!(bus.find(u64::MAX).is_none());
        assert!(bus.find(0).is_none());
    }

    #[test]
    fn dispatches_with_offsets_and_outcomes() {
        let (bus, a, _) = bus();
        let mut d = [0u8; 4];
        assert_eq!(
            bus.read(0, 0x12, &mut d),
            Access::Handled(IoOutcome::Continue)
        );
        assert_eq!(d, [2, 3, 4, 5]);
        assert_eq!(
            bus.write(0, 0x15, &[1]),
            Access::Handled(IoOutcome::Continue)
        );
        assert_eq!(a.last.load(Ordering::Relaxed), 5);
        assert_eq!(
            bus.write(0, 0x10, &[0xee]),
            Access::Handled(IoOutcome::Stop(StopReason::PowerOff))
        );
    }

    #[test]
    fn unmapped_reads_are_all_ones_and_writes_dropped() {
        let (bus, _, _) = bus();
        let mut d = [0u8; 8];
        assert_eq!(bus.read(0, 0x50, &mut d), Access::Unmapped);
        assert_eq!(d, [0xff; 8]);
        assert_eq!(bus.write(0, 0x50, &[1, 2]), Access::Unmapped);
        assert_eq!(Bus::default().read(0, 0, &mut d), Access::Unmapped);
    }

    #[test]
    fn refuses_overlaps_and_bad_ranges_with_names() {
        let mut builder = BusBuilder::new();
        let p: Arc<dyn BusDevice> = Arc::new(Probe::default());
        builder.insert("uart", 0x3f8, 8, p.clone()).unwrap();
        let err = builder.insert("other", 0x3ff, 2, p.clone()).unwrap_err();
        assert!(err.to_string().contains("overlaps uart"), "{err}");
        assert!(matches!(
            builder.insert("z", 0x0, 0, p.clone()),
            Err(BusError::BadRange { .. })
        ));
        assert!(matches!(
            builder.insert("w", u64::MAX, 2, p.clone()),
            Err(BusError::BadRange { .. })
        ));
        // A range may end exactly at the top of the address space.
        builder.insert("top", u64::MAX - 1, 2, p).unwrap();
        let bus = builder.build();
        assert_eq!(bus.find(u64::MAX).unwrap().name, "top");
    }

    #[test]
    fn many_ranges_stay_sorted() {
        let mut builder = BusBuilder::new();
        let p: Arc<dyn BusDevice> = Arc::new(Probe::default());
        for i in (0..100u64).rev() {
            builder.insert("r", i * 16, 8, p.clone()).unwrap();
        }
        let bus = builder.build();
        for i in 0..100u64 {
            assert!(bus.find(i * 16 + 7).is_some());
            assert!(bus.find(i * 16 + 8).is_none());
        }
    }
}
