//! One-line descriptions of a report's host and peer VMM, shared by the
//! renderers and the comparison (below both, so neither imports the other).

use std::fmt::Write as _;

use crate::model::Report;

/// One line describing the host.
pub fn host_line(report: &Report) -> String {
    let h = &report.host;
    let mut s = String::new();
    let cpu = if h.cpu_model.is_empty() {
        "unknown CPU"
    } else {
        &h.cpu_model
    };
    let _ = write!(s, "{cpu}");
    if !h.cpu_vendor.is_empty() {
        let _ = write!(s, " ({})", h.cpu_vendor);
    }
    if !h.kernel.is_empty() {
        let _ = write!(s, ", Linux {}", h.kernel);
    }
    let _ = write!(s, ", KVM API {}, {} CPUs", h.kvm_api_version, h.nproc);
    let clock = h.counter.as_deref().unwrap_or("TSC");
    if h.tsc_khz > 0 {
        // As the summary's header writes it (GHz for a TSC, MHz for a counter).
        let _ = write!(s, ", {}", h.clock_text());
    } else {
        let _ = write!(s, ", {clock} frequency unknown");
    }
    if let Some(m) = h.tsc_khz_crosscheck {
        // In the clock's own unit (GHz for a TSC, MHz for a counter).
        let measured = match h.counter {
            None => format!("{:.3} GHz", m as f64 / 1e6),
            Some(_) => format!("{:.3} MHz", m as f64 / 1e3),
        };
        let _ = write!(s, " (measured {measured})");
    }
    let _ = write!(
        s,
        ", load {:.2} {:.2} {:.2}",
        h.load_avg[0], h.load_avg[1], h.load_avg[2]
    );
    if h.emulated {
        let _ = write!(s, ", emulated");
    } else if h.nested_note.is_some() {
        let _ = write!(s, ", nested");
    }
    s
}

/// The peer VMM and the CPU model it ran with, saying why when that is
/// not `host` (`None` without a peer).
pub fn peer_line(report: &Report) -> Option<String> {
    let c = &report.config;
    let mut s = c.peer.clone()?;
    match c.peer_cpu.as_deref() {
        Some("default") => s.push_str(", QEMU's default CPU model"),
        Some(cpu) => {
            let _ = write!(s, ", -cpu {cpu}");
        }
        None => {}
    }
    if let Some(note) = &c.peer_cpu_note {
        let _ = write!(s, " ({note})");
    }
    Some(s)
}
