//! `trapline`: run a guest on /dev/kvm, or measure what its device
//! accesses cost.

/// std's `eprintln!` and `eprint!` for every module of this binary
/// (declared before them all): the text in words, without "(os error N)",
/// and no panic when stderr is gone (`trapline … 2>&1 | head -1`): see
/// `trapline_stdio::words::to_stderr`.
macro_rules! eprintln {
    ($($arg:tt)*) => {
        trapline_stdio::words::to_stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}
macro_rules! eprint {
    ($($arg:tt)*) => {
        trapline_stdio::words::to_stderr(format_args!($($arg)*))
    };
}

// `out!` and `outln!`: stdout that ends quietly on a closed pipe.
#[macro_use]
extern crate trapline_stdio;

mod arch;
mod args;
#[cfg(feature = "bench")]
mod bench;
mod errors;
#[cfg(feature = "bench")]
mod experiments;
mod lazy_args;
mod outputs;
mod present;
mod qemu;
mod report_cmd;
mod run_cmd;
#[cfg(feature = "bench")]
mod secs;
mod terminal;
mod tty;

use std::process::ExitCode;

use clap::Parser;

use args::{Cli, Command};
use trapline_stdio::status;

/// All threads allocate from glibc's main arena. trapline's threads (vCPUs,
/// helpers) allocate little and rarely at the same time, and a new thread's
/// own arena (64 MiB reserved, its first pages touched) cost start-up CPU
/// time and resident memory for nothing (docs/bench.md#footprint).
fn one_malloc_arena() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only tunes glibc's allocator; called first thing in
    // main, before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

fn main() -> ExitCode {
    if std::env::var_os("TRAPLINE_FOOTPRINT").is_some() {
        trapline_machine::footprint::marks::enable("main");
    }
    one_malloc_arena();
    // QEMU's spellings (`trapline -kernel FILE -smp 2 …`, `--no-reboot …`),
    // so harnesses written for QEMU can drive trapline: see qemu/.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| qemu::is_qemu_style(&a))
    {
        let code = qemu::main(std::env::args_os());
        return ExitCode::from(code.clamp(0, 255) as u8);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help/version to stdout with status 0 and real
            // errors to stderr with status 2, which is our usage status;
            // its errors are reworded (see errors.rs).
            if !e.use_stderr() {
                // A closed pipe (`trapline --help | head -1`) ends quietly.
                if let Err(err) = e.print() {
                    let code = trapline_stdio::out::failure_status(&err);
                    return ExitCode::from(code as u8);
                }
                return ExitCode::from(0);
            }
            eprint!("{}", errors::in_words(&e.render().to_string()));
            return ExitCode::from(status::USAGE as u8);
        }
    };
    trapline_machine::footprint::marks::mark("arguments parsed");
    let code = match cli.command {
        Command::Run(a) => run_cmd::run(a),
        #[cfg(feature = "bench")]
        Command::Bench(a) => bench::main(a.0),
        Command::Report(a) => report_cmd::main(a.0),
        #[cfg(feature = "bench")]
        Command::LinuxBoot(a) => experiments::linux_boot::main(a.0),
        #[cfg(feature = "bench")]
        Command::VirtioPaths(a) => experiments::virtio_paths::main(a.0),
        #[cfg(feature = "bench")]
        Command::KernelShare(a) => experiments::kernel_share::main(a.0),
    };
    ExitCode::from(code.clamp(0, 255) as u8)
}
