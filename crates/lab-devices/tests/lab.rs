//! The lab installs itself through the machine's extension point: a
//! machine built with `LabFixtures` has the probe devices, the doorbell and
//! the fast paths; one built without has none, and asking it for the lab's
//! handles is a clear error. Skips, loudly, without /dev/kvm.
#![cfg(target_arch = "x86_64")]

use std::time::Duration;

use trapline_lab_devices::{self as lab, HandlesError, LabFixtures};
use trapline_machine::{HostKvm, Machine, MachineConfig, Outcome, SerialOutput};

fn kvm(test: &str) -> Option<HostKvm> {
    if !std::path::Path::new("/dev/kvm").exists() {
        eprintln!("SKIPPED {test}: /dev/kvm is absent on this machine — this KVM test did NOT run");
        return None;
    }
    Some(HostKvm::open().unwrap())
}

fn hello(extension: Option<LabFixtures>) -> MachineConfig {
    let mut cfg = MachineConfig::new(trapline_guest::HELLO.to_vec(), "hello");
    cfg.serial = SerialOutput::Sink;
    cfg.timeout = Some(Duration::from_secs(60));
    cfg.extension = extension.map(|f| Box::new(f) as Box<dyn trapline_machine::MachineExtension>);
    cfg
}

#[test]
fn the_lab_brings_its_devices_and_fast_paths_and_reads_them_back() {
    let Some(kvm) = kvm("lab extension") else {
        return;
    };
    let m = Machine::build(&kvm, hello(Some(LabFixtures::all()))).unwrap();
    let pio: Vec<&str> = m.pio_bus().mappings().iter().map(|x| x.name).collect();
    assert!(pio.contains(&"probe"), "{pio:?}");
    let mmio: Vec<&str> = m.mmio_bus().mappings().iter().map(|x| x.name).collect();
    for want in ["probe", "probe-ro-memslot", "doorbell"] {
        assert!(mmio.contains(&want), "{want} missing from {mmio:?}");
    }
    let h = lab::handles(&m).unwrap();
    let names: Vec<&str> = h.doorbells.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        [
            "doorbell-user-mmio",
            "doorbell-mmio",
            "doorbell-pio",
            "doorbell-pv"
        ]
    );
    assert!(h.irqfd.is_some(), "the irqfd (the default irqchip has one)");
    let r = m.run().unwrap();
    assert_eq!(r.outcome, Outcome::DebugExit(0));
    let readout = lab::readout(&r).expect("the lab comes back in the report");
    assert_eq!(
        readout.ioevent_counts.keys().copied().collect::<Vec<_>>(),
        [
            "doorbell-mmio",
            "doorbell-pio",
            "doorbell-pv",
            "mmio-datamatch",
            "mmio-wildcard",
            "pio-datamatch",
            "pio-wildcard"
        ]
    );
    // hello touches none of the lab's addresses.
    assert!(readout.ioevent_counts.values().all(|n| *n == 0));
    assert_eq!(readout.probe_pio.last_value(), 0);
}

#[test]
fn without_the_lab_the_machine_has_none_of_it() {
    let Some(kvm) = kvm("no lab") else { return };
    let m = Machine::build(&kvm, hello(None)).unwrap();
    assert!(matches!(lab::handles(&m), Err(HandlesError::NotInstalled)));
    let names: Vec<&str> = m
        .pio_bus()
        .mappings()
        .iter()
        .chain(m.mmio_bus().mappings())
        .map(|x| x.name)
        .collect();
    for lab_only in ["probe", "probe-ro-memslot", "doorbell"] {
        assert!(!names.contains(&lab_only), "{lab_only} in {names:?}");
    }
    let r = m.run().unwrap();
    assert_eq!(r.outcome, Outcome::DebugExit(0));
    assert!(lab::readout(&r).is_none());
}
