//! PNG plots of a bench receipt, drawn with plotters and the bundled DejaVu
//! Sans (no system fonts): one PNG per primitive, one panel per op, logical
//! GB/s against n on a log2 axis, one line per implementation (each primlab
//! variant, CUB, PyTorch) and the same run's copy and read ceilings as
//! dashed lines.

use super::entries::ceilings::{COPY_OP, READ_OP};
use super::record::{BenchRecord, IMPL_CEILING, IMPL_CUB, IMPL_PRIMLAB, IMPL_TORCH};
use anyhow::{anyhow, Result};
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The bundled font (DejaVu Sans, see harness/assets/DejaVuSans.LICENSE).
static FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");
/// The family name the charts ask for.
const FAMILY: &str = "sans-serif";
/// Pixels of one panel.
const PANEL: (u32, u32) = (860, 540);

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

/// One line of a panel.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Legend text.
    pub label: String,
    /// (log2 of the elements, logical GB/s), ascending in x.
    pub points: Vec<(f64, f64)>,
    /// A ceiling (drawn dashed, grey).
    pub ceiling: bool,
    /// RGB colour: primlab variants from a palette, CUB black, PyTorch orange, ceilings grey.
    pub colour: (u8, u8, u8),
}

/// One chart: an op's lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// Title, e.g. the op name.
    pub title: String,
    /// The lines.
    pub lines: Vec<Line>,
}

fn x_of(record: &BenchRecord) -> f64 {
    (record.size().elements().max(1) as f64).log2()
}

fn points(records: &[&BenchRecord]) -> Vec<(f64, f64)> {
    let mut points: Vec<(f64, f64)> = records
        .iter()
        .filter_map(|r| r.timed_median().map(|m| (x_of(r), r.logical_bytes as f64 / (m * 1e3))))
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points
}

fn implementation_rank(implementation: &str) -> usize {
    match implementation {
        IMPL_PRIMLAB => 0,
        IMPL_CUB => 1,
        IMPL_TORCH => 2,
        _ => 3,
    }
}

/// The panels of `primitive`: one per op (dtype apart, sorted), each with
/// a line per (implementation, variant) and the ceilings.
pub fn panels_for(records: &[BenchRecord], primitive: &str) -> Vec<Panel> {
    let mut ops: Vec<&str> = records.iter().filter(|r| r.primitive == primitive).map(|r| r.op.as_str()).collect();
    ops.sort_unstable();
    ops.dedup();
    let ceilings: Vec<Line> = [(COPY_OP, "copy ceiling (logical 8n)"), (READ_OP, "read ceiling (4n)")]
        .iter()
        .map(|(op, label)| {
            let rs: Vec<&BenchRecord> =
                records.iter().filter(|r| r.implementation == IMPL_CEILING && r.op == *op).collect();
            let grey = if *op == COPY_OP { 70 } else { 150 };
            Line { label: label.to_string(), points: points(&rs), ceiling: true, colour: (grey, grey, grey) }
        })
        .filter(|l| !l.points.is_empty())
        .collect();
    ops.into_iter()
        .map(|op| {
            let mut keys: Vec<(&str, &str)> = records
                .iter()
                .filter(|r| r.primitive == primitive && r.op == op)
                .map(|r| (r.implementation.as_str(), r.variant.as_str()))
                .collect();
            keys.sort_by_key(|(i, v)| (implementation_rank(i), *i, *v));
            keys.dedup();
            let mut primlab_lines = 0;
            let mut lines: Vec<Line> = keys
                .iter()
                .map(|(implementation, variant)| {
                    let rs: Vec<&BenchRecord> = records
                        .iter()
                        .filter(|r| r.op == op && r.implementation == *implementation && r.variant == *variant)
                        .collect();
                    let label = if *implementation == IMPL_PRIMLAB {
                        format!("primlab {variant}")
                    } else {
                        format!("{implementation} ({variant})")
                    };
                    let colour = match *implementation {
                        IMPL_PRIMLAB => {
                            primlab_lines += 1;
                            palette(primlab_lines - 1)
                        }
                        IMPL_CUB => (0, 0, 0),
                        IMPL_TORCH => (255, 127, 14),
                        _ => (140, 86, 75),
                    };
                    Line { label, points: points(&rs), ceiling: false, colour }
                })
                .filter(|l| !l.points.is_empty())
                .collect();
            if primitive != "ceilings" {
                lines.extend(ceilings.iter().cloned());
            }
            Panel { title: op.to_string(), lines }
        })
        .filter(|p| p.lines.iter().any(|l| !l.ceiling))
        .collect()
}

/// Colours of primlab's variants (neither black nor orange, which mark CUB and PyTorch).
fn palette(index: usize) -> (u8, u8, u8) {
    const COLOURS: [(u8, u8, u8); 7] = [
        (31, 119, 180),
        (214, 39, 40),
        (44, 160, 44),
        (148, 103, 189),
        (23, 190, 207),
        (227, 119, 194),
        (188, 189, 34),
    ];
    COLOURS[index % COLOURS.len()]
}

fn draw_panel<DB: DrawingBackend>(area: &DrawingArea<DB, plotters::coord::Shift>, panel: &Panel) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let all: Vec<(f64, f64)> = panel.lines.iter().flat_map(|l| l.points.iter().copied()).collect();
    let (mut x0, mut x1) = all.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| (a.min(p.0), b.max(p.0)));
    if !(x0.is_finite() && x1.is_finite()) {
        (x0, x1) = (10.0, 28.0);
    }
    if x1 - x0 < 1.0 {
        x0 -= 1.0;
        x1 += 1.0;
    }
    let y1 = all.iter().map(|p| p.1).fold(0.0f64, f64::max).max(1.0) * 1.12;
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, (FAMILY, 22))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d((x0 - 0.3)..(x1 + 0.3), 0.0..y1)
        .map_err(|e| anyhow!("building the chart {}: {e:?}", panel.title))?;
    chart
        .configure_mesh()
        .x_desc("n (elements, log2 axis)")
        .y_desc("logical GB/s")
        .x_label_formatter(&|x| format!("2^{}", x.round() as i64))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style((FAMILY, 14))
        .axis_desc_style((FAMILY, 15))
        .draw()
        .map_err(|e| anyhow!("drawing the axes of {}: {e:?}", panel.title))?;
    for line in &panel.lines {
        let (r, g, b) = line.colour;
        if line.ceiling {
            let dash = if line.label.starts_with("copy") { 10 } else { 4 };
            let style = RGBColor(r, g, b).stroke_width(2);
            chart
                .draw_series(DashedLineSeries::new(line.points.clone(), dash, 5, style))
                .map_err(|e| anyhow!("drawing {}: {e:?}", line.label))?
                .label(line.label.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        } else {
            let c = RGBColor(r, g, b);
            let style = c.stroke_width(2);
            chart
                .draw_series(LineSeries::new(line.points.clone(), style).point_size(3))
                .map_err(|e| anyhow!("drawing {}: {e:?}", line.label))?
                .label(line.label.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font((FAMILY, 13))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| anyhow!("drawing the legend of {}: {e:?}", panel.title))?;
    Ok(())
}

/// Draws `panels` into one PNG at `path` titled `title` (two panels per row).
pub fn draw_png(path: &Path, title: &str, panels: &[Panel]) -> Result<()> {
    register_font()?;
    if panels.is_empty() {
        return Err(anyhow!("nothing to plot for {title}"));
    }
    let columns = panels.len().min(2);
    let rows = panels.len().div_ceil(columns);
    let size = (PANEL.0 * columns as u32, PANEL.1 * rows as u32 + 50);
    let root = BitMapBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("filling {}: {e:?}", path.display()))?;
    let body = root.titled(title, (FAMILY, 28)).map_err(|e| anyhow!("titling {}: {e:?}", path.display()))?;
    for (area, panel) in body.split_evenly((rows, columns)).iter().zip(panels) {
        draw_panel(area, panel)?;
    }
    root.present().map_err(|e| anyhow!("writing {}: {e:?}", path.display()))?;
    Ok(())
}

/// Draws one PNG per primitive with records into `out_dir`; returns
/// (primitive, path) of each file written.
pub fn draw_all(records: &[BenchRecord], out_dir: &Path, machine: &str) -> Result<Vec<(String, PathBuf)>> {
    let mut primitives: Vec<&str> = records.iter().map(|r| r.primitive.as_str()).collect();
    primitives.sort_unstable();
    primitives.dedup();
    let mut written = Vec::new();
    for primitive in primitives {
        let panels = panels_for(records, primitive);
        if panels.is_empty() {
            continue;
        }
        let path = out_dir.join(format!("{primitive}.png"));
        let title = format!("{primitive}: logical GB/s vs n ({machine})");
        // plotters writes to a path: render to a temporary one and rename it into place.
        crate::bench::output::render_atomic(&path, |temp| draw_png(temp, &title, &panels))?;
        written.push((primitive.to_string(), path));
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(implementation: &str, primitive: &str, op: &str, variant: &str, n: usize, us: f64) -> BenchRecord {
        BenchRecord {
            gbps: None,
            ..BenchRecord::synthetic(implementation, primitive, op, variant, n, us, 4 * n as u64)
        }
    }

    #[test]
    fn one_panel_per_op_with_implementations_and_ceilings() {
        let records = vec![
            rec(IMPL_PRIMLAB, "scan", "exclusive_scan_i32_i64", "decoupled_lookback", 1 << 20, 10.0),
            rec(IMPL_PRIMLAB, "scan", "exclusive_scan_i32_i64", "decoupled_lookback", 1 << 10, 5.0),
            rec(IMPL_CUB, "scan", "exclusive_scan_i32_i64", "cub_exclusive_scan_i32_i64", 1 << 20, 12.0),
            rec(IMPL_TORCH, "scan", "inclusive_scan_i32_i64", "torch_cumsum_i32_i64", 1 << 20, 30.0),
            rec(IMPL_CEILING, "ceilings", COPY_OP, COPY_OP, 1 << 20, 5.0),
        ];
        let panels = panels_for(&records, "scan");
        assert_eq!(panels.len(), 2);
        let exclusive = &panels[0];
        assert_eq!(exclusive.title, "exclusive_scan_i32_i64");
        let labels: Vec<&str> = exclusive.lines.iter().map(|l| l.label.as_str()).collect();
        assert_eq!(
            labels,
            ["primlab decoupled_lookback", "cub (cub_exclusive_scan_i32_i64)", "copy ceiling (logical 8n)"]
        );
        // Points ascend in x; the CUB line is black; the ceiling is dashed grey.
        assert_eq!(exclusive.lines[0].points[0].0, 10.0);
        assert_eq!(exclusive.lines[1].colour, (0, 0, 0));
        assert!(exclusive.lines[2].ceiling);
        assert_eq!(panels[1].lines[0].colour, (255, 127, 14));
    }
}
