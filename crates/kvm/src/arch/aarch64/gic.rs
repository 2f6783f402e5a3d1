//! The `virt` machine's interrupt controller: KVM's in-kernel vGICv3 with
//! an ITS, at the addresses of `trapline_abi::virt`.
//!
//! KVM's order (see ../shared/specs/arm64-kvm.md, section 2): every vCPU
//! is created before the GIC's CTRL_INIT (a vCPU created after it fails
//! with EBUSY), and irqfds registered before CTRL_INIT never fire (its
//! default SPI routing replaces them), so [`Gic::create`] takes the number
//! of vCPUs already created and the machine registers irqfds after it.

use kvm_bindings::{
    kvm_create_device, kvm_device_attr, kvm_device_type_KVM_DEV_TYPE_ARM_VGIC_ITS,
    kvm_device_type_KVM_DEV_TYPE_ARM_VGIC_V3, KVM_ARM_IRQ_TYPE_SHIFT, KVM_ARM_IRQ_TYPE_SPI,
    KVM_DEV_ARM_VGIC_CTRL_INIT, KVM_DEV_ARM_VGIC_GRP_ADDR, KVM_DEV_ARM_VGIC_GRP_CTRL,
    KVM_DEV_ARM_VGIC_GRP_NR_IRQS, KVM_VGIC_ITS_ADDR_TYPE, KVM_VGIC_V3_ADDR_TYPE_DIST,
    KVM_VGIC_V3_ADDR_TYPE_REDIST,
};
use kvm_ioctls::{DeviceFd, VmFd};
use trapline_abi as abi;

use crate::KvmError;

/// The `irq` argument of KVM_IRQ_LINE for SPI `spi` (a device tree SPI
/// cell): `KVM_ARM_IRQ_TYPE_SPI << 24 | INTID`, INTID = 32 + spi; the vCPU
/// field is ignored for SPIs (api.rst, KVM_IRQ_LINE).
pub const fn spi_irq_line(spi: u32) -> u32 {
    (KVM_ARM_IRQ_TYPE_SPI << KVM_ARM_IRQ_TYPE_SHIFT) | (abi::GIC_SPI_INTID_BASE + spi)
}

/// The vGICv3 and its ITS (if asked for); the device fds live as long as the VM.
pub struct Gic {
    _gic: DeviceFd,
    _its: Option<DeviceFd>,
}

fn create_device(vm: &VmFd, type_: u32, what: &str) -> Result<DeviceFd, KvmError> {
    let mut dev = kvm_create_device {
        type_,
        fd: 0,
        flags: 0,
    };
    vm.create_device(&mut dev)
        .map_err(KvmError::ioctl(format!("KVM_CREATE_DEVICE ({what})")))
}

fn set_attr(dev: &DeviceFd, group: u32, attr: u64, addr: u64, what: &str) -> Result<(), KvmError> {
    let a = kvm_device_attr {
        flags: 0,
        group,
        attr,
        addr,
    };
    dev.set_device_attr(&a)
        .map_err(KvmError::ioctl(format!("KVM_SET_DEVICE_ATTR ({what})")))
}

/// The vGIC's ITS at the virt machine's address, initialized.
fn create_its(vm: &VmFd) -> Result<DeviceFd, KvmError> {
    let its = create_device(vm, kvm_device_type_KVM_DEV_TYPE_ARM_VGIC_ITS, "GICv3 ITS")?;
    let its_base: u64 = abi::VIRT_GIC_ITS_BASE;
    set_attr(
        &its,
        KVM_DEV_ARM_VGIC_GRP_ADDR,
        KVM_VGIC_ITS_ADDR_TYPE.into(),
        &its_base as *const u64 as u64,
        "ITS address",
    )?;
    set_attr(
        &its,
        KVM_DEV_ARM_VGIC_GRP_CTRL,
        KVM_DEV_ARM_VGIC_CTRL_INIT.into(),
        0,
        "ITS CTRL_INIT",
    )?;
    Ok(its)
}

impl Gic {
    /// Create the vGICv3 for `vcpus` vCPUs (all already created) and its
    /// ITS, and initialize both.
    pub fn create(vm: &VmFd, vcpus: u32) -> Result<Gic, KvmError> {
        Self::create_with(vm, vcpus, true)
    }

    /// [`Gic::create`], with the ITS only when `its` (the raw-KVM floor's
    /// ladder adds it as a rung of its own).
    pub fn create_with(vm: &VmFd, vcpus: u32, its: bool) -> Result<Gic, KvmError> {
        if vcpus > abi::VIRT_GIC_REDIST_MAX_VCPUS {
            return Err(KvmError::Config(format!(
                "{vcpus} vCPUs: the virt machine's redistributor window holds {}",
                abi::VIRT_GIC_REDIST_MAX_VCPUS
            )));
        }
        let gic =
            create_device(vm, kvm_device_type_KVM_DEV_TYPE_ARM_VGIC_V3, "vGICv3").map_err(|e| {
                KvmError::Config(format!(
                    "{e}: this host's KVM offers no GICv3 (trapline's virt machine needs one)"
                ))
            })?;
        // The attribute value is passed by address (a u64 in our memory).
        let dist: u64 = abi::VIRT_GIC_DIST_BASE;
        let redist: u64 = abi::VIRT_GIC_REDIST_BASE;
        set_attr(
            &gic,
            KVM_DEV_ARM_VGIC_GRP_ADDR,
            KVM_VGIC_V3_ADDR_TYPE_DIST.into(),
            &dist as *const u64 as u64,
            "GICv3 distributor address",
        )?;
        set_attr(
            &gic,
            KVM_DEV_ARM_VGIC_GRP_ADDR,
            KVM_VGIC_V3_ADDR_TYPE_REDIST.into(),
            &redist as *const u64 as u64,
            "GICv3 redistributor address",
        )?;
        let its = its.then(|| create_its(vm)).transpose()?;
        let nr_irqs: u32 = abi::VIRT_GIC_NR_IRQS;
        set_attr(
            &gic,
            KVM_DEV_ARM_VGIC_GRP_NR_IRQS,
            0,
            &nr_irqs as *const u32 as u64,
            "GICv3 NR_IRQS",
        )?;
        set_attr(
            &gic,
            KVM_DEV_ARM_VGIC_GRP_CTRL,
            KVM_DEV_ARM_VGIC_CTRL_INIT.into(),
            0,
            "GICv3 CTRL_INIT",
        )?;
        Ok(Gic {
            _gic: gic,
            _its: its,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spi_lines_carry_the_type_and_the_intid() {
        // kvm-ioctls' own example: SPI INTID 32 is 0x0100_0020.
        assert_eq!(spi_irq_line(0), 0x0100_0020);
        // The PL011's SPI 1 is INTID 33.
        assert_eq!(spi_irq_line(abi::VIRT_PL011_SPI), 0x0100_0021);
        assert_eq!(spi_irq_line(16), 0x0100_0030);
    }
}
