//! `trapline`: run a guest on /dev/kvm, or measure what its device
//! accesses cost.

mod args;
mod run_cmd;

use std::process::ExitCode;

use clap::Parser;

use args::{Cli, Command};
use trapline_machine::status;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help/version to stdout with status 0 and real
            // errors to stderr with status 2, which is our usage status.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                status::USAGE as u8
            } else {
                0
            });
        }
    };
    let code = match cli.command {
        Command::Run(a) => run_cmd::run(a),
        Command::Bench(a) => trapline_bench::cli::main(a),
    };
    ExitCode::from(code.clamp(0, 255) as u8)
}
