//! The machine's extension point: code outside this crate (the lab) adds
//! its own devices and fast paths to a machine while it is being built.
//!
//! A plain `trapline run` installs no extension, so its machine maps only
//! the platform. An extension runs once, after the platform's devices are
//! on the buses and before the buses freeze; it returns an opaque handle
//! that the machine keeps (readable through [`crate::Machine::extension`]
//! before the run) and hands back in [`crate::RunReport::extension`] after
//! it, so whatever the extension registered stays alive exactly as long as
//! the VM needs it and can be read afterwards.

use std::any::Any;

use trapline_bus::BusBuilder;
use trapline_kvm::{HostKvm, Vm};

use crate::MachineError;

/// What an extension hands back: kept by the machine, returned after the
/// run. Fast paths (ioeventfds, irqfds, coalesced zones, read-only
/// memslots) held in it stay registered until it is dropped.
pub type ExtensionHandle = Box<dyn Any + Send>;

/// Adds devices and fast paths to a machine being built.
pub trait MachineExtension: Send {
    /// Install into the machine through `ctx`. Called once per machine.
    fn install(
        self: Box<Self>,
        ctx: &mut ExtensionContext<'_>,
    ) -> Result<ExtensionHandle, MachineError>;
}

/// A closure is an extension too (tests, one-off tools).
impl<F> MachineExtension for F
where
    F: FnOnce(&mut ExtensionContext<'_>) -> Result<ExtensionHandle, MachineError> + Send,
{
    fn install(
        self: Box<Self>,
        ctx: &mut ExtensionContext<'_>,
    ) -> Result<ExtensionHandle, MachineError> {
        (*self)(ctx)
    }
}

/// What an extension may touch while the machine is built: the host's KVM
/// (its capabilities), the VM (its fd for fast paths, guest memory, memory
/// slots) and both bus builders before they freeze; and two run-loop
/// options only an extension knows it needs.
pub struct ExtensionContext<'a> {
    kvm: &'a HostKvm,
    vm: &'a Vm,
    /// The port I/O bus, still open for devices.
    pub pio: &'a mut BusBuilder,
    /// The MMIO bus, still open for devices.
    pub mmio: &'a mut BusBuilder,
    pub(crate) coalesced_ring: bool,
    pub(crate) fast_port: Option<u16>,
    pub(crate) exit_stamps: Option<u64>,
}

impl<'a> ExtensionContext<'a> {
    pub(crate) fn new(
        kvm: &'a HostKvm,
        vm: &'a Vm,
        pio: &'a mut BusBuilder,
        mmio: &'a mut BusBuilder,
    ) -> Self {
        Self {
            kvm,
            vm,
            pio,
            mmio,
            coalesced_ring: false,
            fast_port: None,
            exit_stamps: None,
        }
    }

    /// The host's KVM (capability checks such as
    /// [`HostKvm::has_ioeventfd_any_length`]).
    pub fn kvm(&self) -> &HostKvm {
        self.kvm
    }

    /// The VM: its fd for fast-path registration, guest memory, slots.
    pub fn vm(&self) -> &Vm {
        self.vm
    }

    /// Map KVM's coalesced MMIO/PIO ring and drain it in the run loop.
    /// Needed by an extension that registers coalesced zones: without the
    /// ring their writes would sit in the kernel and reach no device.
    pub fn use_coalesced_ring(&mut self) {
        self.coalesced_ring = true;
    }

    /// Serve OUTs to `port` in the run loop itself: counted as
    /// [`trapline_bus::ExitKind::FastPort`] and resumed without a bus
    /// lookup or a device, the least a VMM can do per exit (the lab's
    /// `vmm-floor-pio` measures it). A device mapped at that port then
    /// sees no OUTs (INs still reach it).
    pub fn set_fast_port(&mut self, port: u16) {
        self.fast_port = Some(port);
    }

    /// Arm the exit-stamp mailbox at guest-physical `mailbox` (the lab's
    /// anatomy pass): each vCPU's run loop publishes the host clock at
    /// KVM_RUN's return and re-entry into its slot (see
    /// `trapline_abi::ANATOMY_SLOT_SIZE`) before re-entering the guest.
    pub fn publish_exit_stamps(&mut self, mailbox: u64) {
        self.exit_stamps = Some(mailbox);
    }
}
