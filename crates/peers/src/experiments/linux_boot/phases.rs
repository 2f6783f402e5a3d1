//! The guest's own timeline of a boot: the kernel's printk timestamps
//! (`[   12.345678] …`, seconds on the guest's clock since the kernel
//! started) at lines that mark the end of each boot phase. The same
//! markers are read on every VMM's console, so the phases compare side by
//! side whatever the host's load did to the wall clock of each.

/// One phase: its name, and the console text whose line ends it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Phase {
    /// What the kernel does in it.
    pub name: &'static str,
    /// A substring of the line that ends it.
    pub ends_at: &'static str,
}

/// Linux 6.1's boot, start to power-off, in the order its lines come.
/// Each phase runs from the previous marker (the first from the kernel's
/// start, time 0) to its own.
pub const PHASES: [Phase; 10] = [
    Phase {
        name: "early setup: memory map, MP-table search, page tables",
        ends_at: "RAMDISK: [mem",
    },
    Phase {
        name: "ACPI tables, memory init, per-CPU areas",
        ends_at: "Memory: ",
    },
    Phase {
        name: "scheduler, RCU, IRQs, timers to the console",
        ends_at: "printk: console [ttyS0] enabled",
    },
    Phase {
        name: "APIC, TSC, CPU bring-up",
        ends_at: "smp: Brought up",
    },
    Phase {
        name: "core initcalls, ACPI interpreter",
        ends_at: "ACPI: Interpreter enabled",
    },
    Phase {
        name: "PCI, clocksource switch",
        ends_at: "clocksource: Switched to clocksource",
    },
    // Not "Unpacking initramfs": the kernel unpacks the initramfs
    // asynchronously, so that line lands before or after the device
    // initcalls from one boot to the next and would move their time between
    // two phases. PCI's final quirks (fs_initcall_sync) print on every
    // machine, with or without PCI.
    Phase {
        name: "fs/net initcalls",
        ends_at: "PCI: CLS ",
    },
    Phase {
        name: "initramfs, drivers (serial), late initcalls",
        ends_at: "Freeing unused kernel image (initmem)",
    },
    Phase {
        name: "freeing init memory, read-only data",
        ends_at: "Run /init as init process",
    },
    Phase {
        name: "init's work to power-off",
        ends_at: "reboot: Power down",
    },
];

/// What the guest wrote to its console: bytes and lines. Every byte
/// through the trapping 16550 costs the guest a status read and a data
/// write (two port exits) plus its driver's code, so a machine that makes
/// the kernel print more (a longer memory map, more ACPI tables) costs boot
/// time there.
pub fn console_size(console: &str) -> (usize, usize) {
    (console.len(), console.lines().count())
}

/// The guest timestamp (seconds) of one console line, if it has one.
pub fn stamp(line: &str) -> Option<f64> {
    let rest = line.trim_start().strip_prefix('[')?;
    let (num, _) = rest.split_once(']')?;
    num.trim().parse().ok()
}

/// The timestamp at which each phase of [`PHASES`] ended on this console
/// (`None`: its line never came, e.g. the boot was cut short).
pub fn ends(console: &str) -> Vec<Option<f64>> {
    PHASES
        .iter()
        .map(|p| {
            console
                .lines()
                .find(|l| l.contains(p.ends_at))
                .and_then(stamp)
        })
        .collect()
}

/// Each phase's duration from [`ends`]: `None` where either end is missing.
pub fn durations(ends: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut prev = Some(0.0);
    ends.iter()
        .map(|&e| {
            let d = match (prev, e) {
                (Some(a), Some(b)) => Some((b - a).max(0.0)),
                _ => None,
            };
            prev = e;
            d
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONSOLE: &str = "\
[    0.000000] Linux version 6.1.192
[    0.068560] x86/PAT: Configuration [0-7]: WB  WT  UC- UC  WB  WT  UC- UC
[    1.047364] RAMDISK: [mem 0x07fff000-0x07ffffff]
[    4.549505] Memory: 115032K/130680K available
[    5.328539] printk: console [ttyS0] enabled
[    6.142600] smp: Brought up 1 node, 1 CPU
TINYLINUX-INIT-OK
[   58.468145] reboot: Power down
";

    #[test]
    fn console_size_counts_bytes_and_lines() {
        assert_eq!(console_size(CONSOLE), (CONSOLE.len(), 8));
        assert_eq!(console_size(""), (0, 0));
    }

    #[test]
    fn the_async_initramfs_line_ends_no_phase() {
        assert!(PHASES.iter().all(|p| !p.ends_at.contains("Unpacking")));
        let e = ends("[ 9.5] PCI: CLS 0 bytes, default 64\n[ 9.9] Unpacking initramfs...\n");
        assert_eq!(e[6], Some(9.5));
        assert_eq!(e[7], None);
    }

    #[test]
    fn stamps_are_read_from_the_bracket() {
        assert_eq!(stamp("[    1.047364] RAMDISK: x"), Some(1.047364));
        assert_eq!(stamp("[12345.5] x"), Some(12345.5));
        assert_eq!(stamp("TINYLINUX-INIT-OK"), None);
        assert_eq!(stamp("[ x] y"), None);
    }

    #[test]
    fn phases_end_at_their_markers_and_missing_ones_stay_missing() {
        let e = ends(CONSOLE);
        assert_eq!(e.len(), PHASES.len());
        assert_eq!(e[0], Some(1.047364));
        assert_eq!(e[3], Some(6.1426));
        assert_eq!(e[4], None, "no ACPI interpreter line");
        assert_eq!(e[9], Some(58.468145));
        let d = durations(&e);
        assert!((d[0].unwrap() - 1.047364).abs() < 1e-9);
        assert!((d[1].unwrap() - 3.502141).abs() < 1e-9);
        assert_eq!(d[4], None);
        assert_eq!(d[5], None, "its start is missing");
    }
}
