//! `trapline bench` on arm64: the lab (its probe payloads, scenarios and
//! the raw-KVM floor) is not ported yet (issue 27), so the command says so
//! and exits with the usage status.

/// `trapline bench` arguments: all accepted, none used on arm64.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// The lab's arguments (see `trapline bench --help` on x86_64).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub args: Vec<String>,
}

/// The status `trapline bench` exits with on arm64 (usage: 2).
pub const NOT_AVAILABLE: i32 = 2;

/// Say the lab is not available on arm64; returns [`NOT_AVAILABLE`].
pub fn main(_args: BenchArgs) -> i32 {
    eprintln!(
        "trapline bench: the lab is not yet available on arm64 (issue 27); \
         `trapline run` works, and the lab runs on x86_64 hosts"
    );
    NOT_AVAILABLE
}
