//! QEMU's runs of the probe: the peer made ready once per lab run, and
//! each run's results taken into the peer accumulators.

use std::collections::BTreeMap;
use std::path::PathBuf;

use trapline_abi::ResultStatus;
use trapline_report::Sample;

use super::{Acc, LabOptions};
use crate::catalog::{MachineKind, Scenario};
use crate::peer::Qemu;
use crate::LabError;

/// QEMU as the lab's peer, made ready once: its scratch folder, and its
/// CPU model chosen up front (QEMU may abort with `-cpu host` on this
/// host) or why no model starts, in which case every peer run fails with
/// that reason.
pub(super) struct PeerSetup {
    /// The peer (`None` without `--peer`), with its CPU model once chosen.
    pub(super) qemu: Option<Qemu>,
    /// Where its runs keep their files (made only with `--peer`).
    pub(super) dir: PathBuf,
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
        if opts.peer.is_some() {
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
            unusable,
        })
    }

    /// Removes the scratch folder (made only with `--peer`).
    pub(super) fn clean_up(&self) {
        if self.qemu.is_some() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// One QEMU run's results into the peer accumulators.
pub(super) fn absorb_peer(
    acc: &mut BTreeMap<&'static str, Acc>,
    list: &[&'static Scenario],
    res: Result<String, String>,
) {
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
                .get_or_insert("no TRAPLINE-RESULT line from the probe on QEMU".into());
            continue;
        };
        match ResultStatus::from_raw(r.status) {
            Some(ResultStatus::Ok) => {}
            Some(ResultStatus::BadValue) if crate::peer::value_unchecked(s) => {
                a.check.get_or_insert("timed as an exit to QEMU's user space; nothing answers there, so the value read is QEMU's for an unassigned address".into());
            }
            Some(ResultStatus::BadValue) => {
                a.failure
                    .get_or_insert(format!("the probe read back {:#x} on QEMU", r.value));
            }
            _ => {
                a.unsupported
                    .get_or_insert("the probe could not run it on QEMU".into());
                continue;
            }
        }
        a.check.get_or_insert(
            "the guest's own checks (QEMU has no ucall port: exits are not counted)".into(),
        );
        a.samples.push(Sample::new(r.iterations, r.cycles));
    }
}
