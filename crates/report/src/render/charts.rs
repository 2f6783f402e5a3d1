//! SVG charts drawn with plotters' SVG backend into a `String`.
//!
//! Every chart is a horizontal bar chart, so long scenario names sit level
//! and readable on the left. Category labels are drawn by hand (right-aligned
//! beside their bar) rather than by plotters' tick labelling, which places
//! labels at "nice" numbers instead of bar centres.
//!
//! When a few bars are far longer than the rest (a PCI bus scan beside
//! single exits), the axis stops at the longest ordinary bar and the
//! outliers are cut: drawn a little past it with a white gap, their value
//! printed, so the other bars stay readable.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::fmt::{cycles, grouped, significant, truncate};
use crate::guarded::finite;

/// Longest category label drawn, in characters.
const MAX_LABEL: usize = 44;
/// Chart width in pixels.
const WIDTH: u32 = 960;
/// A series' colour, by name so a view says which it means (a seed file
/// writes it in lower case: `colour = "blue"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Swatch {
    /// The first series: published figures, or the only one.
    Blue,
    /// A peer or outside reference (QEMU, Firecracker).
    Orange,
    /// A goal, or a second series of this host.
    Green,
    /// A further published column.
    Purple,
    /// This host.
    Red,
    /// A further published column.
    Grey,
}

impl Swatch {
    fn rgb(self) -> RGBColor {
        match self {
            Swatch::Blue => RGBColor(0x3b, 0x6e, 0xa8),
            Swatch::Orange => RGBColor(0xd9, 0x8c, 0x2b),
            Swatch::Green => RGBColor(0x5a, 0x9e, 0x5a),
            Swatch::Purple => RGBColor(0x9b, 0x59, 0xb6),
            Swatch::Red => RGBColor(0xc0, 0x39, 0x2b),
            Swatch::Grey => RGBColor(0x7f, 0x7f, 0x7f),
        }
    }
}

/// One bar.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BarValue {
    /// Bar length.
    pub value: f64,
    /// A min–max whisker, if any.
    pub whisker: Option<(f64, f64)>,
}

impl BarValue {
    /// A bar without a whisker.
    pub fn plain(value: f64) -> Self {
        Self {
            value,
            whisker: None,
        }
    }
}

/// One series: a bar (or nothing) per category.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// Its colour.
    pub color: Swatch,
    /// One entry per category.
    pub values: Vec<Option<BarValue>>,
    /// Each category's per-repeat values, drawn as dots over its bar (a
    /// strip plot: two clusters show); empty for none.
    pub samples: Vec<Vec<f64>>,
}

impl Series {
    /// A series of bars without whiskers, one per value.
    pub fn plain(
        name: impl Into<String>,
        color: Swatch,
        values: impl IntoIterator<Item = Option<f64>>,
    ) -> Self {
        Self {
            name: name.into(),
            color,
            values: values.into_iter().map(|v| v.map(BarValue::plain)).collect(),
            samples: Vec::new(),
        }
    }
}

/// A horizontal bar chart: categories top to bottom, one bar per series in
/// each.
#[derive(Clone, Debug)]
pub struct HBars {
    /// Caption on top.
    pub title: String,
    /// X axis description (its unit added when the values are times).
    pub x_desc: String,
    /// Category labels, top first.
    pub categories: Vec<String>,
    /// Series; a legend is drawn when there are several.
    pub series: Vec<Series>,
    /// The TSC frequency when the values are TSC cycles to be drawn as
    /// time (ns, us or ms, whichever suits the axis); 0 to draw them as
    /// they are.
    pub tsc_khz: u64,
    /// Whether a few bars far longer than the rest may be cut short (see
    /// [`axis_cap`]); off for a headline chart, whose bars are all read.
    pub cut_outliers: bool,
}

/// A bar is an outlier when it is longer than this many times the median
/// bar (by magnitude)…
const OUTLIER_OVER_MEDIAN: f64 = 25.0;
/// …and the longest bar is more than this many times the longest ordinary
/// one (otherwise nothing is cut).
const CUT_WHEN_OVER: f64 = 4.0;
/// How far past the axis cap a cut bar reaches, as a fraction of the cap.
const CUT_OVERHANG: f64 = 0.08;
/// Whiskers and repeats reach at most this many times the longest drawn
/// bar; beyond it they are clipped at the axis's end and marked, so one
/// slow repeat cannot squeeze every bar.
const WHISKER_ROOM: f64 = 1.5;
/// The axis goes at least this far past the longest bar (room for its
/// label).
const LABEL_ROOM: f64 = 1.12;

/// Where the axis stops when some bars are outliers (see the module
/// docs): the longest ordinary bar's magnitude, or `None` to cut nothing.
pub fn axis_cap(values: &[f64]) -> Option<f64> {
    let mut mags: Vec<f64> = values
        .iter()
        .filter_map(|v| finite(v.abs()))
        .filter(|v| *v > 0.0)
        .collect();
    if mags.len() < 3 {
        return None;
    }
    mags.sort_by(f64::total_cmp);
    let limit = mags[mags.len() / 2] * OUTLIER_OVER_MEDIAN;
    let ordinary = mags.iter().copied().rfind(|v| *v <= limit)?;
    let longest = *mags.last()?;
    (longest > ordinary * CUT_WHEN_OVER).then_some(ordinary)
}

/// How the axis's numbers are written: a divisor and a unit.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Scale {
    /// Values (ns, or as given) are divided by this…
    divisor: f64,
    /// …and written with this unit (empty: as given).
    unit: &'static str,
}

impl Scale {
    /// The unit that keeps an axis reaching `top` nanoseconds short.
    fn time(top: f64) -> Scale {
        let (divisor, unit) = if top < 1e4 {
            (1.0, "ns")
        } else if top < 1e7 {
            (1e3, "µs")
        } else {
            (1e6, "ms")
        };
        Scale { divisor, unit }
    }

    fn plain() -> Scale {
        Scale {
            divisor: 1.0,
            unit: "",
        }
    }

    /// An axis tick.
    fn tick(self, v: f64) -> String {
        if self.unit.is_empty() {
            short_number(v)
        } else {
            significant(v / self.divisor)
        }
    }

    /// A value printed beside or in its bar.
    fn label(self, v: f64) -> String {
        if self.unit.is_empty() {
            value_label(v)
        } else {
            format!("{} {}", significant(v / self.divisor), self.unit)
        }
    }
}

/// A bar's printed value: grouped integers, one decimal from 10 up, two
/// significant digits at least below (as ratios are shown in tables).
fn value_label(v: f64) -> String {
    if v.fract() == 0.0 {
        grouped(v)
    } else {
        significant(v)
    }
}

/// Axis ticks and bar values: whole numbers without decimals.
fn short_number(v: f64) -> String {
    if v.fract() == 0.0 {
        grouped(v)
    } else {
        cycles(v)
    }
}

/// `spec` with every value in nanoseconds when it asks for time.
fn in_time(spec: &HBars) -> HBars {
    let mut out = spec.clone();
    if spec.tsc_khz == 0 {
        return out;
    }
    let ns = |v: f64| v * 1e6 / spec.tsc_khz as f64;
    for s in &mut out.series {
        for b in s.values.iter_mut().flatten() {
            b.value = ns(b.value);
            b.whisker = b.whisker.map(|(lo, hi)| (ns(lo), ns(hi)));
        }
        for c in &mut s.samples {
            for v in c.iter_mut() {
                *v = ns(*v);
            }
        }
    }
    out
}

/// The drawing area of a chart's SVG.
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
/// The bar chart's plotting area: values across, categories down.
type Plot<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A plotters error in words.
fn err<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> String {
    e.to_string()
}

/// Draws `spec` as an SVG document; `Err` says why there is no chart.
pub fn hbars(spec: &HBars) -> Result<String, String> {
    let timed = spec.tsc_khz > 0;
    let spec = &in_time(spec);
    let n = spec.categories.len();
    let k = spec.series.len();
    let bar_values: Vec<f64> = spec
        .series
        .iter()
        .flat_map(|s| s.values.iter().flatten())
        .filter_map(|b| finite(b.value))
        .collect();
    if n == 0 || k == 0 || bar_values.is_empty() {
        return Err("nothing measured to chart".to_string());
    }
    let axis = Axis::fit(spec, &bar_values, timed);
    let frame = Frame::of(spec);

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, frame.height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (title_area, rest) = root.split_vertically(frame.top);
        draw_title(&title_area, spec, frame.label_w)?;
        let mut chart = ChartBuilder::on(&rest)
            .margin_right(20)
            .x_label_area_size(frame.bottom)
            .y_label_area_size(frame.label_w)
            .build_cartesian_2d(axis.x_range.clone(), 0f64..n as f64)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .y_label_formatter(&|_| String::new())
            .x_labels(8)
            .x_label_formatter(&|v| axis.scale.tick(*v))
            .x_desc(axis.description(spec))
            .axis_desc_style(("sans-serif", 15))
            .label_style(("sans-serif", 13))
            .light_line_style(RGBColor(0xee, 0xee, 0xee))
            .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
            .draw()
            .map_err(err)?;
        let styles = Styles::new();
        let slot = 0.84 / k as f64;
        let x0 = chart.backend_coord(&(0.0, 0.0)).0;
        for (i, label) in frame.labels.iter().enumerate() {
            // Category i occupies [n-1-i, n-i]: the first is on top.
            let row_top = (n - i) as f64;
            let (px, py) = chart.backend_coord(&(axis.x_range.start, row_top - 0.5));
            // backend_coord is absolute, so draw on the root area.
            root.draw(&Text::new(
                label.clone(),
                (px - 8, py),
                styles.label.clone(),
            ))
            .map_err(err)?;
            for (j, s) in spec.series.iter().enumerate() {
                let Some(bar) = s.values.get(i).copied().flatten() else {
                    continue;
                };
                let Some(value) = finite(bar.value) else {
                    continue;
                };
                let y1 = row_top - 0.08 - j as f64 * slot;
                let place = BarPlace {
                    y0: y1 - slot * 0.9,
                    y1,
                    slot,
                    x0,
                };
                let repeats = s.samples.get(i).map(Vec::as_slice).unwrap_or_default();
                let drawing = Drawing {
                    root: &root,
                    axis: &axis,
                    styles: &styles,
                };
                drawing.bar(&mut chart, s.color, bar, value, repeats, &place)?;
            }
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// The value axis: its range, where bars are cut, its unit.
struct Axis {
    /// The axis's extent.
    x_range: std::ops::Range<f64>,
    /// Where outliers are cut, when they are.
    cap: Option<f64>,
    /// How far a cut bar reaches (infinite when none is cut).
    reach: f64,
    /// The axis's unit.
    scale: Scale,
    /// Whether a whisker or repeat lies beyond the axis.
    clipped_any: bool,
}

impl Axis {
    /// The axis that shows every bar (outliers cut when `spec` asks) and
    /// the whiskers and repeats up to a robust limit.
    fn fit(spec: &HBars, bar_values: &[f64], timed: bool) -> Axis {
        let cap = axis_cap(bar_values).filter(|_| spec.cut_outliers);
        // Where a bar is drawn: cut bars reach a little past the cap.
        let reach = cap.map_or(f64::INFINITY, |c| c * (1.0 + CUT_OVERHANG));
        let drawn = |v: f64| v.clamp(-reach, reach);
        let bar_hi = bar_values.iter().map(|v| drawn(*v)).fold(0.0f64, f64::max);
        let bar_lo = bar_values.iter().map(|v| drawn(*v)).fold(0.0f64, f64::min);
        // Whiskers and repeats widen the axis up to a robust limit only.
        let spreads = || {
            spec.series.iter().flat_map(|s| {
                s.values
                    .iter()
                    .flatten()
                    .filter_map(|b| b.whisker)
                    .flat_map(|(lo, hi)| [lo, hi])
                    .chain(s.samples.iter().flatten().copied())
                    .filter_map(finite)
            })
        };
        let room_hi = if bar_hi > 0.0 {
            bar_hi * WHISKER_ROOM
        } else {
            0.0
        };
        let room_lo = if bar_lo < 0.0 {
            bar_lo * WHISKER_ROOM
        } else {
            0.0
        };
        let hi = spreads()
            .map(|v| v.min(room_hi))
            .fold(bar_hi * LABEL_ROOM, f64::max);
        let lo = spreads().map(|v| v.max(room_lo)).fold(bar_lo, f64::min);
        let hi = if hi - lo > 0.0 { hi } else { lo + 1.0 };
        let span = hi - lo;
        let x_range = (if lo < 0.0 { lo - span * 0.04 } else { 0.0 })..hi;
        let scale = if timed {
            Scale::time(x_range.end.abs().max(x_range.start.abs()))
        } else {
            Scale::plain()
        };
        let clipped_any = spreads().any(|v| v > x_range.end || v < x_range.start);
        Axis {
            x_range,
            cap,
            reach,
            scale,
            clipped_any,
        }
    }

    /// Where a bar of `v` ends.
    fn drawn(&self, v: f64) -> f64 {
        v.clamp(-self.reach, self.reach)
    }

    /// `v` within the axis.
    fn clip(&self, v: f64) -> f64 {
        v.clamp(self.x_range.start, self.x_range.end)
    }

    /// The axis's caption: the spec's, its unit, and what the marks mean.
    fn description(&self, spec: &HBars) -> String {
        let mut notes = Vec::new();
        if self.cap.is_some() {
            notes.push("a white gap: bar cut short");
        }
        if self.clipped_any {
            notes.push("▸ clipped at the axis");
        }
        let mut x_desc = spec.x_desc.clone();
        if !self.scale.unit.is_empty() {
            x_desc = format!("{x_desc} ({})", self.scale.unit);
        }
        if !notes.is_empty() {
            x_desc = format!("{x_desc} · {}", notes.join(" · "));
        }
        x_desc
    }
}

/// The chart's frame in pixels: the labels' column, the title above, the
/// axis below.
struct Frame {
    labels: Vec<String>,
    label_w: u32,
    top: u32,
    bottom: u32,
    height: u32,
}

impl Frame {
    fn of(spec: &HBars) -> Frame {
        let n = spec.categories.len();
        let k = spec.series.len();
        let labels: Vec<String> = spec
            .categories
            .iter()
            .map(|c| truncate(c, MAX_LABEL))
            .collect();
        let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as u32;
        let label_w = (longest * 7 + 16).clamp(60, 340);
        let row_h = (k as u32) * 16 + 12;
        let legend_h = if k > 1 { 26 } else { 0 };
        let top = 44 + legend_h;
        let bottom = 56;
        let height = top + row_h * n as u32 + bottom;
        Frame {
            labels,
            label_w,
            top,
            bottom,
            height,
        }
    }
}

/// The title, and a legend when there is more than one series.
fn draw_title(title_area: &Area<'_>, spec: &HBars, label_w: u32) -> Result<(), String> {
    title_area
        .draw(&Text::new(
            spec.title.clone(),
            (10, 8),
            ("sans-serif", 20)
                .into_font()
                .style(FontStyle::Bold)
                .color(&BLACK),
        ))
        .map_err(err)?;
    if spec.series.len() > 1 {
        let mut x = label_w as i32 + 10;
        for s in &spec.series {
            let color = s.color.rgb();
            title_area
                .draw(&Rectangle::new([(x, 36), (x + 12, 48)], color.filled()))
                .map_err(err)?;
            title_area
                .draw(&Text::new(
                    s.name.clone(),
                    (x + 16, 42),
                    ("sans-serif", 14)
                        .into_font()
                        .color(&BLACK)
                        .pos(Pos::new(HPos::Left, VPos::Center)),
                ))
                .map_err(err)?;
            x += 16 + s.name.chars().count() as i32 * 7 + 20;
        }
    }
    Ok(())
}

/// The text styles of the bars' area.
struct Styles {
    label: TextStyle<'static>,
    value_out: TextStyle<'static>,
    value_in: TextStyle<'static>,
    clip: TextStyle<'static>,
}

impl Styles {
    fn new() -> Styles {
        Styles {
            label: ("sans-serif", 14)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Right, VPos::Center)),
            value_out: ("sans-serif", 12)
                .into_font()
                .color(&RGBColor(0x33, 0x33, 0x33))
                .pos(Pos::new(HPos::Left, VPos::Center)),
            value_in: ("sans-serif", 12)
                .into_font()
                .color(&WHITE)
                .pos(Pos::new(HPos::Right, VPos::Center)),
            clip: ("sans-serif", 11)
                .into_font()
                .color(&RGBColor(0x8a, 0x1c, 0x1c))
                .pos(Pos::new(HPos::Right, VPos::Bottom)),
        }
    }
}

/// Where one bar goes: its band (in category units), the series' slot
/// height, and the pixel column of value 0.
struct BarPlace {
    y0: f64,
    y1: f64,
    slot: f64,
    x0: i32,
}

impl BarPlace {
    fn mid(&self) -> f64 {
        (self.y0 + self.y1) / 2.0
    }
}

/// What every bar is drawn with.
struct Drawing<'r, 'a> {
    root: &'r Area<'a>,
    axis: &'r Axis,
    styles: &'r Styles,
}

impl Drawing<'_, '_> {
    /// One bar of `value`: the bar (cut short past the cap), its whisker
    /// and repeats, a marker for what lies beyond the axis, its value.
    fn bar(
        &self,
        chart: &mut Plot<'_, '_>,
        color: Swatch,
        bar: BarValue,
        value: f64,
        repeats: &[f64],
        place: &BarPlace,
    ) -> Result<(), String> {
        let end = self.axis.drawn(value);
        let cut = end != value;
        draw_rect(chart, color, end, cut, place)?;
        let mut clipped: Vec<f64> = Vec::new();
        if let Some((wlo, whi)) = bar.whisker.filter(|_| !cut) {
            if let (Some(wlo), Some(whi)) = (finite(wlo), finite(whi)) {
                self.whisker(chart, wlo, whi, place.mid(), &mut clipped)?;
            }
        }
        if !cut {
            self.repeats(chart, repeats, place, &mut clipped)?;
        }
        self.clip_marker(chart, &clipped, place.mid())?;
        self.value_label(chart, value, end, cut, place)
    }

    /// The whisker from `wlo` to `whi`, its ends that lie beyond the axis
    /// put in `clipped`.
    fn whisker(
        &self,
        chart: &mut Plot<'_, '_>,
        wlo: f64,
        whi: f64,
        mid: f64,
        clipped: &mut Vec<f64>,
    ) -> Result<(), String> {
        let clip = |v| self.axis.clip(v);
        let style = ShapeStyle::from(&BLACK).stroke_width(1);
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(clip(wlo), mid), (clip(whi), mid)],
                style,
            )))
            .map_err(err)?;
        for w in [wlo, whi] {
            if clip(w) != w {
                clipped.push(w);
                continue;
            }
            chart
                .draw_series(std::iter::once(
                    EmptyElement::at((w, mid)) + PathElement::new(vec![(0, -4), (0, 4)], style),
                ))
                .map_err(err)?;
        }
        Ok(())
    }

    /// The repeats, as dots spread a little up and down so equal ones stay
    /// apart; those beyond the axis put in `clipped`.
    fn repeats(
        &self,
        chart: &mut Plot<'_, '_>,
        repeats: &[f64],
        place: &BarPlace,
        clipped: &mut Vec<f64>,
    ) -> Result<(), String> {
        for (r, v) in repeats.iter().enumerate() {
            let Some(v) = finite(*v) else { continue };
            if self.axis.clip(v) != v {
                clipped.push(v);
                continue;
            }
            let dy = (r % 3) as f64 - 1.0;
            chart
                .draw_series(std::iter::once(Circle::new(
                    (v, place.mid() + dy * place.slot * 0.22),
                    2,
                    ShapeStyle::from(&BLACK.mix(0.6)).filled(),
                )))
                .map_err(err)?;
        }
        Ok(())
    }

    /// A marker at the axis's end, the farthest clipped value beside it.
    fn clip_marker(&self, chart: &Plot<'_, '_>, clipped: &[f64], mid: f64) -> Result<(), String> {
        let Some(far) = clipped
            .iter()
            .copied()
            .max_by(|a, b| a.abs().total_cmp(&b.abs()))
        else {
            return Ok(());
        };
        let x_range = &self.axis.x_range;
        let edge = if far > 0.0 {
            x_range.end
        } else {
            x_range.start
        };
        let (ex, ey) = chart.backend_coord(&(edge, mid));
        let dir = if far > 0.0 { -1 } else { 1 };
        self.root
            .draw(&Polygon::new(
                vec![(ex, ey), (ex + dir * 8, ey - 5), (ex + dir * 8, ey + 5)],
                RGBColor(0x8a, 0x1c, 0x1c).filled(),
            ))
            .map_err(err)?;
        if far > 0.0 {
            self.root
                .draw(&Text::new(
                    format!("▸ {}", self.axis.scale.label(far)),
                    (ex - 10, ey - 4),
                    self.styles.clip.clone(),
                ))
                .map_err(err)?;
        }
        Ok(())
    }

    /// The value at the bar's end (the median), inside the bar when it is
    /// long enough; a cut bar's value sits before its gap.
    fn value_label(
        &self,
        chart: &Plot<'_, '_>,
        value: f64,
        end: f64,
        cut: bool,
        place: &BarPlace,
    ) -> Result<(), String> {
        let text = self.axis.scale.label(value);
        let at = if cut { end / (1.0 + CUT_OVERHANG) } else { end };
        let (bx, by) = chart.backend_coord(&(at, place.mid()));
        let text_w = text.chars().count() as i32 * 7 + 8;
        if end > 0.0 && bx - place.x0 > text_w + 6 {
            self.root
                .draw(&Text::new(text, (bx - 4, by), self.styles.value_in.clone()))
                .map_err(err)?;
        } else {
            self.root
                .draw(&Text::new(
                    text,
                    (bx.max(place.x0) + 5, by),
                    self.styles.value_out.clone(),
                ))
                .map_err(err)?;
        }
        Ok(())
    }
}

/// The bar itself, to `end`; a cut one with a white gap across it just
/// past the cap.
fn draw_rect(
    chart: &mut Plot<'_, '_>,
    color: Swatch,
    end: f64,
    cut: bool,
    place: &BarPlace,
) -> Result<(), String> {
    let (y0, y1) = (place.y0, place.y1);
    chart
        .draw_series(std::iter::once(Rectangle::new(
            [(0.0, y0), (end, y1)],
            color.rgb().mix(0.85).filled(),
        )))
        .map_err(err)?;
    if cut {
        let c = end.abs() / (1.0 + CUT_OVERHANG);
        let gap = [c * 1.015, c * 1.035].map(|x| x.copysign(end));
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [
                    (gap[0], y0 - place.slot * 0.1),
                    (gap[1], y1 + place.slot * 0.1),
                ],
                WHITE.filled(),
            )))
            .map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_labels_and_bars() {
        let spec = HBars {
            title: "t".into(),
            x_desc: "cycles".into(),
            categories: vec![
                "pio-user-out".into(),
                "a-very-long-scenario-name-that-goes-on-and-on-forever".into(),
            ],
            series: vec![Series {
                name: "median".into(),
                color: Swatch::Blue,
                values: vec![
                    Some(BarValue {
                        value: 9000.0,
                        whisker: Some((8800.0, 9400.0)),
                    }),
                    Some(BarValue::plain(-20.0)),
                ],
                samples: Vec::new(),
            }],
            tsc_khz: 0,
            cut_outliers: true,
        };
        let svg = hbars(&spec).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("pio-user-out"));
        assert!(svg.contains("a-very-long-scenario-name"));
        assert!(svg.contains("9,000"));
        assert!(svg.contains("<rect"));
    }

    #[test]
    fn outliers_are_cut() {
        assert_eq!(axis_cap(&[100.0, 200.0, 300.0, 1e6]), Some(300.0));
        assert_eq!(axis_cap(&[100.0, 200.0, 300.0, 1000.0]), None);
        assert_eq!(axis_cap(&[1.0, 1e6]), None, "too few bars to tell");
        assert_eq!(axis_cap(&[-50.0, 100.0, 200.0, 300.0, -1e6]), Some(300.0));
        assert_eq!(axis_cap(&[f64::NAN, 0.0, 0.0, 0.0]), None);
        let spec = HBars {
            title: "t".into(),
            x_desc: "cycles".into(),
            categories: vec!["a".into(), "b".into(), "c".into(), "scan".into()],
            series: vec![Series {
                name: "median".into(),
                color: Swatch::Blue,
                values: [1000.0, 2000.0, 3000.0, 15_360_000.0]
                    .map(|v| Some(BarValue::plain(v)))
                    .to_vec(),
                samples: Vec::new(),
            }],
            tsc_khz: 0,
            cut_outliers: true,
        };
        let svg = hbars(&spec).unwrap();
        assert!(svg.contains("15,360,000"), "the cut bar's value is printed");
        assert!(svg.contains("cut short"));
        assert!(!svg.contains("5,000,000"), "the axis stops near 3,000");
    }

    #[test]
    fn value_labels() {
        assert_eq!(value_label(9000.0), "9,000");
        assert_eq!(value_label(3.0), "3");
        assert_eq!(value_label(2.4), "2.40");
        assert_eq!(value_label(0.39), "0.39");
        assert_eq!(value_label(0.0014), "0.0014");
        assert_eq!(value_label(12.25), "12.2");
        assert_eq!(value_label(123.4), "123");
    }

    #[test]
    fn empty_is_err() {
        let spec = HBars {
            title: "t".into(),
            x_desc: "x".into(),
            categories: vec!["a".into()],
            series: vec![Series {
                name: "s".into(),
                color: Swatch::Blue,
                values: vec![None],
                samples: Vec::new(),
            }],
            tsc_khz: 0,
            cut_outliers: true,
        };
        assert!(hbars(&spec).is_err());
    }
}
