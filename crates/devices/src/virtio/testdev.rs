//! QEMU's `testdev` character backend (`-chardev testdev`): the bytes a
//! guest writes are packets of optional white space, an optional decimal
//! argument N and one command byte. Command `q` ends the VM with status
//! `(N << 1) | 1`, as isa-debug-exit does; any other command byte is
//! ignored. kvm-unit-tests' arm and powerpc `exit(code)` sends `"<code>q"`
//! through a virtio console on this backend (lib/chr-testdev.c).
//!
//! A packet may arrive in pieces; the parser keeps its state between them.

/// The parser's state between bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Testdev {
    /// The argument so far (wrapping: only the low bits reach the exit
    /// status, as with QEMU's `int`).
    arg: u32,
    /// A digit has been seen in this packet: white space now ends it.
    in_arg: bool,
}

impl Testdev {
    /// A parser at the start of a packet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feed `bytes`; `Some(N)` when a `q` command asks to end the VM with
    /// `N` (the bytes after it are not looked at).
    pub fn feed(&mut self, bytes: &[u8]) -> Option<u32> {
        for &b in bytes {
            match b {
                b if b.is_ascii_whitespace() && !self.in_arg => {}
                b'0'..=b'9' => {
                    self.arg = self.arg.wrapping_mul(10).wrapping_add(u32::from(b - b'0'));
                    self.in_arg = true;
                }
                command => {
                    let arg = self.arg;
                    *self = Self::new();
                    if command == b'q' {
                        return Some(arg);
                    }
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn n_q_asks_for_n() {
        assert_eq!(Testdev::new().feed(b"0q"), Some(0));
        assert_eq!(Testdev::new().feed(b"1q"), Some(1));
        assert_eq!(Testdev::new().feed(b"  \n42q"), Some(42));
        assert_eq!(Testdev::new().feed(b"q"), Some(0));
    }

    #[test]
    fn a_packet_may_come_in_pieces() {
        let mut t = Testdev::new();
        assert_eq!(t.feed(b"1"), None);
        assert_eq!(t.feed(b"2"), None);
        assert_eq!(t.feed(b"q"), Some(12));
    }

    #[test]
    fn other_commands_end_a_packet_and_are_ignored() {
        let mut t = Testdev::new();
        // "12 " is a packet with command ' ' (ignored); then "q" alone.
        assert_eq!(t.feed(b"12 q"), Some(0));
        assert_eq!(Testdev::new().feed(b"7x3q"), Some(3));
        assert_eq!(Testdev::new().feed(b"hello world\n"), None);
    }

    #[test]
    fn a_huge_argument_wraps_instead_of_overflowing() {
        assert!(Testdev::new().feed(&[b'9'; 100]).is_none());
        let mut t = Testdev::new();
        t.feed(&[b'9'; 100]);
        assert!(t.feed(b"q").is_some());
    }
}
