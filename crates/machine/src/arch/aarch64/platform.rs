//! Interrupt lines on `virt`: a device's SPI through KVM_IRQ_LINE.

use std::sync::Arc;

use kvm_ioctls::VmFd;
use trapline_devices::pc_testdev::IrqLine;

/// Raises SPIs on the vGIC (`line` is the SPI number, as a device tree
/// cell carries it).
pub(crate) struct KvmIrqLines {
    pub(crate) vm: Arc<VmFd>,
}

impl IrqLine for KvmIrqLines {
    fn set_irq(&self, line: u32, level: bool) {
        // Fails only for an SPI outside NR_IRQS, which no device has.
        let _ = self
            .vm
            .set_irq_line(trapline_kvm::gic::spi_irq_line(line), level);
    }
}
