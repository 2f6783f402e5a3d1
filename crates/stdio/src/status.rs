//! Process exit statuses `trapline run` uses. Debug-exit statuses are
//! always odd (`(V << 1) | 1`), so every other outcome gets an even code.

/// The guest powered off (Bochs shutdown port, ACPI S5).
pub const POWER_OFF: i32 = 0;
/// Bad command line.
pub const USAGE: i32 = 2;
/// The guest image is missing, unreadable or invalid.
pub const BAD_IMAGE: i32 = 4;
/// /dev/kvm is missing or not accessible.
pub const NO_KVM: i32 = 6;
/// Any other host-side failure (a KVM ioctl, a file, a thread).
pub const VMM_ERROR: i32 = 8;
/// The guest triple-faulted (KVM_EXIT_SHUTDOWN).
pub const TRIPLE_FAULT: i32 = 10;
/// KVM could not run the guest (internal error, failed entry, an exit
/// trapline does not handle).
pub const KVM_FAILURE: i32 = 12;
/// The guest touched an interrupt controller or timer the VM was built
/// without (`--irqchip split|none`, `--no-pit`).
pub const ABSENT_DEVICE: i32 = 14;
/// `--timeout` expired.
pub const TIMEOUT: i32 = 124;
/// Standard output was a pipe its reader closed (`trapline … | head`):
/// 128 + SIGPIPE, the status the shell shows for a C tool (cat, grep,
/// QEMU) cut off the same way, so a `set -o pipefail` script sees
/// trapline as it sees those, and a caller can tell that not all the
/// output was delivered. Every subcommand ends with it, quietly, except
/// `trapline run`, whose guest output was cut: it says so once.
pub const CLOSED_PIPE: i32 = 141;
