//! trapline-report: the results model, statistics and every output format
//! of `trapline bench`. Knows nothing about KVM.
//!
//! The runner builds a [`Report`], pushes one [`ScenarioResult`] per
//! scenario and VMM (raw [`Sample`]s, or a reason it was unsupported or
//! failed), calls [`Report::finish`] to compute stats, net costs and
//! [`Derived`] values, then [`render`]s it in a [`Format`] and [`View`].
//! Saved reports come back with [`Report::load`]; two runs are compared with
//! [`compare()`] and [`render_comparison`].
//!
//! Modules: [`model`] (serde types), [`stats`], [`derive`](mod@derive) (every
//! cross-scenario value: the derived values, the seeds' findings, the floor
//! ladder), [`views`] (what to show; the seed tables are data files, see
//! [`views::seed`]), `render` (how: table, json, markdown, csv, kut, html,
//! charts, bmf, tap), [`summary`](mod@summary) (the default one-screen
//! terminal output, headline values against their goals),
//! [`compare`](mod@compare), [`uses`] (every scenario name the report
//! reads, for the lab's tests to check); leaves
//! below them all: [`unit`](mod@unit), [`guarded`] (arithmetic that is never NaN) and
//! `fmt` (how numbers are written).

pub mod compare;
pub mod derive;
mod describe;
pub mod error;
mod fmt;
pub mod guarded;

pub mod model;
pub mod noise;
mod render;
pub mod saved;
pub mod stats;
pub mod summary;
pub mod unit;
pub mod uses;
pub mod views;

pub use compare::{
    compare, differences, CompareEntry, CompareVerdict, Comparison, Unmeasured, SIGNIFICANCE_RULE,
};
/// The floor ladder's rungs and derived values (also at this path, for the lab).
pub use derive::ladder;
pub use describe::host_line;
pub use error::ReportError;
pub use model::{
    cycles_to_ns, scenario_key, Anatomy, AnatomyPath, Derived, Goal, Handling, HostInfo, Partial,
    Report, RoundTripSource, RunConfig, Sample, ScenarioResult, Spread, Status, Tails, ToolInfo,
    ValueRange, Verdict, BASELINE_SCENARIO, MAX_REPORT_BYTES, OVERHEAD_GOAL_PCT, PERCENTILES,
    SCHEMA, SELF_TIMED, TRAPLINE_VMM,
};
pub use render::compare::{render_comparison, render_comparison_with, CompareDetail};
pub use render::html::DATA_ID as HTML_DATA_ID;
pub use render::Format;
pub use stats::Stats;
pub use summary::layout::fit_text;
pub use summary::{summary, summary_header, SummaryOptions};
pub use unit::Unit;
pub use views::anatomy::anatomy_paths;
pub use views::paper_pair::{render_pair, PairError};
pub use views::{render, render_width, View};
