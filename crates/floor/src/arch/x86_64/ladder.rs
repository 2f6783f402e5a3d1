//! The ladder's rungs as raw VMs: which pieces each has and which loops it
//! runs. Names, order and derived values live in `trapline_report::ladder`.

use trapline_report::ladder::{Rung, BARE, RUNGS};

use super::code::FloorKind;
use super::pieces::{Irqchip, Pieces};

/// The pieces of the rung called `vmm` (`None`: not a rung).
pub fn pieces(vmm: &str) -> Option<Pieces> {
    let mut p = Pieces::BARE;
    // Walk the main ladder up to `vmm`, adding each piece; the side rungs
    // start from their parent.
    let rung = RUNGS.iter().find(|r| r.vmm == vmm)?;
    if let Some(parent) = rung.parent {
        p = pieces(parent)?;
    }
    match rung.piece {
        "bare" => {}
        "idmap" => p.idmap_tss = true,
        "cpuid" => p.cpuid = true,
        "irqchip" => p.irqchip = Irqchip::Kernel,
        "split-irqchip" => p.irqchip = Irqchip::Split,
        "pit" => p.pit = true,
        "ioeventfds" => p.lab_ioeventfds = true,
        "coalesced" => p.coalesced = true,
        "memslots" => p.memslots = true,
        "irqfd" => p.irqfd = true,
        "64-ioeventfds" => p.extra_ioeventfds = 64,
        _ => return None,
    }
    Some(p)
}

/// The loops a rung runs: every in-kernel path and the noop baseline; the
/// bare floor also the user exit (the user-exit premium's floor).
pub fn kinds(rung: &Rung) -> Vec<FloorKind> {
    FloorKind::ALL
        .into_iter()
        .filter(|k| *k != FloorKind::PioUserOut || rung.vmm == BARE)
        .collect()
}

/// One line on what the rung is, for reports.
pub fn path(rung: &Rung) -> String {
    match rung.parent {
        None => "the probe's own loop on /dev/kvm with no VMM around it".to_string(),
        Some(p) => format!("the probe's own loop on a raw VM: {p} + {}", rung.what),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rung_has_pieces_and_the_top_one_has_trapline_s() {
        for r in &RUNGS {
            assert!(pieces(r.vmm).is_some(), "{}", r.vmm);
        }
        let pc = pieces(trapline_report::ladder::TRAPLINE_PC).unwrap();
        assert!(pc.idmap_tss && pc.cpuid && !pc.pit && pc.lab_ioeventfds);
        assert!(pieces("raw-kvm+pit").unwrap().pit);
        assert!(pc.coalesced && pc.memslots && pc.irqfd);
        assert_eq!(pc.irqchip, Irqchip::Kernel);
        assert_eq!(pieces(BARE), Some(Pieces::BARE));
        assert_eq!(
            pieces("raw-kvm+split-irqchip").unwrap().irqchip,
            Irqchip::Split
        );
    }
}
