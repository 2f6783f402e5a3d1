//! The arm64 `virt` machine's PL031 and virtio-mmio transports, built and
//! run in-process with `builtin:hello devices=1`, which prints what it
//! reads from them. Runs in the emulated ARM64 host (scripts/arm64/test.sh);
//! skips, loudly, without /dev/kvm.
#![cfg(target_arch = "aarch64")]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use trapline_devices::virtio::block::DiskFile;
use trapline_machine::{
    HostKvm, Machine, MachineConfig, Outcome, SerialOutput, VirtioIrq, VirtioNotify,
};

fn kvm(test: &str) -> Option<HostKvm> {
    if !std::path::Path::new("/dev/kvm").exists() {
        eprintln!("SKIPPED {test}: /dev/kvm is absent on this machine — this KVM test did NOT run");
        return None;
    }
    Some(HostKvm::open().expect("/dev/kvm exists but cannot be opened"))
}

/// Run hello with `devices=1`; (outcome, console).
fn hello_devices(kvm: &HostKvm, tweak: impl FnOnce(&mut MachineConfig)) -> (Outcome, String) {
    let serial = Arc::new(Mutex::new(Vec::new()));
    let mut cfg = MachineConfig::new(trapline_guest::payload("hello").unwrap().to_vec(), "hello");
    cfg.append = "devices=1".into();
    cfg.mem_mib = 64;
    cfg.serial = SerialOutput::Capture(serial.clone());
    cfg.timeout = Some(Duration::from_secs(120));
    tweak(&mut cfg);
    let report = Machine::build(kvm, cfg).expect("build").run().expect("run");
    let out = String::from_utf8_lossy(&serial.lock().unwrap()).into_owned();
    eprintln!("{out}");
    (report.outcome, out)
}

#[test]
fn a_disk_takes_transport_0_and_the_rest_stay_empty() {
    let Some(kvm) = kvm("virtio-mmio disk") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("trapline-virt-disk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("disk.img");
    std::fs::write(&path, vec![0u8; 1 << 20]).unwrap();
    // Data on every notify x irq path: crates/cli/tests/virtio_blk.rs.
    let (outcome, out) = hello_devices(&kvm, |c| {
        c.virtio.disks = vec![DiskFile::open(&path, false).unwrap()];
        c.virtio.notify = VirtioNotify::Ioeventfd;
        c.virtio.irq = VirtioIrq::Irqfd;
    });
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(outcome, Outcome::PowerOff, "{out}");
    // virtio-blk (device 2) behind the modern layout on transport 0.
    assert!(
        out.contains("virtio-mmio@a000000: magic=74726976 version=2 device-id=2"),
        "{out}"
    );
    assert!(
        out.contains("virtio-mmio@a003e00: magic=74726976 version=1 device-id=0"),
        "{out}"
    );
    assert!(out.contains("32 transports in the device tree"), "{out}");
}
