//! Machines built and run in-process: the hostile guest, SMP check-ins,
//! ucall plumbing. Skips, loudly, without /dev/kvm.
#![cfg(target_arch = "x86_64")]

use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use trapline_abi::UcallKind;
use trapline_bus::{ExitKind, ExitSnapshot};
use trapline_machine::{HostKvm, Machine, MachineConfig, Outcome, SerialOutput, UcallEvent};

fn kvm(test: &str) -> Option<HostKvm> {
    if !std::path::Path::new("/dev/kvm").exists() {
        eprintln!("SKIPPED {test}: /dev/kvm is absent on this machine — this KVM test did NOT run");
        return None;
    }
    Some(HostKvm::open().expect("/dev/kvm exists but cannot be opened"))
}

struct Ran {
    outcome: Outcome,
    events: Vec<UcallEvent>,
    exits: Vec<ExitSnapshot>,
    serial: String,
}

fn run(
    kvm: &HostKvm,
    payload: &str,
    append: &str,
    vcpus: u32,
    tweak: impl FnOnce(&mut MachineConfig),
) -> Ran {
    let (tx, rx) = channel();
    let serial = Arc::new(Mutex::new(Vec::new()));
    let mut cfg = MachineConfig::new(trapline_guest::payload(payload).unwrap().to_vec(), payload);
    cfg.append = append.into();
    cfg.vcpus = vcpus;
    cfg.serial = SerialOutput::Capture(serial.clone());
    cfg.timeout = Some(Duration::from_secs(120));
    cfg.ucall_sink = Some(tx);
    tweak(&mut cfg);
    let report = Machine::build(kvm, cfg).expect("build").run().expect("run");
    let serial = String::from_utf8_lossy(&serial.lock().unwrap()).into_owned();
    Ran {
        outcome: report.outcome,
        events: rx.try_iter().collect(),
        exits: report.exits,
        serial,
    }
}

#[test]
fn a_hostile_guest_leaves_the_vmm_running_and_every_mmio_access_is_accounted_for() {
    let Some(kvm) = kvm("hostile") else { return };
    for (seed, devices) in [(1, false), (2, true), (3, true)] {
        let r = run(&kvm, "hostile", &format!("n=4000 seed={seed}"), 1, |c| {
            // With and without the optional devices: pci-testdev's BARs,
            // pc-testdev's scratch MMIO, the read-only ECAM shadow.
            c.pci_testdev = devices;
            c.pc_testdev = devices;
            c.ecam_ro = devices;
        });
        assert_eq!(
            r.outcome,
            Outcome::DebugExit(0),
            "seed {seed}: {}",
            r.serial
        );
        let count = |what: u64| {
            r.events
                .iter()
                .find(|e| e.kind == UcallKind::Count && e.args[0] == what)
                .unwrap_or_else(|| panic!("no COUNT({what}) ucall; serial: {}", r.serial))
                .args[1]
        };
        let (pio, mmio) = (count(1), count(2));
        assert_eq!(pio + mmio, 4000, "seed {seed}");
        let e = &r.exits[0];
        // Every random MMIO address lies outside RAM and off KVM's own
        // LAPIC/IOAPIC pages, so each access is exactly one exit to us —
        // except reads of the read-only ECAM shadow, which never exit.
        let mmio_exits = e.get(ExitKind::MmioRead) + e.get(ExitKind::MmioWrite);
        if devices {
            assert!(
                mmio_exits <= mmio && mmio_exits + 200 > mmio,
                "seed {seed}: {mmio_exits} exits for {mmio}"
            );
        } else {
            assert_eq!(mmio_exits, mmio, "seed {seed}");
        }
        // Most ports are ours (or nobody's); the in-kernel PIC/PIT/ELCR
        // ports are the few that do not exit.
        let pio_exits = e.get(ExitKind::PioRead) + e.get(ExitKind::PioWrite);
        assert!(
            pio_exits > pio / 2,
            "seed {seed}: {pio_exits} PIO exits for {pio} accesses"
        );
        assert!(e.get(ExitKind::UnmappedPio) > 0 && e.get(ExitKind::UnmappedMmio) > 0);
        assert!(
            r.serial.contains("hostile:"),
            "the UART still works afterwards: {}",
            r.serial
        );
    }
}

#[test]
fn every_vcpu_checks_in_through_ucalls() {
    let Some(kvm) = kvm("smp check-in") else {
        return;
    };
    for n in [2u32, 3, 4] {
        let r = run(&kvm, "smp", &format!("cpus={n}"), n, |_| {});
        assert_eq!(r.outcome, Outcome::DebugExit(0), "{n} vCPUs: {}", r.serial);
        let mut ids: Vec<u64> = r
            .events
            .iter()
            .filter(|e| e.kind == UcallKind::Checkin)
            .map(|e| e.args[0])
            .collect();
        ids.sort();
        assert_eq!(ids, (0..n as u64).collect::<Vec<_>>(), "{}", r.serial);
        // Each vCPU's ucall came from its own thread and counters.
        for e in r.events.iter().filter(|e| e.kind == UcallKind::Checkin) {
            assert_eq!(e.vcpu as u64, e.args[0]);
        }
        assert_eq!(r.exits.len(), n as usize);
    }
}

#[test]
fn more_vcpus_than_the_guest_waits_for_is_fine_and_fewer_times_out_cleanly() {
    let Some(kvm) = kvm("smp mismatch") else {
        return;
    };
    // The guest waits for 3 CPUs but only 2 exist: it gives up by itself
    // (exit 1) well before our timeout; no vCPU thread is left behind.
    let r = run(&kvm, "smp", "cpus=3", 2, |c| {
        c.timeout = Some(Duration::from_secs(90))
    });
    assert!(
        matches!(r.outcome, Outcome::DebugExit(1) | Outcome::Timeout),
        "{:?}",
        r.outcome
    );
}

#[test]
fn the_machine_has_the_pc_platform() {
    let Some(kvm) = kvm("platform") else { return };
    let mut cfg = MachineConfig::new(trapline_guest::HELLO.to_vec(), "hello");
    cfg.pci_testdev = true;
    cfg.serial = SerialOutput::Sink;
    let m = Machine::build(&kvm, cfg).unwrap();
    let names: Vec<&str> = m.pio_bus().mappings().iter().map(|x| x.name).collect();
    for want in [
        "com1",
        "isa-debug-exit",
        "ucall",
        "pci-config",
        "fw_cfg",
        "acpi-pm",
        "pv-doorbell",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    let mm: Vec<&str> = m.mmio_bus().mappings().iter().map(|x| x.name).collect();
    for want in ["pci-ecam", "pci-mmio-window", "lapic-fallback"] {
        assert!(mm.contains(&want), "{want} missing from {mm:?}");
    }
    // ACPI tables are in guest memory where guests look for them.
    use vm_memory::{Bytes, GuestAddress};
    let mut sig = [0u8; 8];
    let found = (0xe0000u64..0x100000).step_by(16).any(|a| {
        m.vm()
            .memory()
            .read_slice(&mut sig, GuestAddress(a))
            .is_ok()
            && &sig == b"RSD PTR "
    });
    assert!(found, "no RSDP in 0xE0000-0xFFFFF");
    assert_eq!(m.pci().bus.devfns().count(), 2, "host bridge + pci-testdev");
}

/// A machine built without an extension (a plain `trapline run`) maps
/// nothing of the lab: no device on the probe ports or in the probe MMIO
/// window; one built with an extension has what the extension inserted,
/// gets its handle back before and after the run, and serves the fast
/// port in the run loop.
#[test]
fn the_lab_window_is_mapped_only_through_an_extension() {
    use trapline_abi as abi;
    use trapline_bus::Access;
    let Some(kvm) = kvm("extension") else { return };
    let plain = |cfg: &mut MachineConfig| {
        cfg.pci_testdev = true;
        cfg.pc_testdev = true;
    };
    let mut cfg = MachineConfig::new(trapline_guest::HELLO.to_vec(), "hello");
    cfg.serial = SerialOutput::Sink;
    plain(&mut cfg);
    let m = Machine::build(&kvm, cfg).unwrap();
    let mut d = [0u8; 4];
    for addr in (abi::PROBE_MMIO_BASE..abi::PROBE_MMIO_BASE + abi::PROBE_MMIO_LEN)
        .step_by(abi::PROBE_PAGE_SIZE as usize)
    {
        assert_eq!(
            m.mmio_bus().read(0, addr, &mut d),
            Access::Unmapped,
            "{addr:#x} is mapped without the lab"
        );
    }
    // One byte per port: a wider read at the last ports would run on into
    // the PV doorbell at PV_DOORBELL_PORT, as it would on QEMU.
    for port in abi::PROBE_PIO_USER_PORT..abi::PV_DOORBELL_PORT {
        assert_eq!(
            m.pio_bus().read(0, port.into(), &mut d[..1]),
            Access::Unmapped,
            "port {port:#x} is mapped without the lab"
        );
    }
    assert!(m.extension::<u32>().is_none());
    drop(m);

    /// A stand-in lab device: reads return a marker.
    struct Marker;
    impl trapline_bus::BusDevice for Marker {
        fn read(&self, _vcpu: usize, _base: u64, _offset: u64, data: &mut [u8]) {
            data.fill(0x5a);
        }
        fn write(
            &self,
            _vcpu: usize,
            _base: u64,
            _offset: u64,
            _data: &[u8],
        ) -> trapline_bus::IoOutcome {
            trapline_bus::IoOutcome::Continue
        }
        fn access_sizes(&self) -> trapline_bus::AccessSizes {
            trapline_bus::AccessSizes::ANY
        }
    }
    let serial = Arc::new(Mutex::new(Vec::new()));
    let mut cfg = MachineConfig::new(trapline_guest::HELLO.to_vec(), "hello");
    cfg.serial = SerialOutput::Capture(serial.clone());
    cfg.timeout = Some(Duration::from_secs(120));
    plain(&mut cfg);
    let install = |ctx: &mut trapline_machine::ExtensionContext<'_>| {
        ctx.mmio.insert(
            "marker",
            abi::PROBE_MMIO_BASE,
            abi::PROBE_PAGE_SIZE,
            Arc::new(Marker),
        )?;
        ctx.set_fast_port(abi::COM1_PORT);
        Ok(Box::new(7u32) as trapline_machine::ExtensionHandle)
    };
    cfg.extension = Some(Box::new(install));
    let m = Machine::build(&kvm, cfg).unwrap();
    assert_eq!(
        m.mmio_bus().read(0, abi::PROBE_MMIO_BASE, &mut d),
        Access::Handled(trapline_bus::IoOutcome::Continue)
    );
    assert_eq!(d, [0x5a; 4]);
    assert_eq!(m.extension::<u32>(), Some(&7));
    assert!(m.extension::<u64>().is_none(), "the handle is typed");
    // The fast port is COM1's data register: hello's console output is
    // taken in the run loop (counted as floor exits) and never reaches
    // the UART.
    let r = m.run().unwrap();
    assert_eq!(r.outcome, Outcome::DebugExit(0));
    assert!(r.exits[0].get(ExitKind::FastPort) >= 1);
    assert!(serial.lock().unwrap().is_empty(), "the UART saw an OUT");
    let handle = r.extension.expect("the handle comes back after the run");
    assert_eq!(handle.downcast_ref::<u32>(), Some(&7));
}
