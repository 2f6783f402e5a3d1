//! The command line on arm64.

/// Whether this is arm64 (a seed table's view measures that
/// architecture's scenarios; `--micro-bench` runs there only).
pub const ARM64: bool = true;

/// A batch's default length in the probe's clock: counter ticks, the
/// generic timer running at 25 MHz to 1 GHz (2^22 = 4-170 ms).
#[cfg_attr(not(feature = "bench"), allow(dead_code))]
pub const FULL_GOAL: u64 = 1 << 22;
/// [`FULL_GOAL`] with `--quick`.
#[cfg_attr(not(feature = "bench"), allow(dead_code))]
pub const QUICK_GOAL: u64 = 1 << 20;

/// The longest `--append` any guest can get: no fixed slot (the device
/// tree holds it, whose own limit the loader checks).
pub fn max_append() -> Option<usize> {
    None
}

/// The first `trapline run` flag with no meaning on the arm64 `virt`
/// machine, if any is set.
pub fn unsupported_run_flag(a: &crate::args::RunArgs) -> Option<&'static str> {
    use crate::args::{AcpiArg, DeviceArg, IrqchipArg};
    [
        (a.irqchip != IrqchipArg::Kernel, "--irqchip split|none"),
        (a.no_pit, "--no-pit"),
        (a.acpi != AcpiArg::Full, "--acpi reduced"),
        (
            a.devices.contains(&DeviceArg::PcTestdev),
            "--device pc-testdev",
        ),
    ]
    .into_iter()
    .find_map(|(set, flag)| set.then_some(flag))
}

/// A built-in `--initrd`: none on arm64 yet.
pub fn builtin_initrd(_: &std::path::Path) -> Option<trapline_machine::ImageBytes> {
    None
}

/// The lab's devices for its payloads: none on arm64 (the lab installs its
/// own when it runs the probe).
pub fn lab_extension() -> Option<Box<dyn trapline_machine::MachineExtension>> {
    None
}
