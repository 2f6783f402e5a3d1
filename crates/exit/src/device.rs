//! The device side of a bus.

/// Why a device asks the VM to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// isa-debug-exit: the guest wrote this value; the process status is
    /// `(value << 1) | 1`, QEMU's convention.
    DebugExit(u32),
    /// The guest powered the machine off (ACPI S5, Bochs shutdown port).
    PowerOff,
    /// The guest asked for a reset; trapline has no firmware to reset into,
    /// so this ends the run like QEMU's `-no-reboot`.
    Reset,
    /// The guest entered ACPI S3 (suspend to RAM): every vCPU stops, the
    /// machine waits for a wake event and resumes the guest at its FACS
    /// waking vector. Not the end of the run.
    Suspend,
}

/// What the vCPU loop does after a device handled an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum IoOutcome {
    /// Resume the guest.
    Continue,
    /// Stop the whole VM for this reason.
    Stop(StopReason),
}

/// A device on a PIO or MMIO bus.
///
/// `offset` is relative to the base of the range the device was inserted
/// at; `base` is that base (a device mapped twice can tell the mappings
/// apart). `data.len()` is the guest's access width, which is whatever the
/// guest chose: devices must accept every width and any offset inside their
/// range, returning all-ones (or their documented value) for what they do
/// not implement. `vcpu` is the index of the calling vCPU.
pub trait BusDevice: Send + Sync {
    /// A guest read; fill all of `data`.
    fn read(&self, vcpu: usize, base: u64, offset: u64, data: &mut [u8]);
    /// A guest write.
    fn write(&self, vcpu: usize, base: u64, offset: u64, data: &[u8]) -> IoOutcome;
}

/// Fill a read buffer with all-ones: what an unclaimed bus line reads as.
#[inline]
pub fn fill_all_ones(data: &mut [u8]) {
    data.fill(0xff);
}
