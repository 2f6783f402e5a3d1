//! The command line on x86_64.

/// Whether this is arm64 (a seed table's view measures that
/// architecture's scenarios; `--micro-bench` runs there only).
pub const ARM64: bool = false;

/// A batch's default length in the probe's clock: TSC cycles (2^25 =
/// about 10 ms at 3 GHz).
pub const FULL_GOAL: u64 = 1 << 25;
/// [`FULL_GOAL`] with `--quick`.
pub const QUICK_GOAL: u64 = 1 << 23;
