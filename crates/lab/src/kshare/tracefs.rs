//! A bounded tracefs session for KVM's trace points, left as it was found.
//!
//! Why tracefs and an instance of its own (not `perf_event_open`): an
//! instance (`instances/<name>/`) has its own ring buffer (its size set
//! here: the trace is bounded), its own `trace_clock` (so the host's global
//! clock is never changed) and its own event switches and pid filter; the
//! text it writes is read by a pure parser ([`super::trace`]) tested on
//! recorded traces. `perf_event_open` would need a ring buffer per CPU, the
//! raw sample layout per event and the tracepoint ids, for the same events.
//!
//! The session mounts tracefs only where it is not mounted (and unmounts
//! only what it mounted), filters events to this process's threads (and the
//! threads they start: the VM's vCPU threads), and on drop disables its
//! events and removes its instance. Whatever is missing (no root, tracefs
//! locked, KVM's events absent) is an [`Unsupported`] reason, never a
//! failure of the run.

use std::fs;
use std::path::{Path, PathBuf};

use super::trace::Clock;

/// Where tracefs lives.
pub const TRACEFS: &str = "/sys/kernel/tracing";

/// The events the session needs: without them there is no exit to time.
const REQUIRED: [&str; 2] = ["kvm_exit", "kvm_entry"];
/// The events that name a path or its side, where the host has them.
const OPTIONAL: [&str; 4] = ["kvm_pio", "kvm_mmio", "kvm_fast_mmio", "kvm_userspace_exit"];

/// Why tracing is not available, in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported(pub String);

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// An armed tracing session (events on, filtered to this process).
#[derive(Debug)]
pub struct Session {
    root: PathBuf,
    dir: PathBuf,
    mounted: bool,
    enabled: Vec<&'static str>,
    /// The clock its timestamps are in.
    pub clock: Clock,
}

fn write(path: &Path, value: &str) -> Result<(), Unsupported> {
    fs::write(path, value).map_err(|e| Unsupported(format!("cannot write {}: {e}", path.display())))
}

impl Session {
    /// Arms a session under `root` (normally [`TRACEFS`]) with a ring buffer
    /// of `buffer_kb` per CPU; nanosecond clocks are turned into cycles at
    /// `khz`.
    ///
    /// # Errors
    /// [`Unsupported`] with the reason when tracing cannot be used here.
    pub fn arm(root: &Path, buffer_kb: u32, khz: u64) -> Result<Session, Unsupported> {
        let mounted = mount_if_needed(root)?;
        let mut s = Session {
            root: root.to_path_buf(),
            dir: root
                .join("instances")
                .join(format!("trapline-kshare-{}", std::process::id())),
            mounted,
            enabled: Vec::new(),
            clock: Clock::Cycles,
        };
        // From here on, Drop undoes whatever was done.
        s.set_up(buffer_kb, khz)?;
        Ok(s)
    }

    fn set_up(&mut self, buffer_kb: u32, khz: u64) -> Result<(), Unsupported> {
        let kvm = self.root.join("events/kvm");
        for e in REQUIRED {
            if !kvm.join(e).is_dir() {
                return Err(Unsupported(format!(
                    "the host has no KVM trace event {e} ({} missing)",
                    kvm.join(e).display()
                )));
            }
        }
        fs::create_dir(&self.dir).map_err(|e| {
            Unsupported(format!(
                "cannot create a tracing instance {}: {e}",
                self.dir.display()
            ))
        })?;
        let clocks = fs::read_to_string(self.dir.join("trace_clock")).unwrap_or_default();
        self.clock = if clocks
            .split_whitespace()
            .any(|c| c.trim_matches(['[', ']']) == "x86-tsc")
        {
            write(&self.dir.join("trace_clock"), "x86-tsc")?;
            Clock::Cycles
        } else if khz == 0 {
            return Err(Unsupported(
                "no cycle-counter trace clock and no counter frequency to convert nanoseconds"
                    .into(),
            ));
        } else {
            write(&self.dir.join("trace_clock"), "mono")?;
            Clock::Nanos { khz }
        };
        write(&self.dir.join("buffer_size_kb"), &buffer_kb.to_string())?;
        // This process's threads now, and every thread they start.
        write(&self.dir.join("options/event-fork"), "1")?;
        write(&self.dir.join("set_event_pid"), &own_tasks().join(" "))?;
        for e in REQUIRED.into_iter().chain(OPTIONAL) {
            let enable = self.dir.join("events/kvm").join(e).join("enable");
            if enable.exists() {
                write(&enable, "1")?;
                self.enabled.push(e);
            }
        }
        write(&self.dir.join("tracing_on"), "1")
    }

    /// Stops the trace and reads it whole, with a note when the buffer
    /// overflowed (the oldest events were lost).
    ///
    /// # Errors
    /// [`Unsupported`] when the trace cannot be read.
    pub fn finish(&self) -> Result<(String, Option<String>), Unsupported> {
        write(&self.dir.join("tracing_on"), "0")?;
        let text = fs::read_to_string(self.dir.join("trace"))
            .map_err(|e| Unsupported(format!("cannot read the trace: {e}")))?;
        let lost: u64 = fs::read_dir(self.dir.join("per_cpu"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|d| fs::read_to_string(d.path().join("stats")).ok())
            .flat_map(|s| {
                s.lines()
                    .filter_map(|l| l.strip_prefix("overrun: ")?.trim().parse::<u64>().ok())
                    .collect::<Vec<_>>()
            })
            .sum();
        let note = (lost > 0).then(|| format!("{lost} events lost to a full trace buffer"));
        Ok((text, note))
    }

    /// The events the session enabled.
    pub fn events(&self) -> &[&'static str] {
        &self.enabled
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = fs::write(self.dir.join("tracing_on"), "0");
        for e in &self.enabled {
            let _ = fs::write(self.dir.join("events/kvm").join(e).join("enable"), "0");
        }
        let _ = fs::remove_dir(&self.dir);
        if self.mounted {
            let _ = umount(&self.root);
        }
    }
}

/// The thread ids of this process.
fn own_tasks() -> Vec<String> {
    fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
        .map(|d| d.file_name().to_string_lossy().into_owned())
        .collect()
}

/// Mounts tracefs at `root` when nothing is mounted there (the directory
/// holds no `trace` file); true when this call mounted it.
fn mount_if_needed(root: &Path) -> Result<bool, Unsupported> {
    if root.join("trace").exists() {
        return Ok(false);
    }
    if !root.is_dir() {
        return Err(Unsupported(format!(
            "no tracefs: {} does not exist",
            root.display()
        )));
    }
    let target = std::ffi::CString::new(root.as_os_str().as_encoded_bytes())
        .map_err(|_| Unsupported(format!("a bad tracefs path {}", root.display())))?;
    // SAFETY: every pointer is a NUL-terminated string alive for the call;
    // no data argument.
    let rc = unsafe {
        libc::mount(
            c"nodev".as_ptr(),
            target.as_ptr(),
            c"tracefs".as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if rc != 0 {
        let e = std::io::Error::last_os_error();
        return Err(Unsupported(format!(
            "tracefs is not mounted at {} and mounting it failed: {e}",
            root.display()
        )));
    }
    Ok(true)
}

fn umount(root: &Path) -> std::io::Result<()> {
    let target = std::ffi::CString::new(root.as_os_str().as_encoded_bytes())?;
    // SAFETY: a NUL-terminated path alive for the call.
    if unsafe { libc::umount(target.as_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tracefs_is_unsupported_with_its_reason() {
        let e = Session::arm(Path::new("/nonexistent/tracing"), 64, 1_000_000).unwrap_err();
        assert!(e.0.contains("/nonexistent/tracing"), "{e}");
    }

    #[test]
    fn a_tracefs_without_kvm_events_is_unsupported_and_left_untouched() {
        // A directory that looks mounted (it has `trace`) but has no KVM events.
        let dir = std::env::temp_dir().join(format!("trapline-kshare-test-{}", std::process::id()));
        fs::create_dir_all(dir.join("events")).unwrap();
        fs::write(dir.join("trace"), "").unwrap();
        let e = Session::arm(&dir, 64, 1_000_000).unwrap_err();
        assert!(e.0.contains("kvm_exit"), "{e}");
        assert!(!dir.join("instances").exists(), "nothing created");
        fs::remove_dir_all(&dir).unwrap();
    }
}
