//! Installing the lab into a machine being built: the probe devices (and,
//! on x86, the user-space doorbell) on the buses, then the fast paths the
//! fixtures ask for, all on the probe addresses of the ABI; each
//! architecture's addresses in its own module (`install_x86`,
//! `install_arm64`).

use std::collections::BTreeMap;

use trapline_machine::{ExtensionContext, ExtensionHandle, MachineError, MachineExtension};

#[cfg(target_arch = "aarch64")]
use super::install_arm64::{devices, fastpaths};
#[cfg(target_arch = "x86_64")]
use super::install_x86::{devices, fastpaths};
use super::{Lab, LabFixtures};

impl MachineExtension for LabFixtures {
    fn install(
        self: Box<Self>,
        ctx: &mut ExtensionContext<'_>,
    ) -> Result<ExtensionHandle, MachineError> {
        let fixtures = *self;
        let (probe_pio, probe_mmio, doorbell_user) = devices(ctx)?;
        let mut lab = Lab {
            probe_pio,
            probe_mmio,
            doorbell_user,
            ioevents: BTreeMap::new(),
            _zones: Vec::new(),
            _ro: None,
            irqfd: None,
        };
        fastpaths(ctx, fixtures, &mut lab)?;
        Ok(Box::new(lab))
    }
}
