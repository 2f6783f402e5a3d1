//! The command line on arm64.

/// Whether this is arm64 (a seed table's view measures that
/// architecture's scenarios; `--micro-bench` runs there only).
pub const ARM64: bool = true;

/// A batch's default length in the probe's clock: counter ticks, the
/// generic timer running at 25 MHz to 1 GHz (2^22 = 4-170 ms).
pub const FULL_GOAL: u64 = 1 << 22;
/// [`FULL_GOAL`] with `--quick`.
pub const QUICK_GOAL: u64 = 1 << 20;
