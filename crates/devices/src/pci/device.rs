//! What a PCI function model implements.

use trapline_bus::{fill_all_ones, IoOutcome};

use super::config::{ConfigSpace, BAR_COUNT};

/// Where each BAR of a function decodes now, as routed by the bus: `None`
/// when the BAR is absent, its decoding is off, or it lies outside the
/// window the machine routes for its space (so it is unreachable).
pub type BarMap = [Option<u64>; BAR_COUNT];

/// A PCI function model. The bus owns the configuration space (built from
/// [`PciDevice::config_template`]) and routes BAR accesses here with the
/// offset inside the BAR, so a device never sees absolute addresses.
///
/// Like every bus device: `&self`, any width, never panic.
pub trait PciDevice: Send + Sync {
    /// A short name for messages.
    fn name(&self) -> &'static str;

    /// The power-on configuration space: identities and BAR declarations.
    fn config_template(&self) -> ConfigSpace;

    /// A guest read inside BAR `bar` at `offset`. `data` may run past the
    /// end of the BAR if the guest access straddles it.
    fn bar_read(&self, _vcpu: usize, _bar: usize, _offset: u64, data: &mut [u8]) {
        fill_all_ones(data);
    }

    /// A guest write inside BAR `bar` at `offset`.
    fn bar_write(&self, _vcpu: usize, _bar: usize, _offset: u64, _data: &[u8]) -> IoOutcome {
        IoOutcome::Continue
    }

    /// The bus calls this (with the function's configuration lock held, so
    /// calls are ordered) whenever a BAR's routed address changes, decoding
    /// switched on or off included. Devices with address-bound state (KVM
    /// ioeventfds) re-register here. Must not call back into the bus.
    fn bars_changed(&self, _map: &BarMap) {}
}
