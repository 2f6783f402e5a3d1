//! KVM's binary statistics read from a real VM and vCPU. Skips, loudly,
//! without /dev/kvm; says so, and passes, on a kernel without
//! KVM_GET_STATS_FD (before 5.14). x86 only for now: the counters it
//! names (`io_exits`, `halt_exits`) are x86's.
#![cfg(target_arch = "x86_64")]

use trapline_kvm::stats_fd::{StatKind, StatsFd};
use trapline_kvm::{HostKvm, Vm, VmConfig};

fn kvm(test: &str) -> Option<HostKvm> {
    if !std::path::Path::new("/dev/kvm").exists() {
        eprintln!("SKIPPED {test}: /dev/kvm is absent on this machine — this KVM test did NOT run");
        return None;
    }
    Some(HostKvm::open().expect("/dev/kvm exists but cannot be opened"))
}

#[test]
fn vm_and_vcpu_stats_name_the_usual_counters_and_read_twice() {
    let Some(kvm) = kvm("vm_and_vcpu_stats_name_the_usual_counters_and_read_twice") else {
        return;
    };
    let vm = Vm::new(
        &kvm,
        VmConfig {
            mem_bytes: 2 << 20,
            vcpus: 1,
            irqchip: trapline_kvm::Irqchip::Kernel,
            pit: true,
            cpu: Default::default(),
        },
    )
    .expect("VM");
    let vcpu = vm.create_vcpu(0, None).expect("vCPU");

    let vcpu_stats = match StatsFd::open_vcpu(&vcpu) {
        Ok(s) => s,
        Err(e) if e.is_unsupported() => {
            eprintln!("SKIPPED stats checks: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let vm_stats = StatsFd::open_vm(vm.fd()).expect("VM stats fd");

    let names: Vec<&str> = vcpu_stats
        .descriptors()
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    eprintln!("vCPU stats id {:?}: {}", vcpu_stats.id(), names.join(" "));
    for want in ["exits", "io_exits", "halt_exits"] {
        assert!(names.contains(&want), "vCPU stats lack {want}: {names:?}");
    }
    let exits = &vcpu_stats.descriptors()[names.iter().position(|n| *n == "exits").unwrap()];
    assert_eq!(exits.kind, StatKind::Cumulative);

    let vm_names: Vec<&str> = vm_stats
        .descriptors()
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    eprintln!("VM stats id {:?}: {}", vm_stats.id(), vm_names.join(" "));
    assert!(
        vm_names
            .iter()
            .any(|n| ["remote_tlb_flush", "remote_tlb_flush_requests"].contains(n)),
        "VM stats lack remote_tlb_flush: {vm_names:?}"
    );

    // Nothing runs: both reads succeed and the vCPU has no exits yet.
    for stats in [&vcpu_stats, &vm_stats] {
        let first = stats.read().expect("first read");
        let second = stats.read().expect("second read");
        assert_eq!(second.delta(&first).len(), stats.descriptors().len());
        for (desc, values) in second.iter() {
            assert_eq!(values.len(), usize::from(desc.size), "{}", desc.name);
        }
    }
    let snap = vcpu_stats.read().unwrap();
    assert_eq!(snap.value("exits"), Some(0));
    if let Some(h) = vcpu_stats
        .descriptors()
        .iter()
        .find(|d| d.name == "halt_wait_hist")
    {
        assert!(h.kind.is_histogram() && h.size > 1, "{h:?}");
        assert_eq!(
            snap.get("halt_wait_hist").map(<[u64]>::len),
            Some(h.size.into())
        );
    }
}
