//! trapline's probe VMs: build one for a machine kind, run its scenarios,
//! and take each scenario's last batch into its accumulator.

use std::collections::BTreeMap;
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use trapline_abi::{ResultStatus, Routine, ScenarioId};
use trapline_lab_devices::{self as lab, LabFixtures};
use trapline_machine::{HostKvm, Machine, MachineConfig, Outcome, SeccompMode, SerialOutput};
use trapline_report::Sample;

use super::checks::{describe_check, verify};
use super::ucall::{collect, kernel_exits, loop_exits, ProbeRun};
use super::{Acc, LabOptions};
use crate::arch;
use crate::catalog::{Check, MachineKind, Scenario};
use crate::doorbell::Consumer;
use crate::{peer, pump};

pub(super) struct ProbeOutcome {
    pub(super) probe: ProbeRun,
    pub(super) tsc_khz: u64,
}

/// The probe's command line for `list` on a machine of `kind`: the
/// scenarios and batch options, then `cpus=N` where the kind needs more
/// than one vCPU ([`peer::cpus_for`], which also sizes the VM) and
/// `x2apic=1` for [`MachineKind::SmpX2apic`]. trapline's probe VM and the
/// QEMU peer run the same line.
pub(super) fn cmdline(list: &[&Scenario], kind: MachineKind, opts: &LabOptions) -> String {
    let ids: Vec<String> = list.iter().map(|s| s.id.id.to_string()).collect();
    let mut line = format!(
        "s={} goal={} min={} max={} warmup={}",
        ids.join(","),
        opts.goal_cycles,
        opts.min_iters,
        opts.max_iters,
        opts.warmup
    );
    let cpus = peer::cpus_for(kind);
    if cpus > 1 {
        line.push_str(&format!(" cpus={cpus}"));
    }
    if kind == MachineKind::SmpX2apic {
        line.push_str(" x2apic=1");
    }
    line
}

pub(super) fn run_probe(
    kvm: &HostKvm,
    kind: MachineKind,
    list: &[&Scenario],
    opts: &LabOptions,
    timeout: Duration,
) -> Result<ProbeOutcome, String> {
    let (tx, rx) = channel();
    let serial = Arc::new(Mutex::new(Vec::new()));
    let mut cfg = MachineConfig::new(trapline_guest::PROBE.to_vec(), "probe");
    cfg.append = cmdline(list, kind, opts);
    cfg.vcpus = peer::cpus_for(kind);
    // Each machine gets the least it needs: no scenario uses the PIT, and
    // the HLT scenario needs no interrupt controller at all.
    cfg.pit = false;
    if kind == MachineKind::NoIrqchip {
        cfg.irqchip = trapline_machine::Irqchip::None;
    }
    cfg.serial = SerialOutput::Capture(serial.clone());
    cfg.timeout = Some(timeout);
    cfg.ucall_sink = Some(tx);
    cfg.extension = Some(Box::new(LabFixtures::all()));
    // The exit profile gives trapline's own handling time per exit,
    // measured directly (`--no-stat` measures without it).
    cfg.profile = opts.stat;
    // pci-testdev on the PC's bus 0 or the virt machine's PCIe host.
    cfg.pci_testdev = true;
    cfg.ecam_ro = kind == MachineKind::EcamRo;
    cfg.seccomp = if opts.seccomp {
        SeccompMode::VcpusOnly
    } else {
        SeccompMode::Off
    };
    let machine = Machine::build(kvm, cfg).map_err(|e| format!("building the probe VM: {e}"))?;
    let handles = lab::handles(&machine).map_err(|e| format!("probe VM handles: {e}"))?;
    let consumer = Consumer::spawn(handles.doorbells, opts.seccomp)
        .map_err(|e| format!("doorbell consumer: {e}"))?;
    let pump = match pump::spawn(rx, handles.irqfd, handles.memory, opts.seccomp) {
        Ok(p) => p,
        Err(e) => {
            consumer.finish();
            return Err(format!("ucall pump: {e}"));
        }
    };
    let tsc_khz = machine.tsc_khz().unwrap_or(0) as u64;
    let functions = machine.pci().bus.devfns().count() as u64;
    let run = machine.run();
    // The machine is gone (its ucall sender with it), so the pump ends.
    let doorbells = consumer.finish();
    let pumped = pump.join().unwrap_or_default();
    let run = run.map_err(|e| format!("running the probe VM: {e}"))?;
    let readout = lab::readout(&run).ok_or("the probe VM came back without its lab devices")?;
    let serial =
        String::from_utf8_lossy(&serial.lock().unwrap_or_else(|e| e.into_inner())).into_owned();
    Ok(ProbeOutcome {
        probe: collect(pumped, doorbells, run, readout, serial, functions),
        tsc_khz,
    })
}

pub(super) fn absorb(
    acc: &mut BTreeMap<&'static str, Acc>,
    list: &[&Scenario],
    run: &ProbeRun,
    opts: &LabOptions,
) {
    // `finish(0)` leaves through the debug-exit port on x86, and powers
    // off with PSCI SYSTEM_OFF on arm64.
    let good_end = run.run.outcome == arch::GOOD_END;
    for s in list {
        let a = acc.entry(s.name()).or_default();
        let id = s.id.id;
        let Some(last) = run.batches.get(&id).and_then(|b| b.last()) else {
            // The hypercall VM runs that one scenario alone (warm-up
            // included), so a timeout there means the hypercall never
            // returned.
            let why = if s.machine == MachineKind::Hypercall && run.run.outcome == Outcome::Timeout
            {
                a.unsupported.get_or_insert(format!(
                    "the hypercall did not return within {:.0} s: the vCPU spins inside KVM_RUN (seen on nested KVM); \
                     trapline kicked and stopped it",
                    opts.hypercall_timeout.as_secs_f64()
                ));
                continue;
            } else {
                format!(
                    "no result from the probe ({}); serial tail: {}",
                    run.run.outcome.describe(),
                    tail(&run.serial)
                )
            };
            a.failure.get_or_insert(why);
            continue;
        };
        if !good_end && s.machine != MachineKind::Hypercall {
            a.failure.get_or_insert(format!(
                "probe VM ended badly: {}",
                run.run.outcome.describe()
            ));
        }
        match ResultStatus::from_raw(last.status) {
            Some(ResultStatus::Ok) => {}
            Some(ResultStatus::BadValue) => {
                a.failure.get_or_insert(bad_value(&s.id, last.value));
            }
            Some(ResultStatus::Unsupported) => {
                a.unsupported
                    .get_or_insert("the probe cannot run it on this CPU".into());
                continue;
            }
            None => {
                a.failure
                    .get_or_insert(format!("unknown status {}", last.status));
            }
        }
        // The recorded pass (tails) after the last batch: the host's
        // counters include its iterations. The guest records one only
        // after a batch whose check passed.
        let recorded = if last.status == ResultStatus::Ok as u64 {
            a.tails.absorb(
                run.tails.get(&id),
                last.iterations,
                s.id.routine == Routine::Irqfd,
            )
        } else {
            0
        };
        let total: u64 = recorded
            + opts.warmup
            + run
                .batches
                .get(&id)
                .map(|v| v.iter().map(|b| b.iterations).sum())
                .unwrap_or(0);
        let mut exits = loop_exits(last);
        if let Check::Testdev(bar, _) = s.check {
            // The guest reads pci-testdev's `count` once per batch, inside
            // the BEGIN/RESULT window: that read is not part of the loop.
            exits = exits.without(bar.count_read(), 1);
        }
        if let Err(why) = verify(s.check, last, &exits, total, recorded, run) {
            a.failure.get_or_insert(why);
        } else if a.check.is_none() {
            a.check = Some(describe_check(s.check, last.iterations));
        }
        let mut sample = Sample::new(last.iterations, last.cycles);
        sample.exits = exits;
        sample.handling = last.handling.map(|h| trapline_report::Handling {
            exits: h.exits,
            cycles: h.cycles,
        });
        sample.kvm_exits = kernel_exits(last);
        a.samples.push(sample);
    }
}

/// Why the guest reported `BadValue`: the value its ABI record says the
/// loop must read back, or else what its routine counts.
fn bad_value(id: &ScenarioId, value: u64) -> String {
    match (id.expect.value(), id.routine) {
        (Some(want), _) => format!("read back {value:#x}, expected {want:#x}"),
        (None, Routine::Ipi | Routine::Irqfd) => format!(
            "the guest's interrupt handler did not see every interrupt in time (count {value:#x})"
        ),
        (None, Routine::Pci) => format!("the guest's PCI check failed (read {value:#x})"),
        (None, Routine::Exits) => format!("the guest's check failed (value {value:#x})"),
    }
}

pub(super) fn tail(s: &str) -> String {
    let t: Vec<&str> = s.lines().rev().take(3).collect();
    t.into_iter().rev().collect::<Vec<_>>().join(" | ")
}

#[cfg(test)]
mod tests {
    use super::{bad_value, cmdline};
    use crate::catalog::{self, MachineKind};
    use crate::runner::LabOptions;
    use trapline_abi::scenario;

    #[test]
    fn the_command_line_adds_the_vcpus_and_x2apic_the_machine_kind_needs() {
        let list = [
            catalog::find("noop").unwrap(),
            catalog::find("ipi").unwrap(),
        ];
        let base = "s=0,33 goal=8388608 min=16 max=1048576 warmup=16";
        for kind in [
            MachineKind::Main,
            MachineKind::NoIrqchip,
            MachineKind::Hypercall,
            MachineKind::EcamRo,
        ] {
            assert_eq!(
                cmdline(&list, kind, &LabOptions::for_tests(None)),
                base,
                "{kind:?}"
            );
        }
        assert_eq!(
            cmdline(&list, MachineKind::Smp, &LabOptions::for_tests(None)),
            format!("{base} cpus=2")
        );
        assert_eq!(
            cmdline(&list, MachineKind::SmpX2apic, &LabOptions::for_tests(None)),
            format!("{base} cpus=2 x2apic=1")
        );
    }

    #[test]
    fn a_bad_value_names_what_the_abi_record_expected() {
        assert_eq!(
            bad_value(&scenario::PCI_CONFIG_READ_CF8, 0xffff_ffff),
            "read back 0xffffffff, expected 0x51b36"
        );
        assert_eq!(
            bad_value(&scenario::MMIO_USER_READ, 0),
            "read back 0x0, expected 0x7ab1e5ad"
        );
        assert!(bad_value(&scenario::IRQFD, 3).contains("interrupt handler"));
        assert!(bad_value(&scenario::PCI_SCAN_CF8, 3).contains("PCI check"));
    }
}
