//! Draws the panels of `plot.rs` with plotters and the bundled DejaVu Sans
//! (no system fonts). Both axes carry labelled ticks chosen here
//! ([`TickAxis`]), not by plotters: a log axis gets 1-2-5 ticks (finer when
//! it spans under a decade, so a narrow panel is never unlabelled), x gets
//! 2^k or one tick per shape. Each series is drawn with its own line
//! (solid, dashed, dotted or none) and marker, and its legend entry is drawn
//! the same way. The run's metadata sits under every figure's title.

use super::plot_model::{Line, Marker, Panel, PanelKind, Series, Style, XAxis, YAxis};
use anyhow::{anyhow, Result};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::colors::TRANSPARENT;
use plotters::style::FontStyle;
use std::ops::Range;
use std::path::Path;
use std::sync::OnceLock;

/// The bundled font (DejaVu Sans, see harness/assets/DejaVuSans.LICENSE).
static FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");
/// The family name the charts ask for.
const FAMILY: &str = "sans-serif";
/// Pixels of one panel.
const PANEL: (u32, u32) = (640, 440);
/// Pixels above the panels for the title and the metadata line.
const HEADER: u32 = 100;
/// Pixels of one legend row (the legend's height is reserved above the data).
const LEGEND_ROW: f64 = 17.0;
/// Most tick labels on an axis.
const MAX_TICKS: usize = 9;

/// Registers the bundled font with plotters once per process.
pub fn register_font() -> Result<()> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            plotters::style::register_font(FAMILY, FontStyle::Normal, FONT)
                .map_err(|_| "the bundled DejaVuSans.ttf is not a valid font".to_string())
        })
        .clone()
        .map_err(|e| anyhow!(e))
}

/// An axis whose ticks are given: linear or log, `low < high`.
#[derive(Debug, Clone, PartialEq)]
pub struct TickAxis {
    low: f64,
    high: f64,
    log: bool,
    ticks: Vec<f64>,
}

impl Ranged for TickAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let (v, a, b) = if self.log {
            (value.max(f64::MIN_POSITIVE).ln(), self.low.ln(), self.high.ln())
        } else {
            (*value, self.low, self.high)
        };
        let fraction = (v - a) / (b - a);
        limit.0 + (fraction * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // The same ticks for labels and grid lines, thinned only if the backend has no room.
        let room = hint.max_num_points().max(1);
        let step = self.ticks.len().div_ceil(room).max(1);
        self.ticks.iter().copied().step_by(step).collect()
    }

    fn range(&self) -> Range<f64> {
        self.low..self.high
    }
}

/// Ticks of a log axis over `[low, high]`: the densest 1-2-5 family that
/// gives at most [`MAX_TICKS`], and at least two (`high / low >= 2`).
pub fn log_ticks(low: f64, high: f64) -> Vec<f64> {
    let families: [&[f64]; 4] =
        [&[1.0], &[1.0, 2.0, 5.0], &[1.0, 2.0, 3.0, 5.0], &[1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0]];
    let family_ticks = |mantissas: &[f64]| -> Vec<f64> {
        let (first, last) = (low.log10().floor() as i32, high.log10().ceil() as i32);
        (first..=last)
            .flat_map(|e| mantissas.iter().map(move |m| m * 10f64.powi(e)))
            .filter(|t| *t >= low && *t <= high)
            .collect()
    };
    let mut best = family_ticks(families[0]);
    for family in &families[1..] {
        let ticks = family_ticks(family);
        if ticks.len() <= MAX_TICKS || best.len() < 2 {
            best = ticks;
        }
    }
    if best.len() > MAX_TICKS {
        // More decades than labels: every k-th decade.
        let step = best.len().div_ceil(MAX_TICKS);
        best = best.into_iter().step_by(step).collect();
    }
    best
}

/// Ticks of a linear axis over `[low, high]`: multiples of a 1-2-5 step
/// giving 3 to [`MAX_TICKS`] ticks.
pub fn linear_ticks(low: f64, high: f64) -> Vec<f64> {
    let span = (high - low).max(1e-12);
    let raw = span / 6.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * magnitude).find(|s| span / s <= MAX_TICKS as f64 - 1.0);
    let step = step.unwrap_or(10.0 * magnitude);
    // A hair of slack: 0.8 / 0.1 is 8.000000000000002 in binary floating point.
    let first = (low / step - 1e-9).ceil() as i64;
    let last = (high / step + 1e-9).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// Ticks of the log2 x axis: every integer from `low` to `high`, every
/// second one (even) when there are more than [`MAX_TICKS`].
pub fn log2_ticks(low: f64, high: f64) -> Vec<f64> {
    let (first, last) = (low.ceil() as i64, high.floor() as i64);
    let step = if last - first + 1 > MAX_TICKS as i64 { 2 } else { 1 };
    (first..=last).filter(|k| (k - first) % step == 0 || step == 1).map(|k| k as f64).collect()
}

/// Every value and interval bound of `panel`'s y, positive ones only for a log axis.
fn y_values(panel: &Panel) -> Vec<f64> {
    let log = panel.y_axis == YAxis::Microseconds;
    panel
        .series
        .iter()
        .flat_map(|s| s.points.iter())
        .flat_map(|p| {
            let (low, high) = p.interval.unwrap_or((p.y, p.y));
            [p.y, low, high]
        })
        .filter(|v| v.is_finite() && (!log || *v > 0.0))
        .collect()
}

/// The y axis of a panel: the data padded, then stretched upwards so that
/// the legend (`legend_rows` rows at the top of `plot_height` pixels) covers
/// no data.
fn y_axis(panel: &Panel, legend_rows: usize, plot_height: f64) -> TickAxis {
    let values = y_values(panel);
    let (lo, hi) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(*v), b.max(*v)));
    let reserved = ((legend_rows as f64 * LEGEND_ROW + 14.0) / plot_height).min(0.6);
    match panel.y_axis {
        YAxis::Microseconds => {
            let (lo, hi) = if lo.is_finite() { (lo / 1.4, hi * 1.4) } else { (1.0, 10.0) };
            let (lo, hi) = if hi / lo < 2.2 { (lo / 1.5, hi * 1.5) } else { (lo, hi) };
            let top = (lo.ln() + (hi.ln() - lo.ln()) / (1.0 - reserved)).exp();
            TickAxis { low: lo, high: top, log: true, ticks: log_ticks(lo, hi) }
        }
        YAxis::Ratio => {
            // Always show 1.0 and at least 0.9-1.1.
            let (lo, hi) = if lo.is_finite() { (lo.min(0.9), hi.max(1.1)) } else { (0.9, 1.1) };
            let pad = 0.06 * (hi - lo);
            let (lo, hi) = (lo - pad, hi + pad);
            let top = lo + (hi - lo) / (1.0 - reserved);
            TickAxis { low: lo, high: top, log: false, ticks: linear_ticks(lo, hi) }
        }
    }
}

fn x_axis(panel: &Panel) -> TickAxis {
    match &panel.x_axis {
        XAxis::Categories(c) => {
            let n = c.len().max(1) as f64;
            TickAxis { low: -0.6, high: n - 0.4, log: false, ticks: (0..c.len()).map(|i| i as f64).collect() }
        }
        XAxis::Log2Elements => {
            let xs = panel.series.iter().flat_map(|s| s.points.iter().map(|p| p.x));
            let (mut x0, mut x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
            if !(x0.is_finite() && x1.is_finite()) {
                (x0, x1) = (10.0, 28.0);
            }
            if x1 - x0 < 1.0 {
                x0 -= 1.0;
                x1 += 1.0;
            }
            TickAxis { low: x0 - 0.4, high: x1 + 0.4, log: false, ticks: log2_ticks(x0, x1) }
        }
    }
}

/// A y tick label: microseconds with the digits their size needs, or a ratio.
fn y_label(y: f64, axis: YAxis) -> String {
    match axis {
        YAxis::Ratio => format!("{y:.2}"),
        YAxis::Microseconds if y >= 100.0 => format!("{y:.0}"),
        YAxis::Microseconds if y >= 1.0 => format!("{y:.1}").trim_end_matches(".0").to_string(),
        YAxis::Microseconds => format!("{y:.2}"),
    }
}

type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<TickAxis, TickAxis>>;

fn colour_of(style: &Style) -> RGBColor {
    let (r, g, b) = style.colour;
    RGBColor(r, g, b)
}

/// The points of a polygon marker centred `cx` pixels right of the origin
/// (a degenerate one for the other markers, drawn transparent).
fn polygon(marker: Marker, cx: i32) -> Vec<(i32, i32)> {
    let shape: &[(i32, i32)] = match marker {
        Marker::TriangleUp => &[(0, -5), (5, 4), (-5, 4)],
        Marker::TriangleDown => &[(0, 5), (5, -4), (-5, -4)],
        Marker::Diamond => &[(0, -6), (5, 0), (0, 6), (-5, 0)],
        _ => &[(0, 0), (0, 0), (0, 0)],
    };
    shape.iter().map(|(x, y)| (x + cx, *y)).collect()
}

/// Dash and gap lengths (pixels) of a line, `None` for solid.
fn dashes(line: Line) -> Option<(i32, i32)> {
    match line {
        Line::Dashed => Some((10, 5)),
        Line::Dotted => Some((3, 4)),
        Line::Solid | Line::None => None,
    }
}

/// The four pieces (from, to pixels) of a 24-pixel legend line drawn as
/// `line` is; empty pieces are (0, 0).
fn legend_line(line: Line) -> [(i32, i32); 4] {
    let mut pieces = [(0, 0); 4];
    match (line, dashes(line)) {
        (Line::None, _) => {}
        (_, None) => pieces[0] = (0, 24),
        (_, Some((dash, gap))) => {
            for (slot, start) in pieces.iter_mut().zip((0..24).step_by((dash + gap) as usize)) {
                *slot = (start, (start + dash).min(24));
            }
        }
    }
    pieces
}

/// One element that draws any marker and a legend line: every part is
/// always present (one concrete type, which plotters' legends need) and the
/// parts `style` does not use are transparent. `$pieces` are the line's
/// pieces ([`legend_line`]) and `$cx` the marker's offset from `$at`.
macro_rules! glyph {
    ($style:expr, $at:expr, $pieces:expr, $cx:expr) => {{
        let style: Style = $style;
        let pieces: [(i32, i32); 4] = $pieces;
        let cx: i32 = $cx;
        let shown = |yes: bool| if yes { colour_of(&style).to_rgba() } else { TRANSPARENT };
        let piece = |i: usize| {
            let (from, to) = pieces[i];
            PathElement::new(vec![(from, 0), (to, 0)], shown(to > from).stroke_width(2))
        };
        let is_polygon = matches!(style.marker, Marker::TriangleUp | Marker::TriangleDown | Marker::Diamond);
        let cross = shown(style.marker == Marker::Cross).stroke_width(2);
        EmptyElement::at($at)
            + piece(0)
            + piece(1)
            + piece(2)
            + piece(3)
            + Circle::new((cx, 0), 4, shown(style.marker == Marker::Circle).filled())
            + Rectangle::new([(cx - 4, -4), (cx + 4, 4)], shown(style.marker == Marker::Square).filled())
            + Polygon::new(polygon(style.marker, cx), shown(is_polygon).filled())
            + PathElement::new(vec![(cx - 4, -4), (cx + 4, 4)], cross)
            + PathElement::new(vec![(cx - 4, 4), (cx + 4, -4)], cross)
    }};
}

fn draw_series<'a, DB: DrawingBackend + 'a>(chart: &mut Chart<'a, DB>, series: &Series) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let style = series.style;
    let colour = colour_of(&style);
    let points: Vec<(f64, f64)> = series.points.iter().map(|p| (p.x, p.y)).collect();
    let failed = |e| anyhow!("drawing {}: {e:?}", series.label);
    match dashes(style.line) {
        Some((dash, gap)) => {
            chart
                .draw_series(DashedLineSeries::new(points.clone(), dash, gap, colour.stroke_width(2)))
                .map_err(failed)?;
        }
        None if style.line == Line::Solid => {
            chart.draw_series(LineSeries::new(points.clone(), colour.stroke_width(2))).map_err(failed)?;
        }
        None => {}
    }
    // Error bars: the interval as a vertical stroke with caps 0.08 x-units wide.
    let bars = series.points.iter().filter_map(|p| p.interval.map(|i| (p.x, i))).flat_map(|(x, (low, high))| {
        [
            PathElement::new(vec![(x, low), (x, high)], colour.stroke_width(1)),
            PathElement::new(vec![(x - 0.08, low), (x + 0.08, low)], colour.stroke_width(1)),
            PathElement::new(vec![(x - 0.08, high), (x + 0.08, high)], colour.stroke_width(1)),
        ]
    });
    chart.draw_series(bars).map_err(failed)?;
    let no_line = [(0, 0); 4];
    chart
        .draw_series(points.iter().map(|&p| glyph!(style, p, no_line, 0)))
        .map_err(failed)?
        .label(series.label.clone())
        .legend(move |at| glyph!(style, at, legend_line(style.line), 12));
    Ok(())
}

/// The x offset of series `i` of `count` on a categorical axis, so that the
/// points of one category sit side by side.
fn category_offset(i: usize, count: usize) -> f64 {
    0.12 * (i as f64 - (count as f64 - 1.0) / 2.0)
}

fn draw_panel<'a, DB: DrawingBackend + 'a>(area: &'a DrawingArea<DB, Shift>, panel: &Panel) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let categories = match &panel.x_axis {
        XAxis::Categories(c) => Some(c.clone()),
        XAxis::Log2Elements => None,
    };
    // The panel less its caption, margins and axis labels: the plotting height.
    let plot_height = (area.dim_in_pixel().1 as f64 - 110.0).max(100.0);
    let legend_rows = panel.series.len() + usize::from(panel.y_axis == YAxis::Ratio);
    let (x, y) = (x_axis(panel), y_axis(panel, legend_rows, plot_height));
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, (FAMILY, 16))
        .margin(10)
        .x_label_area_size(46)
        .y_label_area_size(62)
        .build_cartesian_2d(x, y)
        .map_err(|e| anyhow!("building the chart {}: {e:?}", panel.title))?;
    let x_formatter = |v: &f64| match &categories {
        Some(c) => c.get(v.round().max(0.0) as usize).cloned().unwrap_or_default(),
        None => format!("2^{}", v.round() as i64),
    };
    let y_kind = panel.y_axis;
    let (x_desc, y_desc) = match (categories.is_some(), y_kind) {
        (true, YAxis::Ratio) => ("shape (rows x cols)", "peer time / primlab time"),
        (false, YAxis::Ratio) => ("n (elements)", "peer time / primlab time"),
        (true, YAxis::Microseconds) => ("shape (rows x cols)", "median us per call (log)"),
        (false, YAxis::Microseconds) => ("n (elements, log)", "median us per call (log)"),
    };
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&x_formatter)
        .y_label_formatter(&|v| y_label(*v, y_kind))
        .x_labels(MAX_TICKS + 1)
        .y_labels(MAX_TICKS + 1)
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.12))
        .label_style((FAMILY, 12))
        .axis_desc_style((FAMILY, 13))
        .draw()
        .map_err(|e| anyhow!("drawing the axes of {}: {e:?}", panel.title))?;
    if panel.y_axis == YAxis::Ratio {
        let (x0, x1) = (chart.x_range().start, chart.x_range().end);
        let style = Style { colour: (110, 110, 110), marker: Marker::None, line: Line::Dotted };
        chart
            .draw_series(DashedLineSeries::new(vec![(x0, 1.0), (x1, 1.0)], 3, 4, colour_of(&style).stroke_width(2)))
            .map_err(|e| anyhow!("drawing the 1.0 line of {}: {e:?}", panel.title))?
            .label("1.0: as fast as the peer")
            .legend(move |at| glyph!(style, at, legend_line(style.line), 12));
    }
    let count = panel.series.len();
    for (i, series) in panel.series.iter().enumerate() {
        let shifted;
        let series = if categories.is_some() {
            let dx = category_offset(i, count);
            let mut moved = series.clone();
            moved.points.iter_mut().for_each(|p| p.x += dx);
            shifted = moved;
            &shifted
        } else {
            series
        };
        draw_series(&mut chart, series)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font((FAMILY, 12))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK.mix(0.5))
        .draw()
        .map_err(|e| anyhow!("drawing the legend of {}: {e:?}", panel.title))?;
    Ok(())
}

/// The column of a panel kind in the figure's grid: kinds that no row has
/// take no column.
fn columns(rows: &[Vec<Panel>]) -> Vec<PanelKind> {
    let mut kinds: Vec<PanelKind> = rows.iter().flatten().map(|p| p.kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    kinds
}

/// Draws `rows` (one row of panels per op) into one PNG at `path`: `title`,
/// then `metadata` (two lines), then the panels, each kind in its own column.
pub fn draw_png(path: &Path, title: &str, metadata: &str, rows: &[Vec<Panel>]) -> Result<()> {
    register_font()?;
    let kinds = columns(rows);
    if kinds.is_empty() {
        return Err(anyhow!("nothing to plot for {title}"));
    }
    let size = (PANEL.0 * kinds.len() as u32, PANEL.1 * rows.len() as u32 + HEADER);
    let root = BitMapBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("filling {}: {e:?}", path.display()))?;
    let (header, body) = root.split_vertically(HEADER);
    let text = |s: &str, y: i32, px: u32| {
        header.draw(&Text::new(s.to_string(), (16, y), (FAMILY, px).into_font().color(&BLACK)))
    };
    text(title, 8, 26).map_err(|e| anyhow!("titling {}: {e:?}", path.display()))?;
    // Two lines, split at the middle " | ", so that a narrow figure holds it all.
    let parts: Vec<&str> = metadata.split(" | ").collect();
    let half = parts.len().div_ceil(2);
    for (row, line) in [parts[..half].join(" | "), parts[half..].join(" | ")].iter().enumerate() {
        text(line, 44 + 24 * row as i32, 15).map_err(|e| anyhow!("captioning {}: {e:?}", path.display()))?;
    }
    let cells = body.split_evenly((rows.len(), kinds.len()));
    for (r, row) in rows.iter().enumerate() {
        for panel in row {
            let column = kinds.iter().position(|k| *k == panel.kind).unwrap_or(0);
            draw_panel(&cells[r * kinds.len() + column], panel)?;
        }
    }
    root.present().map_err(|e| anyhow!("writing {}: {e:?}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_ticks_label_every_range_with_two_to_nine_ticks() {
        assert_eq!(log_ticks(5.0, 2000.0), vec![5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0]);
        // Under a decade (the softmax panels): finer ticks, never none.
        let narrow = log_ticks(16.0, 37.0);
        assert_eq!(narrow, vec![20.0, 30.0]);
        // Seven decades: decades only.
        assert_eq!(log_ticks(1.0, 1e6), vec![1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6]);
        for (low, high) in [(7.0, 16.0), (0.3, 900.0), (100.0, 250.0), (1.0, 1e12)] {
            let t = log_ticks(low, high);
            assert!((2..=MAX_TICKS).contains(&t.len()), "{low}-{high}: {t:?}");
            assert!(t.iter().all(|v| *v >= low && *v <= high));
        }
    }

    #[test]
    fn linear_ticks_are_round_steps_inside_the_range() {
        let tenths: Vec<f64> = linear_ticks(0.8, 1.6).iter().map(|v| (v * 10.0).round()).collect();
        assert_eq!(tenths, [8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0]);
        let t = linear_ticks(0.85, 2.4);
        assert!((3..=MAX_TICKS).contains(&t.len()), "{t:?}");
        assert!(t.iter().any(|v| (v - 1.0).abs() < 1e-9), "1.0 is a tick: {t:?}");
        assert!(t.windows(2).all(|w| ((w[1] - w[0]) - (t[1] - t[0])).abs() < 1e-9));
    }

    #[test]
    fn the_log2_axis_labels_every_size_or_every_other() {
        assert_eq!(log2_ticks(10.0, 16.0), vec![10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0]);
        assert_eq!(log2_ticks(10.0, 28.0), (10..=28).step_by(2).map(f64::from).collect::<Vec<_>>());
    }

    #[test]
    fn the_axis_maps_log_and_linear_values_to_pixels() {
        let log = TickAxis { low: 1.0, high: 100.0, log: true, ticks: vec![] };
        assert_eq!(log.map(&10.0, (0, 200)), 100);
        let linear = TickAxis { low: 0.0, high: 2.0, log: false, ticks: vec![] };
        assert_eq!(linear.map(&0.5, (0, 200)), 50);
    }
}
