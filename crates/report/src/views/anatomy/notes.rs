//! The anatomy view's notes: how it was measured, each path's sum check,
//! what each leg is (tied to the seeds' explanations), and the paths that
//! were not split.

use super::{source_name, AnatomyView};
use crate::fmt;
use crate::render::grid::Section;

/// What each leg holds, tied to the published explanations the seed
/// views quote (the KVM/ARM paper's Table 3 notes, the user-space hop).
pub const LEG_MEANINGS: [&str; 3] = [
    "exit (guest → VMM): the world switch out of the guest, KVM's exit handling and its return \
     to user space — the first of the hypercall's \"two world switches\"; on arm64 it includes \
     saving the guest's VGIC state (\"saving and restoring VGIC state accounts for over half of \
     the cost\")",
    "handling: the VMM's own work between KVM_RUN's return and its next entry (decode, bus \
     lookup, device) — the part of \"the userspace hop\" a VMM controls",
    "entry (VMM → guest): the KVM_RUN ioctl, KVM's entry path and the world switch back in — \
     the second world switch, with the VGIC restore on arm64; exit + entry is the hop's price \
     beyond the VMM's handling (\"we save about 4us by skipping the userspace hop\")",
];

/// How the legs are measured, in a few lines.
const METHOD: [&str; 4] = [
    "Four stamps per access: the guest's clock just before and just after it; the VMM's \
     when KVM_RUN returns and just before it enters again, published into a mailbox in guest \
     memory (the raw floor keeps them in its own arrays). KVM's clock offset puts both on one \
     time line; an access counts only with exactly one exit between its stamps and every leg \
     non-negative.",
    "Each access is stamped in one asm statement (lfence; rdtsc, or isb; mrs cntvct_el0): on a \
     nested host the guest's instructions around an exit may be emulated, so nothing else lies \
     in the window. The two clock reads' own cost (measured with nothing between them) is split \
     between exit and entry and taken off the sum before the check.",
    "On a nested host every leg includes the outer hypervisor's own exit and entry; on an \
     emulated host (TCG) the numbers show behaviour only.",
    "The legs' medians need not add up to the median round trip exactly (medians do not add); \
     the check holds them to 5 % of the path's cost per iteration from its timed batches.",
];

pub(super) fn sections(v: &AnatomyView<'_>) -> Vec<Section> {
    let Some(a) = v.anatomy else {
        return vec![Section {
            heading: "No anatomy".into(),
            items: vec![
                "This run measured no anatomy: run `trapline bench --view anatomy` (the \
                 anatomy pass runs only for this view)."
                    .into(),
            ],
            fold: false,
        }];
    };
    let mut how: Vec<String> = a.notes.clone();
    how.push(format!("{} accesses per path and VMM.", a.iterations));
    how.extend(METHOD.iter().map(|s| s.to_string()));
    let checks = v
        .paths()
        .iter()
        .filter_map(|p| {
            let (c, src) = p.sum_check()?;
            let (e, h, n) = (p.exit?.p50, p.handling?.p50, p.entry?.p50);
            let stamps = match (src, p.stamp_cost) {
                (crate::model::RoundTripSource::Stamped, _) | (_, None) => String::new(),
                (_, Some(s)) => format!(" − stamps {}", fmt::cycles(s as f64)),
            };
            Some(format!(
                "{} on {}: {} + {} + {}{stamps} = {} against {} ({}): {:+.1} % ({})",
                p.name,
                p.vmm,
                fmt::cycles(e as f64),
                fmt::cycles(h as f64),
                fmt::cycles(n as f64),
                fmt::cycles(c.sum),
                fmt::cycles(c.round),
                source_name(src),
                c.gap_pct,
                if c.within(trapline_abi::ANATOMY_SUM_TOLERANCE_PCT) {
                    "within 5 %"
                } else {
                    "outside 5 %"
                }
            ))
        })
        .collect();
    let unsplit: Vec<String> = v
        .paths()
        .iter()
        .filter(|p| !p.has_legs())
        .map(|p| {
            format!(
                "{} on {}: {}",
                p.name,
                p.vmm,
                p.reason.as_deref().unwrap_or("no legs")
            )
        })
        .collect();
    let mut out = vec![
        Section {
            heading: "How it was measured".into(),
            items: how,
            fold: false,
        },
        Section {
            heading: "Do the legs add up?".into(),
            items: checks,
            fold: false,
        },
        Section {
            heading: "What each leg is".into(),
            items: LEG_MEANINGS.iter().map(|s| s.to_string()).collect(),
            fold: false,
        },
    ];
    if !unsplit.is_empty() {
        out.push(Section {
            heading: "Not split".into(),
            items: unsplit,
            fold: false,
        });
    }
    out
}
