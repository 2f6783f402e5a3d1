//! The seed file format: one TOML file per seed table,
//! `crates/report/seeds/<view>.toml`, read into a checked [`SeedTable`].
//!
//! A file says everything a seed publishes and how this host maps onto
//! it; the seed's code (findings, conclusions, joined cells) is its
//! [`Hooks`]. Top-level keys:
//!
//! - `seed` (its three-digit number among the project's source documents, `"000"`), `title`, `source`,
//!   `caption` (what carries over from the seed), `notes` (after the
//!   citation);
//! - `label`: the row-label column, a field `{ key, title, csv }` (JSON key,
//!   header for people, CSV header), like every column below;
//! - `[[published]]`: the published columns, each a field with a `unit`
//!   (`cycles`, `count`, `s`, `us`, `/s`, … as [`Unit::as_str`] writes them);
//! - `[[measures]]`: this host's columns, each a field with a `quantity`
//!   ([`super::Quantity`]) and optional `json = false` (left out of the JSON
//!   rows) and `table = false` (CSV only);
//! - `[[rows]]`: `label`; `scenario`, the trapline scenario measuring it, or
//!   `missing`, why the lab has none; optional `arm64`, the scenario on an
//!   arm64 host where it differs, or `arm64_missing`, why an arm64 host
//!   has none (no port I/O, no CF8/CFC); `published = { <column key> = value }`
//!   (a column left out is one the seed did not run); `per`, the label of
//!   the row its ratios divide by (default: the table's `per`, else
//!   itself); `per_iter` (units the seed counts per iteration, default 1);
//!   `texts = { <text column key> = "shown" or { json, shown } }`; `flag`;
//!   `slug` (its kut-line name);
//! - optional columns and switches: `texts` (fields), `per_iter` (a field),
//!   `flag` (a field), `published_ratio` and `ratio` (fields: the table
//!   compares rows), `compare = { published, measure }` (the keys its ratios
//!   divide; default the first of each), `scenario_column`, `kut_scenario`,
//!   `kut` (a quantity), `published_last`, `peer` (a VMM name), `also`
//!   (`[{ name, value, scenario }]`: further numbers cited in the notes,
//!   `scenario` the one it stands for in the findings, if any);
//! - sections that need the seed's code: `joined = { published, this_host }`
//!   ([`Hooks::joined`]), `derived = { key, heading, what }`
//!   ([`Hooks::derived`]), `findings_heading` ([`Hooks::findings`]),
//!   `seed_conclusion` ([`Hooks::conclusion`]);
//! - `[chart]`: `heading`, `title`, `x_desc`, `caption`, `source_note`,
//!   `published` (the published series' legend), `callout` (`"none"`,
//!   `"conclusion"` or `{ findings = "<name suffix>" }`) and `bars`:
//!   `"ratios"`, `{ values = { measure, published = [{ column, legend,
//!   colour }] } }` or `{ by_text = { measure, series = [{ legend,
//!   per_iter, colour }] } }`.
//!
//! Unknown keys are errors, so a misspelt key cannot be silently ignored.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::table::{
    Also, Bars, Callout, DerivedLine, Field, Hooks, Joined, Measure, PublishedSeries, Quantity,
    SeedChart, SeedRow, SeedTable, Text, TextSeries,
};
use crate::render::charts::Swatch;
use crate::unit::Unit;

/// A seed file that does not parse or does not make a table.
#[derive(Debug, thiserror::Error)]
pub enum SeedFileError {
    /// Not TOML, or not the format (a missing, unknown or mistyped key).
    #[error("seeds/{view}.toml: {source}")]
    Parse {
        /// The file's view name.
        view: String,
        /// What the TOML reader said.
        source: toml::de::Error,
    },
    /// Parses, but does not describe a table the view can show.
    #[error("seeds/{view}.toml: {problem}")]
    Invalid {
        /// The file's view name.
        view: String,
        /// What is wrong, naming the key.
        problem: String,
    },
}

/// The file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    seed: String,
    title: String,
    source: String,
    caption: String,
    label: Field,
    #[serde(default)]
    scenario_column: bool,
    #[serde(default)]
    kut_scenario: bool,
    #[serde(default = "median")]
    kut: Quantity,
    #[serde(default)]
    texts: Vec<Field>,
    per_iter: Option<Field>,
    per: Option<String>,
    #[serde(default)]
    fallback_per: Option<String>,
    published: Vec<RawColumn>,
    flag: Option<Field>,
    published_ratio: Option<Field>,
    measures: Vec<RawMeasure>,
    compare: Option<RawCompare>,
    ratio: Option<Field>,
    joined: Option<RawJoined>,
    #[serde(default)]
    published_last: bool,
    peer: Option<String>,
    rows: Vec<RawRow>,
    #[serde(default)]
    also: Vec<RawAlso>,
    seed_conclusion: Option<String>,
    findings_heading: Option<String>,
    derived: Option<RawDerived>,
    #[serde(default)]
    notes: Vec<String>,
    arm64_caption: Option<String>,
    #[serde(default)]
    arm64_notes: Vec<String>,
    chart: RawChart,
}

fn median() -> Quantity {
    Quantity::Median
}

fn yes() -> bool {
    true
}

fn one() -> u32 {
    1
}

fn no_callout() -> Callout {
    Callout::None
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawColumn {
    key: String,
    title: String,
    csv: String,
    unit: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMeasure {
    key: String,
    title: String,
    csv: String,
    quantity: Quantity,
    #[serde(default = "yes")]
    json: bool,
    #[serde(default = "yes")]
    table: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCompare {
    published: String,
    measure: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawJoined {
    published: String,
    this_host: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDerived {
    key: String,
    heading: String,
    what: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAlso {
    name: String,
    value: u32,
    scenario: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRow {
    label: String,
    scenario: Option<String>,
    arm64: Option<String>,
    arm64_missing: Option<String>,
    missing: Option<String>,
    #[serde(default)]
    flag: bool,
    #[serde(default)]
    texts: BTreeMap<String, RawText>,
    #[serde(default = "one")]
    per_iter: u32,
    per: Option<String>,
    #[serde(default)]
    published: BTreeMap<String, f64>,
    slug: Option<String>,
}

/// A row's text: the same in the JSON and on screen, or each its own.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawText {
    Same(String),
    Pair(RawTextPair),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTextPair {
    json: String,
    shown: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawChart {
    heading: String,
    title: String,
    x_desc: String,
    published: Option<String>,
    caption: String,
    bars: RawBars,
    #[serde(default = "no_callout")]
    callout: Callout,
    source_note: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum RawBars {
    Ratios,
    Values {
        measure: String,
        published: Vec<RawPublishedSeries>,
    },
    ByText {
        measure: String,
        series: Vec<RawTextSeries>,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPublishedSeries {
    column: String,
    legend: String,
    colour: Swatch,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTextSeries {
    legend: String,
    per_iter: u32,
    colour: Swatch,
}

/// Reads seed file `text` for view `view`, with the seed's code `hooks`,
/// into a table, checking everything the view relies on: known units,
/// quantities and colours; at least one row, published column and
/// measure; unique row labels and JSON keys; every row naming a scenario
/// or why it has none; every `per`, `compare` and chart reference naming
/// something in the file; and every section needing code having its hook
/// (and every hook its section).
pub fn load(view: &'static str, text: &str, hooks: Hooks) -> Result<SeedTable, SeedFileError> {
    let raw: RawTable = toml::from_str(text).map_err(|source| SeedFileError::Parse {
        view: view.to_string(),
        source,
    })?;
    build(view, raw, hooks).map_err(|problem| SeedFileError::Invalid {
        view: view.to_string(),
        problem,
    })
}

/// `Err(problem())` unless `ok`.
fn ensure(ok: bool, problem: impl FnOnce() -> String) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(problem())
    }
}

/// The index of the item whose key is `key`, for the reference `what`.
fn index_of<'a>(
    keys: impl IntoIterator<Item = &'a str>,
    key: &str,
    what: &str,
) -> Result<usize, String> {
    keys.into_iter()
        .position(|k| k == key)
        .ok_or_else(|| format!("{what} names {key:?}, which is not one of its keys"))
}

/// Whether the file's section `section` and the hook `hook` come together.
fn paired(section: &str, in_file: bool, hook: &str, in_code: bool) -> Result<(), String> {
    match (in_file, in_code) {
        (true, false) => Err(format!(
            "`{section}` needs the seed's {hook} hook, which its entry in SEEDS does not give"
        )),
        (false, true) => Err(format!(
            "the seed's {hook} hook is given but the file has no `{section}` for it"
        )),
        _ => Ok(()),
    }
}

fn build(view: &'static str, raw: RawTable, hooks: Hooks) -> Result<SeedTable, String> {
    check_required(&raw)?;
    let published = published_columns(raw.published)?;
    let measures = measures(raw.measures);
    let (compare_published, compare_measure) =
        compare_indices(raw.compare.as_ref(), &published, &measures)?;
    let labels: Vec<&str> = raw.rows.iter().map(|r| r.label.as_str()).collect();
    check_labels(&labels, raw.per.as_deref())?;
    let rows = raw
        .rows
        .iter()
        .map(|r| {
            let columns = RowColumns {
                per: raw.per.as_deref(),
                texts: &raw.texts,
                flag: raw.flag.is_some(),
                published: &published,
                labels: &labels,
            };
            row(r, &columns)
        })
        .collect::<Result<Vec<_>, String>>()?;
    let also = also_list(raw.also)?;
    let chart = chart(raw.chart, &published, &measures, &raw.texts, &rows)?;
    check_hooks(
        &Sections {
            joined: raw.joined.is_some(),
            derived: raw.derived.is_some(),
            findings_heading: raw.findings_heading.is_some(),
            seed_conclusion: raw.seed_conclusion.is_some(),
        },
        &chart.callout,
        &hooks,
    )?;
    let joined = match (raw.joined, hooks.joined) {
        (Some(j), Some(format)) => Some(Joined {
            published: j.published,
            this_host: j.this_host,
            format,
        }),
        _ => None,
    };
    let derived = match (raw.derived, hooks.derived) {
        (Some(d), Some(value)) => Some(DerivedLine {
            key: d.key,
            heading: d.heading,
            what: d.what,
            value,
        }),
        _ => None,
    };
    let table = SeedTable {
        view,
        seed: raw.seed,
        title: raw.title,
        source: raw.source,
        caption: raw.caption,
        label: raw.label,
        scenario_column: raw.scenario_column,
        kut_scenario: raw.kut_scenario,
        kut: raw.kut,
        texts: raw.texts,
        per_iter: raw.per_iter,
        published,
        flag: raw.flag,
        published_ratio: raw.published_ratio,
        measures,
        compare_published,
        compare_measure,
        ratio: raw.ratio,
        fallback_per: raw.fallback_per,
        joined,
        published_last: raw.published_last,
        peer: raw.peer,
        rows,
        also,
        seed_conclusion: raw.seed_conclusion,
        findings_heading: raw.findings_heading.unwrap_or_default(),
        derived,
        notes: raw.notes,
        arm64_caption: raw.arm64_caption,
        arm64_notes: raw.arm64_notes,
        chart,
        hooks,
    };
    unique_json_keys(&table)?;
    Ok(table)
}

/// A three-digit seed, and the lists a table cannot do without.
fn check_required(raw: &RawTable) -> Result<(), String> {
    ensure(
        raw.seed.len() == 3 && raw.seed.bytes().all(|b| b.is_ascii_digit()),
        || format!("`seed` is {:?}: three digits, e.g. \"001\"", raw.seed),
    )?;
    ensure(!raw.rows.is_empty(), || "`rows` is empty".into())?;
    ensure(!raw.published.is_empty(), || "`published` is empty".into())?;
    ensure(!raw.measures.is_empty(), || "`measures` is empty".into())
}

/// The published columns, each with a unit trapline knows.
fn published_columns(columns: Vec<RawColumn>) -> Result<Vec<(Field, Unit)>, String> {
    columns
        .into_iter()
        .map(|c| {
            let unit = Unit::parse(&c.unit).ok_or_else(|| {
                let known: Vec<&str> = Unit::ALL.iter().map(|u| u.as_str()).collect();
                format!(
                    "published column {:?} has unit {:?}, not one of {}",
                    c.key,
                    c.unit,
                    known.join(", ")
                )
            })?;
            Ok((
                Field {
                    key: c.key,
                    title: c.title,
                    csv: c.csv,
                },
                unit,
            ))
        })
        .collect()
}

/// The measured columns.
fn measures(measures: Vec<RawMeasure>) -> Vec<Measure> {
    measures
        .into_iter()
        .map(|m| Measure {
            field: Field {
                key: m.key,
                title: m.title,
                csv: m.csv,
            },
            quantity: m.quantity,
            json: m.json,
            table: m.table,
        })
        .collect()
}

/// The published and measured columns `compare` names (the first of each
/// when it names none).
fn compare_indices(
    compare: Option<&RawCompare>,
    published: &[(Field, Unit)],
    measures: &[Measure],
) -> Result<(usize, usize), String> {
    let published_keys = || published.iter().map(|(f, _)| f.key.as_str());
    let measure_keys = || measures.iter().map(|m| m.field.key.as_str());
    match compare {
        None => Ok((0, 0)),
        Some(c) => Ok((
            index_of(published_keys(), &c.published, "`compare.published`")?,
            index_of(measure_keys(), &c.measure, "`compare.measure`")?,
        )),
    }
}

/// Row labels present and distinct, and `per` one of them.
fn check_labels(labels: &[&str], per: Option<&str>) -> Result<(), String> {
    for (i, l) in labels.iter().enumerate() {
        ensure(!l.is_empty(), || {
            format!("row {} has an empty label", i + 1)
        })?;
        ensure(!labels[..i].contains(l), || {
            format!("two rows are labelled {l:?}")
        })?;
    }
    if let Some(per) = per {
        ensure(labels.contains(&per), || {
            format!("`per` names {per:?}, which labels no row")
        })?;
    }
    Ok(())
}

/// The `also` values, each named once and with a scenario when it says so.
fn also_list(raw: Vec<RawAlso>) -> Result<Vec<Also>, String> {
    let mut also: Vec<Also> = Vec::new();
    for a in raw {
        ensure(!also.iter().any(|o| o.name == a.name), || {
            format!("`also` names {:?} twice", a.name)
        })?;
        ensure(a.scenario.as_ref().is_none_or(|s| !s.is_empty()), || {
            format!("`also` {:?} has an empty `scenario`", a.name)
        })?;
        also.push(Also {
            name: a.name,
            value: a.value,
            scenario: a.scenario,
        });
    }
    Ok(also)
}

/// Which of the sections that need a hook the file has.
struct Sections {
    joined: bool,
    derived: bool,
    findings_heading: bool,
    seed_conclusion: bool,
}

/// Every section that needs a hook has it, and every hook given has its
/// section.
fn check_hooks(file: &Sections, callout: &Callout, hooks: &Hooks) -> Result<(), String> {
    paired("joined", file.joined, "joined", hooks.joined.is_some())?;
    paired("derived", file.derived, "derived", hooks.derived.is_some())?;
    paired(
        "findings_heading",
        file.findings_heading,
        "findings",
        hooks.findings.is_some(),
    )?;
    if file.seed_conclusion {
        paired(
            "seed_conclusion",
            true,
            "conclusion",
            hooks.conclusion.is_some(),
        )?;
    }
    match callout {
        Callout::Findings(_) => paired("callout", true, "findings", hooks.findings.is_some()),
        Callout::Conclusion => paired("callout", true, "conclusion", hooks.conclusion.is_some()),
        Callout::None => Ok(()),
    }
}

/// What a row's references are checked against.
struct RowColumns<'a> {
    /// The table's default `per`.
    per: Option<&'a str>,
    texts: &'a [Field],
    /// Whether the table has a flag column.
    flag: bool,
    published: &'a [(Field, Unit)],
    labels: &'a [&'a str],
}

/// One row, its references checked against the table's columns and rows.
fn row(r: &RawRow, t: &RowColumns) -> Result<SeedRow, String> {
    let (published, labels) = (t.published, t.labels);
    let at = |problem: String| format!("row {:?}: {problem}", r.label);
    let scenario = match (&r.scenario, &r.missing) {
        (Some(s), None) if !s.is_empty() => Some(s.clone()),
        (None, Some(why)) if !why.is_empty() => None,
        (Some(_), Some(_)) => return Err(at("has both `scenario` and `missing`".into())),
        (None, None) => {
            return Err(at(
                "names no `scenario` (or says why it has none in `missing`)".into(),
            ))
        }
        _ => return Err(at("`scenario` or `missing` is empty".into())),
    };
    ensure(r.arm64.as_ref().is_none_or(|a| !a.is_empty()), || {
        at("`arm64` is empty".into())
    })?;
    ensure(
        r.arm64_missing.as_ref().is_none_or(|a| !a.is_empty()),
        || at("`arm64_missing` is empty".into()),
    )?;
    ensure(r.arm64.is_none() || r.arm64_missing.is_none(), || {
        at("has both `arm64` and `arm64_missing`".into())
    })?;
    ensure(r.per_iter >= 1, || at("`per_iter` is 0".into()))?;
    let per = r
        .per
        .clone()
        .or_else(|| t.per.map(str::to_string))
        .unwrap_or_else(|| r.label.clone());
    ensure(labels.contains(&per.as_str()), || {
        at(format!("`per` names {per:?}, which labels no row"))
    })?;
    for key in r.published.keys() {
        ensure(published.iter().any(|(f, _)| f.key == *key), || {
            at(format!(
                "`published` has {key:?}, which is not a published column"
            ))
        })?;
    }
    for v in r.published.values() {
        ensure(v.is_finite(), || {
            at("a published value is not finite".into())
        })?;
    }
    ensure(r.published.values().next().is_some(), || {
        at("`published` is empty".into())
    })?;
    for key in r.texts.keys() {
        ensure(t.texts.iter().any(|f| f.key == *key), || {
            at(format!("`texts` has {key:?}, which is not a text column"))
        })?;
    }
    let texts = t
        .texts
        .iter()
        .map(|f| match r.texts.get(&f.key) {
            None => Err(at(format!("`texts` lacks the {:?} column", f.key))),
            Some(RawText::Same(s)) => Ok(Text {
                json: s.clone(),
                shown: s.clone(),
            }),
            Some(RawText::Pair(p)) => Ok(Text {
                json: p.json.clone(),
                shown: p.shown.clone(),
            }),
        })
        .collect::<Result<Vec<_>, String>>()?;
    ensure(!r.flag || t.flag, || {
        at("sets `flag` but the table has no `flag` column".into())
    })?;
    Ok(SeedRow {
        label: r.label.clone(),
        scenario,
        arm64: r.arm64.clone(),
        arm64_missing: r.arm64_missing.clone(),
        missing: r.missing.clone(),
        flag: r.flag,
        texts,
        per_iter: r.per_iter,
        published: published
            .iter()
            .map(|(f, _)| r.published.get(&f.key).copied())
            .collect(),
        per,
        slug: r.slug.clone(),
    })
}

/// The chart, its references resolved to indices.
fn chart(
    c: RawChart,
    published: &[(Field, Unit)],
    measures: &[Measure],
    texts: &[Field],
    rows: &[SeedRow],
) -> Result<SeedChart, String> {
    let measure_keys = || measures.iter().map(|m| m.field.key.as_str());
    let bars = match c.bars {
        RawBars::Ratios => Bars::Ratios,
        RawBars::Values {
            measure,
            published: series,
        } => Bars::Values {
            measure: index_of(measure_keys(), &measure, "`chart.bars.values.measure`")?,
            published: series
                .into_iter()
                .map(|s| {
                    Ok(PublishedSeries {
                        column: index_of(
                            published.iter().map(|(f, _)| f.key.as_str()),
                            &s.column,
                            "a `chart.bars.values.published` series",
                        )?,
                        legend: s.legend,
                        colour: s.colour,
                    })
                })
                .collect::<Result<_, String>>()?,
        },
        RawBars::ByText { measure, series } => {
            ensure(!texts.is_empty(), || {
                "`chart.bars.by_text` needs a text column to group by".into()
            })?;
            for s in &series {
                ensure(rows.iter().any(|r| r.per_iter == s.per_iter), || {
                    format!(
                        "chart series {:?} takes rows with per_iter {}, and there are none",
                        s.legend, s.per_iter
                    )
                })?;
            }
            Bars::ByText {
                measure: index_of(measure_keys(), &measure, "`chart.bars.by_text.measure`")?,
                series: series
                    .into_iter()
                    .map(|s| TextSeries {
                        legend: s.legend,
                        per_iter: s.per_iter,
                        colour: s.colour,
                    })
                    .collect(),
            }
        }
    };
    // The published series' legend: drawn by ratio and by-text charts; a
    // values chart names each of its series itself.
    let published = match (&bars, c.published) {
        (Bars::Values { .. }, Some(_)) => {
            return Err(
                "`chart.published` is unused by a values chart (its series have legends)".into(),
            )
        }
        (Bars::Values { .. }, None) => String::new(),
        (_, Some(p)) if !p.is_empty() => p,
        _ => return Err("`chart.published` (the published series' legend) is missing".into()),
    };
    Ok(SeedChart {
        heading: c.heading,
        title: c.title,
        x_desc: c.x_desc,
        published,
        caption: c.caption,
        bars,
        callout: c.callout,
        source_note: c.source_note,
    })
}

/// No two values of a JSON row share a key (the view writes rows as
/// objects, where a repeated key would hide a value).
fn unique_json_keys(t: &SeedTable) -> Result<(), String> {
    let mut keys: Vec<&str> = vec![t.label.key.as_str(), "this_host"];
    if t.rows.iter().any(|r| r.slug.is_some()) {
        keys.push("slug");
    }
    if t.scenario_column {
        keys.push("scenario");
    }
    keys.extend(t.texts.iter().map(|f| f.key.as_str()));
    keys.extend(t.per_iter.iter().map(|f| f.key.as_str()));
    keys.extend(t.published.iter().map(|(f, _)| f.key.as_str()));
    keys.extend(t.flag.iter().map(|f| f.key.as_str()));
    keys.extend(t.published_ratio.iter().map(|f| f.key.as_str()));
    keys.extend(
        t.measures
            .iter()
            .filter(|m| m.json)
            .map(|m| m.field.key.as_str()),
    );
    keys.extend(t.ratio.iter().map(|f| f.key.as_str()));
    keys.extend(t.peer.iter().map(String::as_str));
    for (i, k) in keys.iter().enumerate() {
        ensure(!k.is_empty(), || "a column has an empty key".into())?;
        ensure(!keys[..i].contains(k), || {
            format!("two values of a JSON row have the key {k:?}")
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small valid file; each test breaks one thing in it.
    const GOOD: &str = r#"
        seed = "999"
        title = "t"
        source = "s"
        caption = "c"
        label = { key = "name", title = "row", csv = "row" }
        per = "ref"
        published = [{ key = "cycles", title = "seed cyc", csv = "seed_cycles", unit = "cycles" }]
        measures = [{ key = "median", title = "median", csv = "median", quantity = "median" }]
        ratio = { key = "ratio", title = "÷ref", csv = "ratio" }
        rows = [
            { label = "ref", scenario = "a", published = { cycles = 100 } },
            { label = "other", scenario = "b", arm64 = "b-arm", published = { cycles = 300 } },
        ]
        chart = { heading = "h", title = "t", x_desc = "x", published = "seed", caption = "c", bars = "ratios" }
    "#;

    /// The error loading `GOOD` with `from` replaced by `to`.
    fn broken(from: &str, to: &str, hooks: Hooks) -> String {
        assert!(GOOD.contains(from), "{from}");
        match load("test", &GOOD.replacen(from, to, 1), hooks) {
            Ok(_) => panic!("loaded with {from:?} → {to:?}"),
            Err(e) => e.to_string(),
        }
    }

    fn check(from: &str, to: &str, want: &str) {
        let e = broken(from, to, Hooks::NONE);
        assert!(e.starts_with("seeds/test.toml: "), "{e}");
        assert!(e.contains(want), "{e:?} lacks {want:?}");
    }

    #[test]
    fn a_good_file_loads_with_defaults_filled_in() {
        let t = load("test", GOOD, Hooks::NONE).unwrap();
        assert_eq!(t.rows[1].per, "ref", "the table's per");
        assert_eq!(t.rows[1].arm64.as_deref(), Some("b-arm"));
        assert_eq!(t.rows[0].per_iter, 1);
        assert_eq!(t.published[0].1, Unit::Cycles);
        assert_eq!(t.kut, Quantity::Median);
        assert_eq!(t.chart.callout, Callout::None);
        assert!(t.measures[0].json && t.measures[0].table);
        assert_eq!(t.scenarios().collect::<Vec<_>>(), ["a", "b"]);
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        check(r#"title = "t""#, r#"title = "t"#, "");
        check(r#"title = "t""#, r#"titel = "t""#, "titel");
        check(
            r#"unit = "cycles""#,
            r#"unit = "cycle""#,
            "unit \"cycle\", not one of",
        );
        check(r#"quantity = "median""#, r#"quantity = "mean""#, "mean");
        check(r#"per = "ref""#, r#"per = "nope""#, "labels no row");
        check(
            r#"scenario = "b","#,
            r#"scenario = "b", missing = "why","#,
            "both `scenario` and `missing`",
        );
        check(r#"scenario = "b","#, "", "names no `scenario`");
        check(r#"scenario = "b","#, r#"scenario = "","#, "empty");
        check(
            r#"label = "other""#,
            r#"label = "ref""#,
            "two rows are labelled \"ref\"",
        );
        check(
            r#"{ cycles = 300 }"#,
            r#"{ cyles = 300 }"#,
            "not a published column",
        );
        check(r#"seed = "999""#, r#"seed = "9""#, "three digits");
        check(
            r#"key = "ratio""#,
            r#"key = "cycles""#,
            "the key \"cycles\"",
        );
        check(r#"bars = "ratios""#, r#"bars = "pies""#, "pies");
        check(
            r#"bars = "ratios""#,
            r#"bars = { values = { measure = "net", published = [] } }"#,
            "\"net\", which is not one of its keys",
        );
        check(r#"published = "seed", "#, "", "`chart.published`");
        check(
            r#"title = "t""#,
            "title = \"t\"\nfindings_heading = \"F\"",
            "needs the seed's findings hook",
        );
        let rows = GOOD.find("rows = [").unwrap();
        let empty = format!("{}rows = []\n", &GOOD[..rows]);
        let chart = &GOOD[GOOD.find("chart = ").unwrap()..];
        let e = load("test", &format!("{empty}{chart}"), Hooks::NONE).unwrap_err();
        assert!(e.to_string().contains("`rows` is empty"), "{e}");
    }

    #[test]
    fn hooks_and_the_sections_needing_them_come_together() {
        let joined = Hooks {
            joined: Some(|_| None),
            ..Hooks::NONE
        };
        let e = broken(r#"title = "t""#, r#"title = "t""#, joined);
        assert!(e.contains("no `joined` for it"), "{e}");
        let e = broken(
            r#"title = "t""#,
            "title = \"t\"\njoined = { published = \"p\", this_host = \"h\" }",
            Hooks::NONE,
        );
        assert!(e.contains("needs the seed's joined hook"), "{e}");
    }
}
