//! The seed tables: [`SEEDS`], the one list naming their files, and the
//! tables read from them.
//!
//! Adding a seed table is a file `crates/report/seeds/<view>.toml` (see
//! [`super::file`](mod@super::file)) and an entry here; its view (`--view <view>`), its part
//! of the `seeds` view and its checks follow from the list.

use std::sync::LazyLock;

use super::file;
use super::table::{Hooks, SeedTable};
use crate::views::{doorbell, paper, pci_config, pci_testdev};

/// One seed table: its view's name, its file's text and its code.
#[derive(Clone, Copy, Debug)]
pub struct SeedEntry {
    /// The view's command-line name; its file is `seeds/<name>.toml`.
    pub name: &'static str,
    /// The file's text, embedded at build time.
    pub text: &'static str,
    /// The seed's code: what its file cannot say.
    pub hooks: Hooks,
}

impl SeedEntry {
    /// Reads and checks its file.
    pub fn load(&self) -> Result<SeedTable, file::SeedFileError> {
        file::load(self.name, self.text, self.hooks)
    }
}

/// The entry for `seeds/<name>.toml`, with the seed's hooks if it has code.
macro_rules! seed {
    ($name:literal) => {
        seed!($name, Hooks::NONE)
    };
    ($name:literal, $hooks:expr) => {
        SeedEntry {
            name: $name,
            text: include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/seeds/",
                $name,
                ".toml"
            )),
            hooks: $hooks,
        }
    };
}

/// Every seed table, in seed order (`seed` in each file): the views, the
/// parts of the `seeds` view and the view names in `--help` follow it.
pub const SEEDS: &[SeedEntry] = &[
    seed!("vmexit-arm"),
    seed!("paper", paper::HOOKS),
    seed!("doorbell", doorbell::HOOKS),
    seed!("pci-testdev", pci_testdev::HOOKS),
    seed!("pci-config", pci_config::HOOKS),
];

/// The tables of [`SEEDS`], read once.
///
/// Reading cannot fail here: the files are compiled in, and the unit test
/// `every_seed_file_loads` reads every one of them with this same code, so
/// a file that does not load fails the tests before it can reach a user.
/// Hence a panic naming the file and the test rather than an error that
/// every renderer would have to carry.
static TABLES: LazyLock<Vec<SeedTable>> = LazyLock::new(|| {
    SEEDS
        .iter()
        .map(|s| {
            s.load()
                .unwrap_or_else(|e| panic!("{e} (see every_seed_file_loads)"))
        })
        .collect()
});

/// A seed table, by its place in [`SEEDS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SeedId(usize);

impl SeedId {
    /// Every seed, in [`SEEDS`] order.
    pub fn all() -> impl Iterator<Item = SeedId> {
        (0..SEEDS.len()).map(SeedId)
    }

    /// The seed whose view is called `name`.
    pub fn named(name: &str) -> Option<SeedId> {
        SEEDS.iter().position(|s| s.name == name).map(SeedId)
    }

    /// Its view's command-line name.
    pub fn name(self) -> &'static str {
        SEEDS[self.0].name
    }

    /// Its table.
    pub fn table(self) -> &'static SeedTable {
        &TABLES[self.0]
    }
}

/// Every seed table, in [`SEEDS`] order.
pub fn tables() -> impl Iterator<Item = &'static SeedTable> {
    TABLES.iter()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::views::View;

    #[test]
    fn every_seed_file_loads() {
        for s in SEEDS {
            if let Err(e) = s.load() {
                panic!("{e}");
            }
        }
    }

    #[test]
    fn the_list_is_in_seed_order_and_every_view_has_its_own_name() {
        let seeds: Vec<&str> = tables().map(|t| t.seed.as_str()).collect();
        assert!(
            seeds.windows(2).all(|w| w[0] < w[1]),
            "seed numbers repeat or are out of order: {seeds:?}"
        );
        let names: Vec<&str> = View::all().map(View::name).collect();
        for (i, n) in names.iter().enumerate() {
            assert!(!names[..i].contains(n), "two views are called {n}");
            assert_eq!(n.parse::<View>().map(View::name), Ok(*n));
        }
        for s in SEEDS {
            assert_eq!(SeedId::named(s.name).map(SeedId::name), Some(s.name));
        }
    }
}
