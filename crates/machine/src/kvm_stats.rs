//! KVM's own counters for `--stat` and the lab: the VM's and each vCPU's
//! binary statistics (KVM_GET_STATS_FD), opened when the machine is built,
//! read before the first KVM_RUN and after the last, and — for the lab's
//! ucalls — read by the calling vCPU's thread at each BEGIN/RESULT.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use kvm_ioctls::{VcpuFd, VmFd};
use trapline_devices::ucall::{KernelCounters, KernelExitCounts, KERNEL_EXIT_COUNTERS};
use trapline_kvm::stats_fd::{DeltaValue, StatsFd, StatsSnapshot};

/// Counter deltas by name, or why there are none.
pub type Deltas = Result<Vec<(String, u64)>, String>;

/// The stats fds of one machine.
pub(crate) struct KvmStats {
    vm: Result<StatsFd, String>,
    vcpus: Vec<Result<Arc<StatsFd>, String>>,
}

/// Every fd's values at one moment (`None` where a fd is missing or a
/// read failed).
pub(crate) struct Snapshots {
    vm: Option<StatsSnapshot>,
    vcpus: Vec<Option<StatsSnapshot>>,
}

impl KvmStats {
    /// Open the VM's and every vCPU's stats fd. A kernel without them (or
    /// any other failure) is remembered as the reason, not an error: the
    /// profile goes on without KVM's side.
    pub(crate) fn open(vm: &VmFd, vcpus: &[VcpuFd]) -> Self {
        KvmStats {
            vm: StatsFd::open_vm(vm).map_err(|e| e.to_string()),
            vcpus: vcpus
                .iter()
                .map(|v| {
                    StatsFd::open_vcpu(v)
                        .map(Arc::new)
                        .map_err(|e| e.to_string())
                })
                .collect(),
        }
    }

    /// The vCPU fds, for the ucall port's reader.
    pub(crate) fn vcpu_fds(&self) -> Vec<Option<Arc<StatsFd>>> {
        self.vcpus
            .iter()
            .map(|r| r.as_ref().ok().cloned())
            .collect()
    }

    /// Read every fd now.
    pub(crate) fn snapshot(&self) -> Snapshots {
        Snapshots {
            vm: self.vm.as_ref().ok().and_then(|f| f.read().ok()),
            vcpus: self
                .vcpus
                .iter()
                .map(|r| r.as_ref().ok().and_then(|f| f.read().ok()))
                .collect(),
        }
    }

    /// The counters that moved between `start` and `end`: the VM's, then
    /// each vCPU's.
    pub(crate) fn deltas(&self, start: &Snapshots, end: &Snapshots) -> (Deltas, Vec<Deltas>) {
        let one =
            |why: Option<&String>, a: Option<&StatsSnapshot>, b: Option<&StatsSnapshot>| match (
                a, b,
            ) {
                (Some(a), Some(b)) => Ok(counts_moved(a, b)),
                _ => Err(why
                    .cloned()
                    .unwrap_or_else(|| "reading KVM's stats fd failed".to_string())),
            };
        let vm = one(self.vm.as_ref().err(), start.vm.as_ref(), end.vm.as_ref());
        let vcpus = self
            .vcpus
            .iter()
            .enumerate()
            .map(|(i, fd)| {
                one(
                    fd.as_ref().err(),
                    start.vcpus.get(i).and_then(Option::as_ref),
                    end.vcpus.get(i).and_then(Option::as_ref),
                )
            })
            .collect();
        (vm, vcpus)
    }
}

impl KvmStats {
    /// Every counter that grew since `start`, the VM's and all vCPUs'
    /// summed by name (the metrics lines' `kvm` object).
    pub(crate) fn totals_since(&self, start: &Snapshots) -> BTreeMap<String, u64> {
        let (vm, vcpus) = self.deltas(start, &self.snapshot());
        let mut sum = BTreeMap::new();
        for (name, n) in std::iter::once(vm).chain(vcpus).flatten().flatten() {
            *sum.entry(name).or_default() += n;
        }
        sum
    }
}

/// Cumulative counters that grew from `a` to `b`, in the kernel's order.
/// (Levels and histograms are left out: they are not counts of events.)
pub fn counts_moved(a: &StatsSnapshot, b: &StatsSnapshot) -> Vec<(String, u64)> {
    b.moved_since(a)
        .into_iter()
        .filter_map(|d| match d.value {
            DeltaValue::Count(n) if n > 0 => Some((d.desc.name.clone(), n)),
            _ => None,
        })
        .collect()
}

/// The ucall port's reader of [`KERNEL_EXIT_COUNTERS`]; its fds are set
/// once the vCPUs exist (the port is built before them).
#[derive(Default)]
pub(crate) struct UcallKernelCounters {
    fds: OnceLock<Vec<Option<Arc<StatsFd>>>>,
}

impl UcallKernelCounters {
    /// Give it the vCPUs' stats fds.
    pub(crate) fn set(&self, fds: Vec<Option<Arc<StatsFd>>>) {
        let _ = self.fds.set(fds);
    }
}

impl KernelCounters for UcallKernelCounters {
    fn read(&self, vcpu: usize) -> Option<KernelExitCounts> {
        let fd = self.fds.get()?.get(vcpu)?.as_ref()?;
        let snap = fd.read().ok()?;
        Some(std::array::from_fn(|i| {
            snap.value(KERNEL_EXIT_COUNTERS[i]).unwrap_or(0)
        }))
    }
}
