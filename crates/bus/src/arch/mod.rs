//! The host's cycle counter, the one clock every timestamp of trapline's
//! (the profile's handling times, the lab's ucall clock) is read from.
//! Each architecture's module exports the same names.

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(target_arch = "x86_64")]
mod x86_64;

#[cfg(target_arch = "aarch64")]
pub use aarch64::*;
#[cfg(target_arch = "x86_64")]
pub use x86_64::*;

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!(
    "trapline-bus knows the cycle counters of x86_64 and aarch64; \
     add crates/bus/src/arch/<arch>.rs"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counter_moves_forward() {
        let a = cycles();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = cycles();
        assert!(b > a, "{COUNTER_NAME}: {a} then {b}");
    }
}
