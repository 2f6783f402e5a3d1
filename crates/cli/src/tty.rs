//! Raw terminal mode while the guest's console is attached to a TTY.
//!
//! Keys then go to the guest as typed (no line editing, no local echo: the
//! guest echoes), and Ctrl-C is a byte for the guest unless `--tty-signals`
//! keeps it a signal. The saved settings are put back when the guard drops:
//! on every return from `trapline run`, Ctrl-A x included (the controller
//! thread's seccomp filter allows exactly that TCSETS ioctl).

/// Restores the terminal's settings when dropped.
pub struct RawTerminal {
    saved: libc::termios,
}

impl RawTerminal {
    /// Puts stdin's terminal in raw mode; `None` when stdin is no terminal
    /// (a pipe, a file, /dev/null), which is then left alone.
    pub fn enter(signals: bool) -> Option<RawTerminal> {
        // SAFETY: isatty only inspects fd 0.
        if unsafe { libc::isatty(0) } != 1 {
            return None;
        }
        // SAFETY: termios is plain data; tcgetattr fills it for fd 0.
        let mut saved: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: a valid pointer to a termios for fd 0.
        if unsafe { libc::tcgetattr(0, &mut saved) } != 0 {
            return None;
        }
        let mut raw = saved;
        raw.c_iflag &= !(libc::IGNBRK
            | libc::BRKINT
            | libc::PARMRK
            | libc::ISTRIP
            | libc::INLCR
            | libc::IGNCR
            | libc::ICRNL
            | libc::IXON);
        raw.c_lflag &= !(libc::ECHO | libc::ECHONL | libc::ICANON | libc::IEXTEN);
        if !signals {
            raw.c_lflag &= !libc::ISIG;
        }
        // Output processing stays on (as QEMU leaves it): the host's
        // newline handling for what the guest prints.
        raw.c_cc[libc::VMIN] = 1;
        raw.c_cc[libc::VTIME] = 0;
        // SAFETY: a valid termios for fd 0.
        if unsafe { libc::tcsetattr(0, libc::TCSANOW, &raw) } != 0 {
            return None;
        }
        Some(RawTerminal { saved })
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        // SAFETY: restores the settings read from fd 0 in `enter`.
        unsafe {
            libc::tcsetattr(0, libc::TCSANOW, &self.saved);
        }
    }
}
