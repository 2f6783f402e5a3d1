//! The experiments that are not probe runs, each a command of its own:
//! `trapline linux-boot` ([`linux_boot`]) and `trapline virtio-paths`
//! ([`virtio`]), x86 only for now
//! ([`crate::arch::experiments::UNAVAILABLE`] says why not elsewhere), and
//! `trapline net-paths` ([`net`]) on both architectures.

/// std's `eprintln!` for the experiments (declared before them): the line
/// in words, and no panic when stderr is gone (see `trapline_stdio::words`).
macro_rules! eprintln {
    ($($arg:tt)*) => {
        trapline_stdio::out::error_line(format_args!($($arg)*))
    };
}

pub mod linux_boot;
pub mod net;
pub mod virtio;
