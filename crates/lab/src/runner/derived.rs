//! Values derived across scenarios and VMMs, and trapline's own footprint.

use trapline_report::Report;

/// The user-exit premium both VMMs can be measured on alike: pci-testdev's
/// port I/O test without and with an ioeventfd (each VMM registers its
/// own); and each VMM's own cost per user exit over the raw-KVM floor.
pub(super) fn add_peer_derived(report: &mut Report) {
    use trapline_report::derive::{difference, ratio};
    let raw = report
        .derived
        .iter()
        .find(|d| d.name == "raw-kvm:user-exit-premium")
        .cloned();
    let mut own = Vec::new();
    for vmm in ["trapline", "qemu"] {
        let Some(p) = difference(
            report,
            vmm,
            "pci-io-user-exit-premium",
            "portio-no-eventfd:pci-io",
            "portio-wildcard-eventfd:pci-io",
            "pci-testdev's I/O BAR byte write (OUTB; on arm64 a store through the PCI I/O window) served in user space over the same write served by an ioeventfd",
        ) else {
            continue;
        };
        if let Some(raw) = &raw {
            own.push(trapline_report::Derived {
                name: trapline_report::scenario_key(vmm, "own-cost-per-user-exit"),
                value: p.value - raw.value,
                unit: "cycles".into(),
                formula: format!("{} − raw-kvm:user-exit-premium", p.name),
                note: Some(
                    "what the VMM itself spends per exit to user space, over a bare KVM_RUN loop"
                        .into(),
                ),
                range: None,
                goal: None,
            });
        }
        report.derived.push(p);
    }
    if let [t, q] = own.as_slice() {
        let r = ratio(
            "own-cost-ratio-trapline-vs-qemu",
            t,
            q,
            "trapline's own cost per user exit as a fraction of QEMU's (goal: at most 0.25)",
        );
        report.derived.extend(own.clone());
        report.derived.extend(r);
    } else {
        report.derived.extend(own);
    }
}

/// trapline's own cost, as derived values (goals from the hygiene issue;
/// Firecracker's published figures for scale).
pub(super) fn add_footprint(report: &mut Report, exe: &std::path::Path, runs: u32) {
    let (f, floor) = match crate::footprint::measure(exe, runs) {
        Ok(m) => (m.trapline, m.floor),
        Err(e) => {
            eprintln!("trapline bench: warning: footprint not measured: {e}");
            return;
        }
    };
    use crate::footprint::{median, phase_medians};
    use trapline_report::derive::startup;
    use trapline_report::unit::Unit;
    use trapline_report::views::vmm::FOOTPRINT_GOALS;
    let [cpu_goal, rss_goal] = FOOTPRINT_GOALS;
    let cpu = median(f.iter().map(|x| x.cpu_ms_to_first_run).collect());
    let rss = median(f.iter().map(|x| x.rss_beyond_guest_mib).collect());
    report.derived.push(trapline_report::Derived {
        name: trapline_report::derive::VMM_CPU_TO_FIRST_KVM_RUN.into(),
        value: cpu,
        unit: "ms".into(),
        formula: format!(
            "median over {runs} `trapline run` processes: CPU time from exec to the first KVM_RUN"
        ),
        note: Some(format!(
            "goal: at most {} CPU-ms (Firecracker promises {})",
            cpu_goal.goal, cpu_goal.firecracker
        )),
        range: None,
        goal: None,
    });
    report.derived.push(trapline_report::Derived {
        name: trapline_report::derive::VMM_RSS_BEYOND_GUEST.into(),
        value: rss,
        unit: "MiB".into(),
        formula: format!(
            "median over {runs} `trapline run` processes: resident memory outside guest RAM"
        ),
        note: Some(format!(
            "goal: at most {} MiB (Firecracker promises {})",
            rss_goal.goal, rss_goal.firecracker
        )),
        range: None,
        goal: None,
    });
    // The same CPU time split at start-up's marks.
    for (mark, cpu_us, faults) in phase_medians(&f) {
        let what = startup::phase(&mark).map_or(mark.as_str(), |p| p.what);
        report.derived.push(trapline_report::Derived {
            name: startup::cpu_name(&mark),
            value: cpu_us,
            unit: Unit::Micros.as_str().into(),
            formula: format!(
                "median over {runs} `trapline run` processes: CPU time up to the mark \"{mark}\""
            ),
            note: Some(what.to_string()),
            range: None,
            goal: None,
        });
        report.derived.push(trapline_report::Derived {
            name: startup::faults_name(&mark),
            value: faults,
            unit: Unit::Count.as_str().into(),
            formula: format!(
                "median over {runs} `trapline run` processes: minor page faults up to the mark \"{mark}\""
            ),
            note: Some(what.to_string()),
            range: None,
            goal: None,
        });
    }
    // The start-up floor, run alternately with those processes.
    match floor {
        Ok(floor) => report
            .derived
            .extend(crate::footprint::floor_derived(&f, &floor)),
        Err(e) => eprintln!("trapline bench: warning: start-up floor not measured: {e}"),
    }
}
