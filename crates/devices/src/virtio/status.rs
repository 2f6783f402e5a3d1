//! The device status state machine and feature negotiation (virtio 1.x
//! §2.1, §3.1.1). The driver may only add bits, in order: ACKNOWLEDGE,
//! DRIVER, FEATURES_OK (accepted only for a feature set the device offered
//! that includes VERSION_1), DRIVER_OK. Writing 0 resets. Anything out of
//! order leaves the status as it was.

use super::VIRTIO_F_VERSION_1;

/// Status bits.
pub mod bits {
    /// The guest found the device.
    pub const ACKNOWLEDGE: u8 = 1;
    /// The guest has a driver for it.
    pub const DRIVER: u8 = 2;
    /// The driver is set up and the device is live.
    pub const DRIVER_OK: u8 = 4;
    /// Feature negotiation is complete.
    pub const FEATURES_OK: u8 = 8;
    /// The device hit an error it cannot recover from without a reset.
    pub const DEVICE_NEEDS_RESET: u8 = 64;
    /// The driver gave up on the device.
    pub const FAILED: u8 = 128;
}
use bits::*;

/// What a status write did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusChange {
    /// Nothing the transport must act on.
    None,
    /// The driver wrote 0: reset queues and device state.
    Reset,
    /// DRIVER_OK was set: the device is live.
    Activated,
    /// The write was out of order or asked for FEATURES_OK with a feature
    /// set the device cannot accept; the status is unchanged.
    Refused,
}

/// Status and features of one device.
#[derive(Clone, Debug)]
pub struct DeviceStatus {
    status: u8,
    offered: u64,
    acked: u64,
    device_sel: u32,
    driver_sel: u32,
}

impl DeviceStatus {
    /// A freshly reset device offering `offered` (VERSION_1 included by
    /// the caller).
    pub fn new(offered: u64) -> Self {
        Self {
            status: 0,
            offered,
            acked: 0,
            device_sel: 0,
            driver_sel: 0,
        }
    }

    /// The status register.
    pub fn status(&self) -> u8 {
        self.status
    }

    /// DRIVER_OK set and no reset pending: the device may process queues.
    pub fn is_live(&self) -> bool {
        self.status & (DRIVER_OK | DEVICE_NEEDS_RESET | FAILED) == DRIVER_OK
    }

    /// Whether the driver accepted `bit`.
    pub fn acked(&self, bit: u32) -> bool {
        bit < 64 && self.acked & (1 << bit) != 0
    }

    /// The features the driver accepted.
    pub fn acked_features(&self) -> u64 {
        self.acked
    }

    /// Queue setup is allowed: the driver is past FEATURES_OK and not yet live.
    pub fn queue_setup_allowed(&self) -> bool {
        self.status & FEATURES_OK != 0 && self.status & DRIVER_OK == 0
    }

    /// The device asks for a reset (DEVICE_NEEDS_RESET). Returns whether
    /// this is new, so the transport raises one configuration interrupt.
    pub fn set_needs_reset(&mut self) -> bool {
        let new = self.status & DEVICE_NEEDS_RESET == 0;
        self.status |= DEVICE_NEEDS_RESET;
        new
    }

    /// DeviceFeaturesSel.
    pub fn select_device_features(&mut self, sel: u32) {
        self.device_sel = sel;
    }

    /// DeviceFeatures: the selected 32 bits of what is offered.
    pub fn device_features(&self) -> u32 {
        match self.device_sel {
            0 => self.offered as u32,
            1 => (self.offered >> 32) as u32,
            _ => 0,
        }
    }

    /// DriverFeaturesSel.
    pub fn select_driver_features(&mut self, sel: u32) {
        self.driver_sel = sel;
    }

    /// DriverFeatures: only while the driver negotiates (DRIVER set,
    /// FEATURES_OK not yet); ignored otherwise.
    pub fn write_driver_features(&mut self, value: u32) {
        if self.status & DRIVER == 0 || self.status & FEATURES_OK != 0 {
            return;
        }
        let v = u64::from(value);
        match self.driver_sel {
            0 => self.acked = (self.acked & !0xffff_ffff) | v,
            1 => self.acked = (self.acked & 0xffff_ffff) | (v << 32),
            _ => {}
        }
    }

    /// A write of the status register.
    pub fn write_status(&mut self, value: u8) -> StatusChange {
        if value == 0 {
            *self = Self::new(self.offered);
            return StatusChange::Reset;
        }
        // DEVICE_NEEDS_RESET is the device's bit: a driver writing the
        // status back may or may not carry it.
        let old = self.status & !DEVICE_NEEDS_RESET;
        let new = value & !DEVICE_NEEDS_RESET;
        if new & old != old {
            return StatusChange::Refused; // clearing bits needs a reset
        }
        let added = new & !old;
        if added & FAILED != 0 {
            self.status |= FAILED;
            return StatusChange::None;
        }
        let has = |b: u8| new & b != 0;
        let in_order = (!has(DRIVER) || has(ACKNOWLEDGE))
            && (!has(FEATURES_OK) || has(DRIVER))
            && (!has(DRIVER_OK) || has(FEATURES_OK));
        if !in_order {
            return StatusChange::Refused;
        }
        if added & FEATURES_OK != 0 && !self.features_acceptable() {
            return StatusChange::Refused;
        }
        self.status = new | (self.status & DEVICE_NEEDS_RESET);
        if added & DRIVER_OK != 0 {
            StatusChange::Activated
        } else {
            StatusChange::None
        }
    }

    fn features_acceptable(&self) -> bool {
        self.acked & !self.offered == 0 && self.acked & (1 << VIRTIO_F_VERSION_1) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OFFER: u64 = (1 << 32) | (1 << 29) | (1 << 9);

    fn negotiate(s: &mut DeviceStatus, features: u64) -> StatusChange {
        assert_eq!(s.write_status(ACKNOWLEDGE), StatusChange::None);
        assert_eq!(s.write_status(ACKNOWLEDGE | DRIVER), StatusChange::None);
        s.select_driver_features(0);
        s.write_driver_features(features as u32);
        s.select_driver_features(1);
        s.write_driver_features((features >> 32) as u32);
        s.write_status(ACKNOWLEDGE | DRIVER | FEATURES_OK)
    }

    #[test]
    fn a_driver_negotiates_and_goes_live() {
        let mut s = DeviceStatus::new(OFFER);
        s.select_device_features(1);
        assert_eq!(s.device_features(), 1);
        s.select_device_features(0);
        assert_eq!(s.device_features(), (1 << 29) | (1 << 9));
        s.select_device_features(7);
        assert_eq!(s.device_features(), 0);
        assert_eq!(negotiate(&mut s, OFFER), StatusChange::None);
        assert!(s.queue_setup_allowed());
        assert_eq!(s.write_status(15), StatusChange::Activated);
        assert!(s.is_live());
        assert!(s.acked(29) && s.acked(32) && !s.acked(5) && !s.acked(200));
    }

    #[test]
    fn event_idx_may_be_declined() {
        let mut s = DeviceStatus::new(OFFER);
        assert_eq!(negotiate(&mut s, 1 << 32), StatusChange::None);
        assert!(!s.acked(29));
    }

    #[test]
    fn features_ok_needs_version_1_and_only_offered_bits() {
        let mut s = DeviceStatus::new(OFFER);
        assert_eq!(negotiate(&mut s, 1 << 9), StatusChange::Refused);
        assert_eq!(s.status() & FEATURES_OK, 0);
        let mut s = DeviceStatus::new(OFFER);
        assert_eq!(negotiate(&mut s, OFFER | 1 << 5), StatusChange::Refused);
        assert_eq!(s.status(), ACKNOWLEDGE | DRIVER);
    }

    #[test]
    fn out_of_order_writes_change_nothing() {
        let mut s = DeviceStatus::new(OFFER);
        assert_eq!(s.write_status(DRIVER_OK), StatusChange::Refused);
        assert_eq!(s.write_status(DRIVER), StatusChange::Refused);
        assert_eq!(
            s.write_status(ACKNOWLEDGE | DRIVER | DRIVER_OK),
            StatusChange::Refused
        );
        assert_eq!(s.status(), 0);
        assert!(!s.is_live());
        negotiate(&mut s, OFFER);
        // Clearing a bit is not allowed without a reset.
        assert_eq!(s.write_status(ACKNOWLEDGE), StatusChange::Refused);
        // Features are frozen after FEATURES_OK.
        s.select_driver_features(0);
        s.write_driver_features(0);
        assert!(s.acked(29));
    }

    #[test]
    fn features_written_before_driver_are_ignored() {
        let mut s = DeviceStatus::new(OFFER);
        s.write_driver_features(u32::MAX);
        assert_eq!(s.acked_features(), 0);
    }

    #[test]
    fn needs_reset_stops_processing_until_reset() {
        let mut s = DeviceStatus::new(OFFER);
        negotiate(&mut s, OFFER);
        s.write_status(15);
        assert!(s.set_needs_reset());
        assert!(!s.set_needs_reset());
        assert!(!s.is_live());
        assert_eq!(s.status(), 15 | DEVICE_NEEDS_RESET);
        // A driver writing the status back keeps the device's bit.
        assert_eq!(s.write_status(15), StatusChange::None);
        assert!(!s.is_live());
        assert_eq!(s.write_status(0), StatusChange::Reset);
        assert_eq!(s.status(), 0);
        assert_eq!(s.acked_features(), 0);
    }

    #[test]
    fn failed_is_accepted_at_any_time() {
        let mut s = DeviceStatus::new(OFFER);
        s.write_status(ACKNOWLEDGE);
        assert_eq!(s.write_status(ACKNOWLEDGE | FAILED), StatusChange::None);
        assert!(!s.is_live());
    }
}
