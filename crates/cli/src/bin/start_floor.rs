//! `trapline-start-floor`: the start-up floor program (see
//! `trapline_startfloor`). A target of this package so that `cargo build`
//! builds it beside trapline, where `trapline bench` looks for it.

fn main() -> std::process::ExitCode {
    trapline_startfloor::main()
}
