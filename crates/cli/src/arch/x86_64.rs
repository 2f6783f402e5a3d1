//! The command line on x86_64.

/// Whether this is arm64 (a seed table's view measures that
/// architecture's scenarios; `--micro-bench` runs there only).
pub const ARM64: bool = false;

/// A batch's default length in the probe's clock: TSC cycles (2^25 =
/// about 10 ms at 3 GHz).
#[cfg_attr(not(feature = "bench"), allow(dead_code))]
pub const FULL_GOAL: u64 = 1 << 25;
/// [`FULL_GOAL`] with `--quick`.
#[cfg_attr(not(feature = "bench"), allow(dead_code))]
pub const QUICK_GOAL: u64 = 1 << 23;

/// The longest `--append` any guest can get: the loader's command-line
/// slot, less its NUL (a bzImage may take less, which the loader says).
pub fn max_append() -> Option<usize> {
    Some(trapline_machine::CMDLINE_CAPACITY as usize - 1)
}

/// The first `trapline run` flag this machine has no use for: none on
/// the PC.
pub fn unsupported_run_flag(_: &crate::args::RunArgs) -> Option<&'static str> {
    None
}

/// A built-in `--initrd` for Linux guests: `builtin:vblktest`, an
/// initramfs whose /init checks and times /dev/vda; `builtin:nettest`, one
/// whose /init brings eth0 up and exchanges UDP over it.
pub fn builtin_initrd(p: &std::path::Path) -> Option<trapline_machine::ImageBytes> {
    let cpio = match p.to_str()? {
        "builtin:vblktest" => trapline_guest::linux_vblk_initramfs(),
        "builtin:nettest" => trapline_guest::linux_net_initramfs(),
        _ => return None,
    };
    Some(trapline_machine::ImageBytes::Owned(cpio))
}

/// The lab's probe devices and user-space doorbell, for the lab's own
/// payloads. No fast paths: those are what a lab scenario turns on, not
/// what the payload needs to run.
pub fn lab_extension() -> Option<Box<dyn trapline_machine::MachineExtension>> {
    Some(Box::new(trapline_lab_devices::LabFixtures::default()))
}
