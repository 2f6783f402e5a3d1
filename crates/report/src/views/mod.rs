//! Views: which results a rendering shows and how they are arranged.
//!
//! Each view builds a `Page` (`render.rs`) (grid, sections, kut
//! lines, JSON, charts); every format renders any page. A new view is a new
//! variant here plus a module implementing the trait. The seed views
//! (`vmexit-arm`, `paper`, `doorbell`, `pci-testdev`, `pci-config`) set this
//! host beside one published source each: each is a data file read into a
//! [`seed::SeedTable`] and rendered by the one [`seed::SeedView`] (a new
//! seed is a file and an entry in [`seed::SEEDS`]); the modules named after
//! them hold only their code (conclusions computed in
//! [`crate::derive::findings`]). `seeds` shows them all. `vmm` shows
//! trapline's own footprint and cost per exit; `tails` every scenario's
//! recorded distribution.

pub mod all;
pub mod anatomy;
pub mod common;
pub mod doorbell;
pub mod paper;
pub mod paper_pair;
pub mod pci_config;
pub mod pci_testdev;
mod peer;
pub mod seed;
pub mod seeds;
pub mod tails;
pub mod vmm;

use crate::model::Report;
use crate::render::{render_page, Format, Page};
use seed::SeedId;

/// What to show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum View {
    /// Every scenario, with derived values and charts.
    #[default]
    All,
    /// One seed table's rows beside its published numbers (`--view
    /// paper`, `doorbell`, …: one per entry of [`seed::SEEDS`]).
    Seed(SeedId),
    /// Every seed view, one after another.
    Seeds,
    /// trapline's own footprint against its goals and Firecracker's
    /// promises, and its cost per exit.
    Vmm,
    /// Every scenario's recorded distribution: p50 … max beside its median.
    Tails,
    /// Each user path's round trip split into exit, handling and entry,
    /// on trapline and the raw-KVM floor.
    Anatomy,
}

impl View {
    /// Every view: `all`, each seed table in seed order, `seeds`, `vmm`.
    pub fn all() -> impl Iterator<Item = View> {
        std::iter::once(View::All)
            .chain(SeedId::all().map(View::Seed))
            .chain([View::Seeds, View::Vmm, View::Tails, View::Anatomy])
    }

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            View::All => "all",
            View::Seed(s) => s.name(),
            View::Seeds => "seeds",
            View::Vmm => "vmm",
            View::Tails => "tails",
            View::Anatomy => "anatomy",
        }
    }

    /// What it shows, in one line (for `--help`).
    pub fn about(self) -> String {
        match self {
            View::All => "every scenario, derived values, checks and host context".into(),
            View::Seed(s) => {
                let t = s.table();
                if t.title.contains(&t.seed) {
                    t.title.clone()
                } else {
                    format!("{} (seed {})", t.title, t.seed)
                }
            }
            View::Seeds => "every seed table, one after another".into(),
            View::Vmm => {
                "trapline's own footprint and cost per exit, and the floor ladder's table".into()
            }
            View::Tails => {
                "every scenario's distribution: p50, p90, p99, p99.9 and max beside its median"
                    .into()
            }
            View::Anatomy => {
                "each user exit split into exit, handling and entry, trapline beside the floor"
                    .into()
            }
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
        View::all()
            .find(|v| v.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                let names: Vec<&str> = View::all().map(View::name).collect();
                format!("unknown view {s:?} (expected one of: {})", names.join(", "))
            })
    }
}

/// The page for `view`.
pub(crate) fn page(report: &Report, view: View) -> Box<dyn Page + '_> {
    match view {
        View::All => Box::new(all::AllPage::new(report)),
        View::Seed(s) => Box::new(seed::SeedView::build(report, s.table())),
        View::Seeds => Box::new(seeds::SeedsView::build(report)),
        View::Vmm => Box::new(vmm::VmmView::build(report)),
        View::Tails => Box::new(tails::TailsView::build(report)),
        View::Anatomy => Box::new(anatomy::AnatomyView::build(report)),
    }
}

/// Renders `report` in `format`, showing `view` (BMF and TAP list every
/// scenario whatever the view).
pub fn render(report: &Report, format: Format, view: View) -> String {
    render_page(report, page(report, view).as_ref(), format, None)
}

/// [`render`] for a terminal `width` columns wide: in the table format no
/// line is wider (long texts wrap at words, tables wrap their last column
/// or leave columns out and say which, and how to see them all). `None`
/// (a file or a pipe) keeps every line whole; other formats ignore it.
pub fn render_width(report: &Report, format: Format, view: View, width: Option<usize>) -> String {
    render_page(report, page(report, view).as_ref(), format, width)
}
