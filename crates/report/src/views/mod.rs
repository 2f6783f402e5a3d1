//! Views: which results a rendering shows and how they are arranged.
//!
//! Each view builds a [`Page`](crate::render::Page) (grid, sections, kut
//! lines, JSON, charts); every format renders any page. A new view (doorbell,
//! pci-testdev, pci-config, seeds, …) is a new variant here plus a module
//! implementing the trait.

pub mod all;
pub mod paper;

use crate::model::Report;
use crate::render::Page;

/// What to show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum View {
    /// Every scenario, with derived values and charts.
    #[default]
    All,
    /// The KVM/ARM paper's Table 3 rows beside its published numbers.
    Paper,
}

impl View {
    /// Every view.
    pub const ALL: [View; 2] = [View::All, View::Paper];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            View::All => "all",
            View::Paper => "paper",
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
        View::Paper => Box::new(paper::PaperView::build(report)),
    }
}
