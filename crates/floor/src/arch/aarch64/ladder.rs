//! The arm64 ladder's rungs as raw VMs: which pieces each has and which
//! loops it runs. Names, order and derived values live in
//! `trapline_report::ladder` (`ARM64_RUNGS`).

use trapline_report::ladder::{Rung, ARM64, BARE};

use super::code::FloorKind;
use super::pieces::Pieces;

/// The pieces of the rung called `vmm` (`None`: not an arm64 rung).
pub fn pieces(vmm: &str) -> Option<Pieces> {
    let mut p = Pieces::BARE;
    let rung = ARM64.rung(vmm)?;
    if let Some(parent) = rung.parent {
        p = pieces(parent)?;
    }
    match rung.piece {
        "bare" => {}
        "vgic" => p.vgic = true,
        "its" => p.its = true,
        "ioeventfds" => p.lab_ioeventfds = true,
        "coalesced" => p.coalesced = true,
        "memslots" => p.memslots = true,
        "irqfd" => p.irqfd = true,
        _ => return None,
    }
    Some(p)
}

/// The loops a rung runs: the noop baseline and every in-kernel path it
/// has (the vGIC's read only with a vGIC); the bare floor also the user
/// exit (the user-exit premium's floor).
pub fn kinds(rung: &Rung) -> Vec<FloorKind> {
    let vgic = pieces(rung.vmm).is_some_and(|p| p.vgic);
    FloorKind::ALL
        .into_iter()
        .filter(|k| *k != FloorKind::MmioUserWrite || rung.vmm == BARE)
        .filter(|k| *k != FloorKind::MmioVgicRead || vgic)
        .collect()
}

/// One line on what the rung is, for reports.
pub fn path(rung: &Rung) -> String {
    match rung.parent {
        None => "the arm64 probe's own loop on /dev/kvm with no VMM around it".to_string(),
        Some(p) => format!(
            "the arm64 probe's own loop on a raw VM: {p} + {}",
            rung.what
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trapline_report::ladder::TRAPLINE_VIRT;

    #[test]
    fn every_arm64_rung_has_pieces_and_the_top_one_has_trapline_s() {
        for r in ARM64.rungs {
            assert!(pieces(r.vmm).is_some(), "{}", r.vmm);
        }
        let top = pieces(TRAPLINE_VIRT).unwrap();
        assert!(top.vgic && top.its && top.lab_ioeventfds && top.coalesced);
        assert!(top.memslots && top.irqfd);
        assert_eq!(pieces(BARE), Some(Pieces::BARE));
        assert!(pieces("raw-kvm+pit").is_none(), "an x86 rung");
    }

    #[test]
    fn the_vgic_read_runs_where_there_is_a_vgic_and_the_user_exit_on_the_bare_floor() {
        let bare = kinds(ARM64.rung(BARE).unwrap());
        assert!(bare.contains(&FloorKind::MmioUserWrite));
        assert!(!bare.contains(&FloorKind::MmioVgicRead));
        let vgic = kinds(ARM64.rung("raw-kvm+vgic").unwrap());
        assert!(vgic.contains(&FloorKind::MmioVgicRead));
        assert!(!vgic.contains(&FloorKind::MmioUserWrite));
        for r in ARM64.rungs {
            let k = kinds(r);
            assert_eq!(k[0], FloorKind::Noop);
            for path in ARM64.kernel_paths {
                let runs = k.iter().any(|k| k.name() == *path);
                assert_eq!(
                    runs,
                    *path != "mmio-vgic-read" || pieces(r.vmm).unwrap().vgic,
                    "{}: {path}",
                    r.vmm
                );
            }
        }
    }
}
