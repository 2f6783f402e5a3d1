//! The Bochs/QEMU power-off port: writing the bytes "Shutdown" in order
//! powers the machine off. kvm-unit-tests falls back to it when the debug-
//! exit write did not end the VM.

use std::sync::Mutex;

use trapline_bus::{AccessSizes, BusDevice, IoOutcome, StopReason};

const MAGIC: &[u8] = b"Shutdown";

/// The 0x8900 port.
#[derive(Default)]
pub struct BochsShutdown {
    matched: Mutex<usize>,
}

impl BusDevice for BochsShutdown {
    fn read(&self, _vcpu: usize, _base: u64, _offset: u64, data: &mut [u8]) {
        data.fill(0xff);
    }

    fn write(&self, _vcpu: usize, _base: u64, offset: u64, data: &[u8]) -> IoOutcome {
        if offset != 0 {
            return IoOutcome::Continue;
        }
        let mut m = self.matched.lock().unwrap_or_else(|e| e.into_inner());
        for &b in data.iter().take(1) {
            *m = if b == MAGIC[*m] {
                *m + 1
            } else if b == MAGIC[0] {
                1
            } else {
                0
            };
            if *m == MAGIC.len() {
                *m = 0;
                return IoOutcome::Stop(StopReason::PowerOff);
            }
        }
        IoOutcome::Continue
    }

    fn access_sizes(&self) -> AccessSizes {
        // A byte port, as Bochs' was.
        AccessSizes::BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_magic_word_powers_off_and_nothing_else_does() {
        let d = BochsShutdown::default();
        for b in b"ShutShutdow" {
            assert_eq!(d.write(0, 0, 0, &[*b]), IoOutcome::Continue);
        }
        assert_eq!(
            d.write(0, 0, 0, b"n"),
            IoOutcome::Stop(StopReason::PowerOff)
        );
        for b in b"xShutdown" {
            let _ = d.write(0, 0, 1, &[*b]);
        }
        assert_eq!(d.write(0, 0, 0, b"n"), IoOutcome::Continue);
    }
}
