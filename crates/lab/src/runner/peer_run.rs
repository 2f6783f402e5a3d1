//! The peer's runs of the probe (QEMU's, or on arm64 kvmtool's): the peer
//! made ready once per lab run, and each run's results taken into the peer
//! accumulators.

use std::collections::BTreeMap;
use std::path::PathBuf;

use trapline_abi::ResultStatus;
use trapline_report::Sample;

use super::{Acc, LabOptions};
use crate::arch;
use crate::catalog::{MachineKind, Peer, Scenario};
use crate::peer::Qemu;
use crate::LabError;

/// The VMM that runs the probe's scenarios beside trapline: QEMU on both
/// architectures, kvmtool on arm64 (the probe's kvmtool build; on x86 its
/// probe rows are all n/a).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ProbePeer {
    Qemu,
    Kvmtool,
}

impl ProbePeer {
    /// The peer `opts` asks for, if it runs the probe.
    pub(super) fn of(opts: &LabOptions) -> Option<ProbePeer> {
        if opts.peer.is_some() {
            Some(ProbePeer::Qemu)
        } else if opts.kvmtool.is_some() && arch::KVMTOOL_PROBE_NOT_APPLICABLE.is_none() {
            Some(ProbePeer::Kvmtool)
        } else {
            None
        }
    }

    /// How messages name it.
    pub(super) fn name(self) -> &'static str {
        match self {
            ProbePeer::Qemu => "QEMU",
            ProbePeer::Kvmtool => "kvmtool",
        }
    }

    /// The report's `vmm` of its rows.
    pub(super) fn vmm(self) -> &'static str {
        match self {
            ProbePeer::Qemu => "qemu",
            ProbePeer::Kvmtool => "kvmtool",
        }
    }

    /// Its decision for `s` (the catalog's).
    pub(super) fn decision(self, s: &Scenario) -> Peer {
        match self {
            ProbePeer::Qemu => s.peer,
            ProbePeer::Kvmtool => crate::catalog::kvmtool_peer(s),
        }
    }

    /// Why a value read back goes unchecked there.
    pub(super) fn unchecked_value_note(self) -> &'static str {
        match self {
            ProbePeer::Qemu => "timed as an exit to QEMU's user space; nothing answers there, so the value read is QEMU's for an unassigned address",
            ProbePeer::Kvmtool => "timed as an exit to kvmtool's user space; nothing answers there and lkvm ignores the access, so the value read is whatever the exit's data held",
        }
    }

    /// Why `s` is not run on it, if it is not.
    pub(super) fn not_applicable(self, s: &Scenario) -> Option<&'static str> {
        match self.decision(s) {
            Peer::Skipped(why) => Some(why),
            Peer::Runs | Peer::ValueUnchecked => None,
        }
    }
}

/// QEMU as the lab's peer, made ready once: its scratch folder, and its
/// CPU model chosen up front (QEMU may abort with `-cpu host` on this
/// host) or why no model starts, in which case every peer run fails with
/// that reason.
pub(super) struct PeerSetup {
    /// The peer (`None` without `--peer`), with its CPU model once chosen.
    pub(super) qemu: Option<Qemu>,
    /// Where its runs keep their files (made only when a peer runs the probe).
    pub(super) dir: PathBuf,
    /// The peer that runs the probe, if any.
    pub(super) probe_peer: Option<ProbePeer>,
    /// Why QEMU cannot run the probe, if no CPU model starts.
    pub(super) unusable: Option<String>,
}

impl PeerSetup {
    /// Makes the scratch folder and chooses the CPU model, when there is a
    /// peer (the model only when `units` gives it something to run).
    pub(super) fn prepare(
        opts: &LabOptions,
        units: &[(MachineKind, Vec<&'static Scenario>)],
    ) -> Result<PeerSetup, LabError> {
        let dir = std::env::temp_dir().join(format!("trapline-peer-{}", std::process::id()));
        let probe_peer = ProbePeer::of(opts);
        if probe_peer.is_some() {
            std::fs::create_dir_all(&dir).map_err(|source| LabError::PeerDir {
                path: dir.clone(),
                source,
            })?;
        }
        let mut qemu = opts.peer.clone();
        let mut unusable = None;
        if let Some(q) = qemu.as_mut().filter(|_| !units.is_empty()) {
            if let Err(e) = q.select_cpu(&dir, opts.vm_timeout) {
                unusable = Some(e);
            }
        }
        Ok(PeerSetup {
            qemu,
            dir,
            probe_peer,
            unusable,
        })
    }

    /// Removes the scratch folder (made only when a peer runs the probe).
    pub(super) fn clean_up(&self) {
        if self.probe_peer.is_some() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// One peer run's results into the peer accumulators.
pub(super) fn absorb_peer(
    acc: &mut BTreeMap<&'static str, Acc>,
    list: &[&'static Scenario],
    res: Result<String, String>,
    peer: ProbePeer,
) {
    let who = peer.name();
    let serial = match res {
        Ok(s) => s,
        Err(e) => {
            for s in list {
                acc.entry(s.name())
                    .or_default()
                    .failure
                    .get_or_insert(e.clone());
            }
            return;
        }
    };
    let results = crate::peer::parse(&serial);
    for s in list {
        let a = acc.entry(s.name()).or_default();
        let Some(r) = results.get(s.name()) else {
            a.failure
                .get_or_insert(format!("no TRAPLINE-RESULT line from the probe on {who}"));
            continue;
        };
        match ResultStatus::from_raw(r.status) {
            Some(ResultStatus::Ok) => {}
            Some(ResultStatus::BadValue) if peer.decision(s) == Peer::ValueUnchecked => {
                a.check.get_or_insert(peer.unchecked_value_note().into());
            }
            Some(ResultStatus::BadValue) => {
                a.failure
                    .get_or_insert(format!("the probe read back {:#x} on {who}", r.value));
            }
            _ => {
                a.unsupported
                    .get_or_insert(format!("the probe could not run it on {who}"));
                continue;
            }
        }
        a.check.get_or_insert(format!(
            "the guest's own checks ({who} has no ucall port: exits are not counted)"
        ));
        a.samples.push(Sample::new(r.iterations, r.cycles));
    }
}
