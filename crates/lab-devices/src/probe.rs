//! The lab's user-space probe devices.
//!
//! Every probe address of the ABI is backed here, including the ones where
//! the lab registers a KVM fast path: if a "kernel" path ever leaks to user
//! space (the ioeventfd was not registered, the value did not match), the
//! write lands here and is counted, so the scenario's check fails loudly
//! instead of measuring the wrong thing.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use trapline_abi as abi;
use trapline_bus::{AccessSizes, BusDevice, IoOutcome};

use crate::arch;

/// The registers a probe device counts writes for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum ProbeRegister {
    /// PROBE_PIO_USER_PORT.
    PioUser = 0,
    /// PROBE_PIO_FLOOR_PORT (when the in-loop floor handler is off).
    PioFloor,
    /// PROBE_PIO_WILDCARD_PORT.
    PioWildcard,
    /// PROBE_PIO_DATAMATCH_PORT.
    PioDatamatch,
    /// PROBE_PIO_COALESCED_PORT.
    PioCoalesced,
    /// PV_DOORBELL_PORT.
    PvDoorbell,
    /// PROBE_MMIO_USER.
    MmioUser,
    /// PROBE_MMIO_WILDCARD.
    MmioWildcard,
    /// PROBE_MMIO_DATAMATCH.
    MmioDatamatch,
    /// PROBE_MMIO_COALESCED.
    MmioCoalesced,
    /// PROBE_RO_MEMSLOT (writes to the read-only memslot exit here).
    RoMemslot,
    /// Anywhere else in the probe ranges.
    Other,
}

const REGISTERS: usize = ProbeRegister::Other as usize + 1;
/// Most vCPUs a probe keeps separate counters for.
pub const PROBE_MAX_VCPUS: usize = trapline_abi::MAX_VCPUS as usize;

impl ProbeRegister {
    /// The register at a PIO port.
    pub fn at_port(port: u64) -> Self {
        match port as u16 {
            abi::PROBE_PIO_USER_PORT => Self::PioUser,
            abi::PROBE_PIO_FLOOR_PORT => Self::PioFloor,
            abi::PROBE_PIO_WILDCARD_PORT => Self::PioWildcard,
            abi::PROBE_PIO_DATAMATCH_PORT => Self::PioDatamatch,
            abi::PROBE_PIO_COALESCED_PORT => Self::PioCoalesced,
            abi::PV_DOORBELL_PORT => Self::PvDoorbell,
            _ => Self::Other,
        }
    }

    /// The register at an MMIO address (page granular): this
    /// architecture's probe pages (`PROBE_MMIO_*` on x86, `VIRT_PROBE_*` on
    /// arm64).
    pub fn at_mmio(addr: u64) -> Self {
        match addr & !(arch::PROBE_PAGE - 1) {
            arch::PROBE_MMIO_USER => Self::MmioUser,
            arch::PROBE_MMIO_WILDCARD => Self::MmioWildcard,
            arch::PROBE_MMIO_DATAMATCH => Self::MmioDatamatch,
            arch::PROBE_MMIO_COALESCED => Self::MmioCoalesced,
            arch::PROBE_RO_MEMSLOT => Self::RoMemslot,
            _ => Self::Other,
        }
    }
}

/// Which address space a probe device is mapped in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeSpace {
    /// Ports: `base + offset` is the port.
    Pio,
    /// Memory: `base + offset` is the address.
    Mmio,
}

/// Reads return bytes of [`abi::PROBE_READ_VALUE`] (by offset within a
/// 32-bit word); writes are counted per register and per vCPU. Each
/// vCPU's counters are written only by that vCPU's thread, so a count is a
/// plain load and store, not a locked instruction: this device sits on the
/// path the lab measures.
pub struct ProbeDevice {
    space: ProbeSpace,
    writes: Box<[[AtomicU64; REGISTERS]]>,
    last_value: AtomicU64,
}

impl ProbeDevice {
    /// A probe for one address space.
    pub fn new(space: ProbeSpace) -> Self {
        Self {
            space,
            writes: (0..PROBE_MAX_VCPUS)
                .map(|_| std::array::from_fn(|_| AtomicU64::new(0)))
                .collect(),
            last_value: AtomicU64::new(0),
        }
    }

    /// Writes seen at `reg`, summed over vCPUs.
    pub fn writes(&self, reg: ProbeRegister) -> u64 {
        self.writes
            .iter()
            .map(|v| v[reg as usize].load(Relaxed))
            .sum()
    }

    /// The last value written anywhere (little-endian, zero-extended).
    pub fn last_value(&self) -> u64 {
        self.last_value.load(Relaxed)
    }

    fn register(&self, addr: u64) -> ProbeRegister {
        match self.space {
            ProbeSpace::Pio => ProbeRegister::at_port(addr),
            ProbeSpace::Mmio => ProbeRegister::at_mmio(addr),
        }
    }
}

impl BusDevice for ProbeDevice {
    #[inline]
    fn read(&self, _vcpu: usize, _base: u64, offset: u64, data: &mut [u8]) {
        let value = abi::PROBE_READ_VALUE.to_le_bytes();
        for (i, b) in data.iter_mut().enumerate() {
            *b = value[(offset as usize).wrapping_add(i) % 4];
        }
    }

    #[inline]
    fn write(&self, vcpu: usize, base: u64, offset: u64, data: &[u8]) -> IoOutcome {
        let reg = self.register(base.wrapping_add(offset));
        if let Some(per_vcpu) = self.writes.get(vcpu) {
            let c = &per_vcpu[reg as usize];
            c.store(c.load(Relaxed) + 1, Relaxed);
        }
        let mut v = [0u8; 8];
        let n = data.len().min(8);
        v[..n].copy_from_slice(&data[..n]);
        self.last_value.store(u64::from_le_bytes(v), Relaxed);
        IoOutcome::Continue
    }

    fn access_sizes(&self) -> AccessSizes {
        // The lab's own registers: each guest access is one device call.
        AccessSizes::ANY
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_return_the_probe_value_at_any_width_and_offset() {
        let p = ProbeDevice::new(ProbeSpace::Pio);
        let mut d = [0u8; 4];
        p.read(0, abi::PROBE_PIO_USER_PORT as u64, 0, &mut d);
        assert_eq!(u32::from_le_bytes(d), abi::PROBE_READ_VALUE);
        let mut b = [0u8; 1];
        p.read(0, 0, 1, &mut b);
        assert_eq!(b[0], abi::PROBE_READ_VALUE.to_le_bytes()[1]);
        let mut big = [0u8; 8];
        p.read(0, 0, u64::MAX, &mut big);
    }

    #[test]
    fn writes_are_counted_per_register() {
        let p = ProbeDevice::new(ProbeSpace::Pio);
        let base = abi::PROBE_PIO_USER_PORT as u64;
        for _ in 0..3 {
            let _ = p.write(0, base, 0, &7u32.to_le_bytes());
        }
        let _ = p.write(
            1,
            base,
            (abi::PROBE_PIO_DATAMATCH_PORT - abi::PROBE_PIO_USER_PORT) as u64,
            &[1],
        );
        let _ = p.write(200, base, 0, &[1]); // vCPU index beyond the table: ignored, no panic
        assert_eq!(p.writes(ProbeRegister::PioUser), 3);
        assert_eq!(p.writes(ProbeRegister::PioDatamatch), 1);
        assert_eq!(p.last_value(), 1);
        let m = ProbeDevice::new(ProbeSpace::Mmio);
        let _ = m.write(0, arch::PROBE_MMIO_COALESCED, 8, &[0; 8]);
        assert_eq!(m.writes(ProbeRegister::MmioCoalesced), 1);
        let _ = m.write(0, arch::PROBE_RO_MEMSLOT, 4, &[1, 2, 3, 4]);
        assert_eq!(m.writes(ProbeRegister::RoMemslot), 1);
    }
}
