//! The seed tables and the one view that shows any of them.
//!
//! Each published table ("seed") is data: a TOML file
//! `crates/report/seeds/<view>.toml` ([`mod@file`]: its rows, published values
//! and units, the scenario measuring each row, source, captions, notes
//! and chart), embedded at build time and named once in [`list::SEEDS`]
//! with the seed's code ([`Hooks`]: findings, conclusions, formats). The
//! file is read into a [`SeedTable`] ([`table`]) that the generic
//! [`SeedView`] renders the same way whatever the seed.

pub mod file;
pub mod list;
pub mod table;
mod view;

pub use list::{SeedEntry, SeedId, SEEDS};
pub use table::{
    Also, Bars, Callout, DerivedLine, Field, Findings, Hooks, Joined, Measure, Quantity, SeedChart,
    SeedRow, SeedTable, Text,
};
pub use view::{SeedRowView, SeedView};
