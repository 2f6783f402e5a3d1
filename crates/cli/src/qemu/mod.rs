//! QEMU-compatible spellings: `trapline -kernel FILE -smp N …`.
//!
//! Harnesses written for QEMU (kvm-unit-tests' `run_tests.sh` above all)
//! drive `qemu-system-x86_64` with single-dash options. When trapline's first
//! argument is one of those, `main` hands the whole argv to [`main`] here. We
//! accept exactly the options whose meaning overlaps `trapline run`, turn
//! them into a [`RunArgs`](crate::args::RunArgs) and let [`run_cmd::run`](crate::run_cmd::run) build and run the machine,
//! so the exit statuses are `trapline run`'s. Anything else is refused by
//! name with status 2; nothing is dropped silently, and what is accepted but
//! ignored is listed in docs/run.md.

//!
//! The jobs are split: [`options`] is the one table of accepted options,
//! [`parse`] walks argv into an [`parse::Action`] (with [`values`] checking
//! each option's value in QEMU's [`syntax`], [`virt`] the `virt` machine's
//! spellings and [`device`] what a `-device` asked for), [`translate`] holds
//! the run as given and turns it into `trapline run`'s arguments, [`help`] holds what is printed, and [`launch`] is the entry
//! point.

mod device;
mod help;
mod launch;
mod options;
mod parse;
mod platform;
mod syntax;
mod translate;
mod values;
mod virt;

// These tests read the command lines of the x86 build (pc machine, its
// devices and CPU models); tests_virt reads `virt`'s on either build.
#[cfg(all(test, target_arch = "x86_64"))]
mod tests;
#[cfg(test)]
mod tests_virt;

pub use launch::main;
pub use options::is_qemu_style;
/// `-m`'s size syntax, which `trapline run --mem` takes too.
pub(crate) use syntax::parse_size;

/// The QEMU version trapline claims in `-version` and `-h`. A compatibility
/// string for version-sniffing scripts: the QEMU whose `-machine pc`
/// behaviour trapline's machine follows for kvm-unit-tests.
pub const QEMU_COMPAT_VERSION: &str = "7.2.0";

/// `trapline run --smp`'s and `--mem`'s upper limits: the machine's own
/// (trapline-abi), which args.rs uses too.
const MAX_VCPUS: u64 = trapline_abi::MAX_VCPUS as u64;
const MAX_MEM_MIB: u64 = trapline_abi::MAX_RAM_MIB;

const MIB: u128 = 1 << 20;
