//! What `-h`, `-version` and the `help` listings print.

use clap::CommandFactory;

use super::options::Opt;
use super::parse::Spelling;
use super::{MAX_MEM_MIB, MAX_VCPUS, QEMU_COMPAT_VERSION};
use crate::args::Cli;

pub(super) fn version_line() -> String {
    format!(
        "QEMU emulator version {QEMU_COMPAT_VERSION} (trapline {})",
        env!("CARGO_PKG_VERSION")
    )
}

/// `--version`: trapline, then QEMU's version line and what it means;
/// `-version`: QEMU's line first, where version sniffers parse it.
pub(super) fn version_text(spelling: Spelling) -> String {
    let ours = env!("CARGO_PKG_VERSION");
    let qemu = version_line();
    let note = "trapline is not QEMU: the QEMU version is a compatibility string";
    match spelling {
        Spelling::Trapline => format!("trapline {ours}\n{qemu}\n{note}\n"),
        Spelling::Qemu => format!("{qemu}\n{note}\n"),
    }
}

/// The options' entries in `-h`, from the option table.
fn option_entries() -> String {
    Opt::ALL
        .iter()
        .filter_map(|o| o.spec().help)
        .collect::<String>()
        .replace("{MAX_VCPUS}", &MAX_VCPUS.to_string())
        .replace("{MAX_MEM_MIB}", &MAX_MEM_MIB.to_string())
}

/// `--help` read QEMU's way: trapline's own help first, then the QEMU
/// spellings under QEMU's version line (kvm-unit-tests' harness looks for
/// the word QEMU anywhere in it). `-h` and `-help` put QEMU's version line
/// above it all, where kvm-unit-tests reads it (`$QEMU -h | head -1`, the
/// major, minor and micro numbers from its fourth to sixth words).
pub(super) fn help_text(spelling: Spelling) -> String {
    let native = Cli::command().render_help().to_string();
    let first = match spelling {
        Spelling::Qemu => format!("{}\n", version_line()),
        Spelling::Trapline => String::new(),
    };
    format!(
        "{first}trapline {ours}
{native}
QEMU-compatible spellings, for harnesses written for QEMU:
{version}
The QEMU version above is a compatibility string for scripts that look for
QEMU: trapline is not QEMU and runs no QEMU code.

usage: trapline -kernel FILE [QEMU options]    (trapline run's options, spelled as QEMU's)

QEMU options trapline accepts (two dashes work too, as in QEMU):
{options}Any other option is refused by name (status 2). Exit statuses are those of
trapline run: (V<<1)|1 when the guest writes V to port 0xf4, 4 when the kernel
cannot be loaded, 6 without KVM, 10 on a triple fault (trapline never reboots).
",
        ours = env!("CARGO_PKG_VERSION"),
        version = version_line(),
        options = option_entries(),
    )
}

pub(super) fn device_options(name: &str) -> String {
    match name {
        "isa-debug-exit" => "isa-debug-exit options:
  iobase=<uint32>        - 0xf4 (the only value trapline accepts)
  iosize=<uint32>        - 0x4 (the only value trapline accepts)
"
        .to_owned(),
        "virtconsole" => "virtconsole options:
  chardev=<str>          - the id of a -chardev testdev (chr-testdev)
"
        .to_owned(),
        _ => format!("There are no options for {name}.\n"),
    }
}

/// `-chardev help`.
pub(super) const CHARDEV_LIST: &str = "Available chardev backend types: \n  testdev\n";

/// `-accel help`.
pub(super) const ACCEL_LIST: &str = "Accelerators supported in QEMU binary:\nkvm\n";
