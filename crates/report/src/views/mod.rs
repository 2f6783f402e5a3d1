//! Views: which results a rendering shows and how they are arranged.
//!
//! Each view builds a `Page` (`render.rs`) (grid, sections, kut
//! lines, JSON, charts); every format renders any page. A new view is a new
//! variant here plus a module implementing the trait. The seed views
//! (`vmexit-arm`, `paper`, `doorbell`, `pci-testdev`, `pci-config`) set this
//! host beside one published source each, keeping its numbers in one
//! constant [`seed::SeedTable`] rendered by the one [`seed::SeedView`],
//! their conclusions computed in [`crate::derive::findings`]. `seeds` shows
//! them all. `vmm` shows trapline's own footprint and cost per exit.

pub mod all;
pub mod common;
pub mod doorbell;
pub mod paper;
pub mod pci_config;
pub mod pci_testdev;
pub mod seed;
pub mod seeds;
pub mod vmexit_arm;
pub mod vmm;

use crate::model::Report;
use crate::render::{render_page, Format, Page};

/// What to show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum View {
    /// Every scenario, with derived values and charts.
    #[default]
    All,
    /// The KVM/ARM paper's Table 3 rows beside its published numbers (seed 001).
    Paper,
    /// kvm-unit-tests' pci-testdev rows beside seed 003.
    PciTestdev,
    /// PCI config reads (CF8, ECAM, read-only ECAM) beside seed 004.
    PciConfig,
    /// Doorbell IOPS and round trips beside seed 002.
    Doorbell,
    /// kvm-unit-tests' ARM vmexit list beside seed 000.
    VmexitArm,
    /// Every seed view, one after another.
    Seeds,
    /// trapline's own footprint against its goals and Firecracker's
    /// promises, and its cost per exit.
    Vmm,
}

impl View {
    /// Every view.
    pub const ALL: [View; 8] = [
        View::All,
        View::Paper,
        View::PciTestdev,
        View::PciConfig,
        View::Doorbell,
        View::VmexitArm,
        View::Seeds,
        View::Vmm,
    ];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            View::All => "all",
            View::Paper => "paper",
            View::PciTestdev => "pci-testdev",
            View::PciConfig => "pci-config",
            View::Doorbell => "doorbell",
            View::VmexitArm => "vmexit-arm",
            View::Seeds => "seeds",
            View::Vmm => "vmm",
        }
    }
}

impl std::fmt::Display for View {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for View {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        View::ALL
            .into_iter()
            .find(|v| v.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                let names: Vec<&str> = View::ALL.iter().map(|v| v.name()).collect();
                format!("unknown view {s:?} (expected one of: {})", names.join(", "))
            })
    }
}

/// The page for `view`.
pub(crate) fn page(report: &Report, view: View) -> Box<dyn Page + '_> {
    match view {
        View::All => Box::new(all::AllPage::new(report)),
        View::Paper => Box::new(seed::SeedView::build(report, &paper::TABLE)),
        View::PciTestdev => Box::new(seed::SeedView::build(report, &pci_testdev::TABLE)),
        View::PciConfig => Box::new(seed::SeedView::build(report, &pci_config::TABLE)),
        View::Doorbell => Box::new(seed::SeedView::build(report, &doorbell::TABLE)),
        View::VmexitArm => Box::new(seed::SeedView::build(report, &vmexit_arm::TABLE)),
        View::Seeds => Box::new(seeds::SeedsView::build(report)),
        View::Vmm => Box::new(vmm::VmmView::build(report)),
    }
}

/// Renders `report` in `format`, showing `view` (BMF and TAP list every
/// scenario whatever the view).
pub fn render(report: &Report, format: Format, view: View) -> String {
    render_page(report, page(report, view).as_ref(), format)
}
