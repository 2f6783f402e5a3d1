//! The i8042 keyboard controller, as much of it as a PC guest uses to
//! reboot: writing command 0xFE (pulse the reset line) to port 0x64 resets
//! the machine, which ends the run cleanly (`StopReason::Reset`, status 0).
//! The status register reads 0 (both buffers empty) so a driver waiting
//! for "input buffer empty" before it sends the command does not time out;
//! the data port reads 0. No keyboard, no mouse.

use trapline_bus::{AccessSizes, BusDevice, IoOutcome, StopReason};

/// Data port.
pub const I8042_DATA_PORT: u16 = 0x60;
/// Status (read) and command (write) port.
pub const I8042_COMMAND_PORT: u16 = 0x64;
/// The command that pulses the CPU reset line.
pub const CMD_RESET: u8 = 0xfe;

/// The controller on one of its ports (registered twice: data and command).
#[derive(Default)]
pub struct I8042;

impl BusDevice for I8042 {
    fn read(&self, _vcpu: usize, _base: u64, _offset: u64, data: &mut [u8]) {
        data.fill(0);
    }

    fn write(&self, _vcpu: usize, base: u64, offset: u64, data: &[u8]) -> IoOutcome {
        if base + offset == u64::from(I8042_COMMAND_PORT) && data.first() == Some(&CMD_RESET) {
            return IoOutcome::Stop(StopReason::Reset);
        }
        IoOutcome::Continue
    }

    fn access_sizes(&self) -> AccessSizes {
        // QEMU's i8042_data_ops and i8042_cmd_ops: byte registers.
        AccessSizes::BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_fe_on_the_command_port_resets() {
        let d = I8042;
        let cmd = u64::from(I8042_COMMAND_PORT);
        let data = u64::from(I8042_DATA_PORT);
        assert_eq!(
            d.write(0, cmd, 0, &[0xfe]),
            IoOutcome::Stop(StopReason::Reset)
        );
        assert_eq!(d.write(0, cmd, 0, &[0xad]), IoOutcome::Continue);
        assert_eq!(d.write(0, data, 0, &[0xfe]), IoOutcome::Continue);
        assert_eq!(d.write(0, cmd, 0, &[]), IoOutcome::Continue);
        let mut s = [0xffu8; 4];
        d.read(0, cmd, 0, &mut s);
        assert_eq!(s, [0; 4]);
    }
}
