//! What trapline itself costs: process CPU time until the first KVM_RUN,
//! and resident memory that is not guest RAM.

use std::time::Duration;

/// CPU time this process has used so far, all threads (from exec).
pub fn process_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to fill; the clock id is a constant
    // the kernel always supports.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if r != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Start-up's phases, for `TRAPLINE_FOOTPRINT=1`: the process CPU time at
/// named points from `main` to the first KVM_RUN, so the lab's one figure
/// (CPU to the first KVM_RUN) can be split where it is spent. Off, a mark
/// costs one relaxed load.
pub mod marks {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Mutex;
    use std::time::Duration;

    /// One mark: where, the process CPU time there, and the page faults
    /// (minor: a page mapped, no I/O) taken so far. A fault costs several
    /// µs on a nested host, so they explain much of the CPU time.
    #[derive(Clone, Copy, Debug)]
    pub struct Mark {
        pub name: &'static str,
        pub cpu: Duration,
        pub minor_faults: u64,
    }

    static ON: AtomicBool = AtomicBool::new(false);
    static MARKS: Mutex<Vec<Mark>> = Mutex::new(Vec::new());

    /// Start recording; the first mark is `name` (e.g. "main").
    pub fn enable(name: &'static str) {
        ON.store(true, Ordering::Relaxed);
        mark(name);
    }

    /// Record the process CPU time and page faults now under `name`, if
    /// recording.
    pub fn mark(name: &'static str) {
        if ON.load(Ordering::Relaxed) {
            let m = Mark {
                name,
                cpu: super::process_cpu_time(),
                minor_faults: minor_faults(),
            };
            if let Ok(mut marks) = MARKS.lock() {
                marks.push(m);
            }
        }
    }

    /// The marks so far, in order.
    pub fn take() -> Vec<Mark> {
        MARKS
            .lock()
            .map(|mut m| std::mem::take(&mut *m))
            .unwrap_or_default()
    }

    /// One `trapline-footprint-phase cpu_ns=… faults=… until="…"` line
    /// per mark taken so far: the CPU time and page faults from the
    /// previous mark (exec, for the first) to it. The marks are consumed.
    pub fn phase_lines() -> Vec<String> {
        let mut last: Option<Mark> = None;
        take()
            .into_iter()
            .map(|m| {
                let (cpu, faults) = match last {
                    Some(l) => (
                        m.cpu.saturating_sub(l.cpu),
                        m.minor_faults.saturating_sub(l.minor_faults),
                    ),
                    None => (m.cpu, m.minor_faults),
                };
                last = Some(m);
                format!(
                    "trapline-footprint-phase cpu_ns={} faults={faults} until={:?}",
                    cpu.as_nanos(),
                    m.name
                )
            })
            .collect()
    }

    /// Print [`phase_lines`] to stderr (what `trapline run` and the
    /// start-up floor print with the footprint).
    pub fn print_phases() {
        for line in phase_lines() {
            eprintln!("{line}");
        }
    }

    fn minor_faults() -> u64 {
        // SAFETY: getrusage fills the zeroed struct it is given.
        unsafe {
            let mut u: libc::rusage = std::mem::zeroed();
            if libc::getrusage(libc::RUSAGE_SELF, &mut u) != 0 {
                return 0;
            }
            u.ru_minflt as u64
        }
    }
}

/// Give the heap's free pages back to the kernel. Start-up frees most of
/// what it allocated (clap's command tree, the ACPI area), but glibc
/// keeps freed pages resident; the run itself
/// allocates little. A few system calls, once, after the first KVM_RUN.
pub fn release_free_heap() {
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim only returns free pages of glibc's own heap to
    // the kernel; it takes the arena's lock, so any thread may call it
    // while others allocate.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Resident bytes of this process outside `[guest_start, guest_end)` host
/// addresses (guest RAM), from /proc/self/smaps. `None` when smaps cannot
/// be read.
pub fn rss_outside(guest_start: u64, guest_end: u64) -> Option<u64> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    Some(rss_outside_in(&smaps, guest_start, guest_end))
}

/// [`rss_outside`] from an already open /proc/self/smaps (read once from
/// its start): the VMM main thread opens it before its seccomp filter goes
/// on and reads it after the run.
pub fn rss_outside_from(
    smaps: &mut std::fs::File,
    guest_start: u64,
    guest_end: u64,
) -> Option<u64> {
    use std::io::Read;
    let mut s = String::new();
    smaps.read_to_string(&mut s).ok()?;
    Some(rss_outside_in(&s, guest_start, guest_end))
}

/// The parsing half of [`rss_outside`], for tests.
pub fn rss_outside_in(smaps: &str, guest_start: u64, guest_end: u64) -> u64 {
    let mut total = 0u64;
    let mut in_guest = false;
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if let Some((a, b)) = first.split_once('-') {
            if let (Ok(a), Ok(b)) = (u64::from_str_radix(a, 16), u64::from_str_radix(b, 16)) {
                in_guest = a >= guest_start && b <= guest_end;
                continue;
            }
        }
        if let Some(rest) = line.strip_prefix("Rss:") {
            if !in_guest {
                let kib: u64 = rest
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse()
                    .unwrap_or(0);
                total += kib * 1024;
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guest_mappings_are_left_out() {
        let smaps = "\
55d0-55e0 r-xp 00000000 fd:00 1 /usr/bin/trapline
Size:                 64 kB
Rss:                  40 kB
7f00-7f80 rw-p 00000000 00:00 0
Size:             131072 kB
Rss:              20000 kB
7ff0-7ff1 rw-p 00000000 00:00 0 [stack]
Rss:                   8 kB
";
        assert_eq!(rss_outside_in(smaps, 0x7f00, 0x7f80), 48 * 1024);
        assert_eq!(rss_outside_in(smaps, 0, 0), (48 + 20000) * 1024);
    }

    #[test]
    fn phase_lines_are_differences_between_marks() {
        marks::enable("main");
        marks::mark("vm created");
        let lines = marks::phase_lines();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("trapline-footprint-phase cpu_ns="));
        assert!(lines[0].ends_with(" until=\"main\""), "{}", lines[0]);
        assert!(lines[1].ends_with(" until=\"vm created\""), "{}", lines[1]);
        assert!(marks::phase_lines().is_empty(), "the marks are consumed");
    }

    #[test]
    fn cpu_time_advances() {
        let a = process_cpu_time();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        std::hint::black_box(x);
        assert!(process_cpu_time() > a);
        assert!(rss_outside(0, 0).unwrap() > 0);
    }
}
