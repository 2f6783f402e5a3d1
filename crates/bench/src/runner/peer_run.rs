//! QEMU's runs of the probe, taken into the peer accumulators.

use std::collections::BTreeMap;

use trapline_abi::ResultStatus;
use trapline_report::Sample;

use super::Acc;
use crate::catalog::Scenario;

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
                a.check.get_or_insert("timed as an exit to QEMU's user space; nothing answers there, so the value read is all-ones".into());
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
