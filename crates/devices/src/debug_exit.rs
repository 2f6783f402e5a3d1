//! isa-debug-exit (QEMU `-device isa-debug-exit,iobase=0xf4,iosize=0x4`).

use trapline_bus::{AccessSizes, BusDevice, IoOutcome, StopReason};

/// A write of V (at any width) ends the VM; trapline then exits with status
/// `(V << 1) | 1`, QEMU's convention, so test harnesses built for QEMU read
/// the same codes. Reads return 0, as QEMU's do.
#[derive(Default)]
pub struct DebugExit;

/// The process exit status for a debug-exit value, as the OS reports it
/// (QEMU calls `exit((V << 1) | 1)`; only the low 8 bits survive).
pub fn exit_status(value: u32) -> i32 {
    (((value << 1) | 1) & 0xff) as i32
}

impl BusDevice for DebugExit {
    fn read(&self, _vcpu: usize, _base: u64, _offset: u64, data: &mut [u8]) {
        data.fill(0);
    }

    fn write(&self, _vcpu: usize, _base: u64, _offset: u64, data: &[u8]) -> IoOutcome {
        let mut v = [0u8; 4];
        let n = data.len().min(4);
        v[..n].copy_from_slice(&data[..n]);
        IoOutcome::Stop(StopReason::DebugExit(u32::from_le_bytes(v)))
    }

    fn access_sizes(&self) -> AccessSizes {
        // QEMU's debug_exit_ops: `.valid` 1..=4; a misaligned write is cut,
        // and its first piece's value is the status.
        AccessSizes::QEMU_DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_write_stops_with_the_value() {
        let d = DebugExit;
        assert_eq!(
            d.write(0, 0xf4, 0, &[3, 0, 0, 0]),
            IoOutcome::Stop(StopReason::DebugExit(3))
        );
        assert_eq!(
            d.write(0, 0xf4, 0, &[5]),
            IoOutcome::Stop(StopReason::DebugExit(5))
        );
        assert_eq!(
            d.write(0, 0xf4, 2, &[]),
            IoOutcome::Stop(StopReason::DebugExit(0))
        );
        let mut r = [9u8; 4];
        d.read(0, 0xf4, 0, &mut r);
        assert_eq!(r, [0; 4]);
    }

    #[test]
    fn statuses_follow_qemu() {
        assert_eq!(exit_status(0), 1);
        assert_eq!(exit_status(1), 3);
        assert_eq!(exit_status(38), 77);
        assert_eq!(exit_status(63), 127);
        assert_eq!(exit_status(0x2a), 85);
        assert_eq!(exit_status(0xffff_ffff), 0xff);
    }
}
