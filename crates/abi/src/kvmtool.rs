//! kvmtool's arm64 machine, as far as the probe's kvmtool build needs it
//! (`lkvm run`, its arm/include/arm-common/kvm-arch.h): facts only, read
//! by trapline-guest's build.rs (which passes them to the C side) and by
//! the lab's kvmtool peer. trapline itself never builds this machine.

/// Start of RAM on kvmtool's arm64 machine.
pub const KVMTOOL_RAM_BASE: u64 = 0x8000_0000;
/// Where lkvm loads a kernel image without an arm64 Image header (a raw
/// binary) and enters it: RAM + 512 KiB, its default text offset.
pub const KVMTOOL_PAYLOAD_BASE: u64 = KVMTOOL_RAM_BASE + 0x8_0000;
/// The first 8250-compatible UART (MMIO, byte-wide registers, `ns16550a`
/// in lkvm's device tree): the console with `--console serial`.
pub const KVMTOOL_UART_BASE: u64 = 0x0100_0000;
/// The GICv3 distributor: the 64 KiB just below 0x4000_0000.
pub const KVMTOOL_GIC_DIST_BASE: u64 = 0x3FFF_0000;
/// The redistributors (one 128 KiB frame pair per vCPU) end where the
/// distributor starts, so their base depends on the vCPU count: vCPU `i`'s
/// is at `KVMTOOL_GIC_DIST_BASE - (ncpus - i) * KVMTOOL_GIC_REDIST_STRIDE`.
pub const KVMTOOL_GIC_REDIST_STRIDE: u64 = 0x2_0000;
