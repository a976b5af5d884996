//! Draws the panels of `plot.rs` with plotters and the bundled DejaVu Sans
//! (no system fonts): log-log axes (log2 n against microseconds) or a
//! categorical x axis, error bars as vertical strokes with caps, rooflines
//! dashed, and the run's metadata under every figure's title.

use super::plot::{Panel, Series, XAxis};
use anyhow::{anyhow, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::Path;
use std::sync::OnceLock;

/// The bundled font (DejaVu Sans, see harness/assets/DejaVuSans.LICENSE).
static FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");
/// The family name the charts ask for.
const FAMILY: &str = "sans-serif";
/// Pixels of one panel.
const PANEL: (u32, u32) = (860, 540);
/// Pixels above the panels for the title and the metadata line.
const HEADER: u32 = 100;

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

/// The y range of a panel: every median and interval bound, padded by a
/// factor on the log axis; a positive range even for an empty panel.
fn y_range(panel: &Panel) -> (f64, f64) {
    let values = panel.series.iter().flat_map(|s| {
        s.points.iter().flat_map(|p| {
            let (low, high) = p.interval.unwrap_or((p.y, p.y));
            [p.y, low, high]
        })
    });
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
    if lo.is_finite() && hi.is_finite() {
        (lo / 1.5, hi * 1.5)
    } else {
        (0.1, 10.0)
    }
}

fn x_range(panel: &Panel) -> (f64, f64) {
    match &panel.x_axis {
        XAxis::Categories(c) => (-0.5, c.len().max(1) as f64 - 0.5),
        XAxis::Log2Elements => {
            let (mut x0, mut x1) = panel
                .series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.x))
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
            if !(x0.is_finite() && x1.is_finite()) {
                (x0, x1) = (10.0, 28.0);
            }
            if x1 - x0 < 1.0 {
                x0 -= 1.0;
                x1 += 1.0;
            }
            (x0 - 0.3, x1 + 0.3)
        }
    }
}

fn us_label(y: f64) -> String {
    if y >= 100.0 {
        format!("{y:.0}")
    } else if y >= 1.0 {
        format!("{y:.1}")
    } else {
        format!("{y:.2}")
    }
}

fn draw_panel<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, panel: &Panel) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let (x0, x1) = x_range(panel);
    let (y0, y1) = y_range(panel);
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, (FAMILY, 20))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, (y0..y1).log_scale())
        .map_err(|e| anyhow!("building the chart {}: {e:?}", panel.title))?;
    let categories = match &panel.x_axis {
        XAxis::Categories(c) => Some(c.clone()),
        XAxis::Log2Elements => None,
    };
    let x_formatter = |x: &f64| match &categories {
        Some(c) => {
            let i = x.round();
            if (x - i).abs() < 0.05 && i >= 0.0 {
                c.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        }
        None => format!("2^{}", x.round() as i64),
    };
    let x_desc = if categories.is_some() { "implementation" } else { "n (elements, log axis)" };
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x_desc)
        .y_desc("median us per call (log axis)")
        .x_label_formatter(&x_formatter)
        .y_label_formatter(&|y| us_label(*y))
        .label_style((FAMILY, 13))
        .axis_desc_style((FAMILY, 14));
    if let Some(c) = &categories {
        mesh.x_labels(c.len() * 4 + 1);
    }
    mesh.draw().map_err(|e| anyhow!("drawing the axes of {}: {e:?}", panel.title))?;
    for series in &panel.series {
        draw_series(&mut chart, series, categories.is_none())?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font((FAMILY, 12))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| anyhow!("drawing the legend of {}: {e:?}", panel.title))?;
    Ok(())
}

type Chart<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::combinators::LogCoord<f64>>,
>;

fn draw_series<DB: DrawingBackend>(chart: &mut Chart<'_, DB>, series: &Series, join: bool) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let (r, g, b) = series.colour;
    let colour = RGBColor(r, g, b);
    let points: Vec<(f64, f64)> = series.points.iter().map(|p| (p.x, p.y)).collect();
    let failed = |e| anyhow!("drawing {}: {e:?}", series.label);
    if series.roofline {
        let dash = if series.label.starts_with("copy") { 10 } else { 4 };
        let style = colour.stroke_width(2);
        chart
            .draw_series(DashedLineSeries::new(points, dash, 5, style))
            .map_err(failed)?
            .label(series.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        return Ok(());
    }
    if join {
        chart.draw_series(LineSeries::new(points.clone(), colour.stroke_width(2))).map_err(failed)?;
    }
    chart
        .draw_series(points.iter().map(|&p| Circle::new(p, 4, colour.filled())))
        .map_err(failed)?
        .label(series.label.clone())
        .legend(move |(x, y)| Circle::new((x + 10, y), 4, colour.filled()));
    // Error bars: the interval as a vertical stroke with caps 0.08 x-units wide.
    let bars = series.points.iter().filter_map(|p| p.interval.map(|i| (p.x, i))).flat_map(|(x, (low, high))| {
        [
            PathElement::new(vec![(x, low), (x, high)], colour.stroke_width(2)),
            PathElement::new(vec![(x - 0.08, low), (x + 0.08, low)], colour.stroke_width(2)),
            PathElement::new(vec![(x - 0.08, high), (x + 0.08, high)], colour.stroke_width(2)),
        ]
    });
    chart.draw_series(bars).map_err(failed)?;
    Ok(())
}

/// Draws `panels` into one PNG at `path`: `title`, then `metadata` (one
/// line), then the panels two per row.
pub fn draw_png(path: &Path, title: &str, metadata: &str, panels: &[Panel]) -> Result<()> {
    register_font()?;
    if panels.is_empty() {
        return Err(anyhow!("nothing to plot for {title}"));
    }
    let columns = panels.len().min(2);
    let rows = panels.len().div_ceil(columns);
    let size = (PANEL.0 * columns as u32, PANEL.1 * rows as u32 + HEADER);
    let root = BitMapBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("filling {}: {e:?}", path.display()))?;
    let (header, body) = root.split_vertically(HEADER);
    let text = |s: &str, y: i32, px: u32| {
        header.draw(&Text::new(s.to_string(), (16, y), (FAMILY, px).into_font().color(&BLACK)))
    };
    text(title, 8, 26).map_err(|e| anyhow!("titling {}: {e:?}", path.display()))?;
    // Two lines, split at the middle " | ", so that a one-panel figure holds it all.
    let parts: Vec<&str> = metadata.split(" | ").collect();
    let half = parts.len().div_ceil(2);
    for (row, line) in [parts[..half].join(" | "), parts[half..].join(" | ")].iter().enumerate() {
        text(line, 44 + 24 * row as i32, 15).map_err(|e| anyhow!("captioning {}: {e:?}", path.display()))?;
    }
    for (area, panel) in body.split_evenly((rows, columns)).iter().zip(panels) {
        draw_panel(area, panel)?;
    }
    root.present().map_err(|e| anyhow!("writing {}: {e:?}", path.display()))?;
    Ok(())
}
