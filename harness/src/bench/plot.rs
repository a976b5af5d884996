//! What the PNG plots of a bench receipt show (drawing is `plot_draw.rs`):
//! one PNG per primitive; for the 1-D ops one panel per op, median time
//! against n on log-log axes with the 95 % interval as error bars and the
//! time the op's logical bytes take at the same run's copy and read
//! bandwidth as dashed roofline lines; for the row ops (records with a
//! shape) one panel per op and shape, one point per implementation on a
//! categorical axis. Each implementation label keeps one colour across every
//! plot of a report ([`ColourMap`]).

use super::entries::ceilings::{COPY_OP, READ_OP};
use super::record::{BenchRecord, BenchSize, IMPL_CEILING, IMPL_CUB, IMPL_PRIMLAB, IMPL_TORCH};
use std::path::{Path, PathBuf};

use super::plot_draw::draw_png;

/// RGB.
pub type Colour = (u8, u8, u8);

/// One plotted value: the median at `x`, with its interval when known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// log2 of n (1-D panels) or the category's index (row panels).
    pub x: f64,
    /// Median microseconds.
    pub y: f64,
    /// The median's 95 % interval, microseconds.
    pub interval: Option<(f64, f64)>,
}

/// One series of a panel.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text (the record label, e.g. `primlab single_pass`, `cub`).
    pub label: String,
    /// Points, ascending in x.
    pub points: Vec<Point>,
    /// A roofline (drawn dashed, grey): the ceiling time of the op's bytes.
    pub roofline: bool,
    /// Colour from the [`ColourMap`].
    pub colour: Colour,
}

/// The x axis of a panel.
#[derive(Debug, Clone, PartialEq)]
pub enum XAxis {
    /// log2 of the elements.
    Log2Elements,
    /// One category per series (the row ops: implementations at one shape).
    Categories(Vec<String>),
}

/// One chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// Title: the op, and the shape for row panels.
    pub title: String,
    /// The x axis.
    pub x_axis: XAxis,
    /// The series.
    pub series: Vec<Series>,
}

/// Colours of primlab's variants and other labels (neither black nor orange,
/// which mark CUB and PyTorch, nor grey, the rooflines).
const PALETTE: [Colour; 10] = [
    (31, 119, 180),
    (214, 39, 40),
    (44, 160, 44),
    (148, 103, 189),
    (23, 190, 207),
    (227, 119, 194),
    (188, 189, 34),
    (140, 86, 75),
    (0, 90, 50),
    (120, 0, 120),
];

/// One colour per implementation label across every plot of a report: CUB
/// black, PyTorch orange, rooflines grey, every other label (primlab's
/// variants, hot records) a palette colour by its rank among the receipt's
/// labels in sorted order, so a variant has the same colour in every figure.
#[derive(Debug, Clone, PartialEq)]
pub struct ColourMap {
    labels: Vec<String>,
}

impl ColourMap {
    /// The map of `records`' labels.
    pub fn new(records: &[BenchRecord]) -> ColourMap {
        let mut labels: Vec<String> = records.iter().map(series_label).collect();
        labels.sort_unstable();
        labels.dedup();
        ColourMap { labels }
    }

    /// The colour of `record`'s series.
    pub fn colour(&self, record: &BenchRecord) -> Colour {
        match record.implementation.as_str() {
            IMPL_CUB => (0, 0, 0),
            IMPL_TORCH => (255, 127, 14),
            IMPL_CEILING => (110, 110, 110),
            _ => {
                let label = series_label(record);
                let rank = self.labels.iter().position(|l| *l == label).unwrap_or(0);
                PALETTE[rank % PALETTE.len()]
            }
        }
    }
}

/// The legend label of a record's series: primlab and ceilings by variant,
/// the baselines by implementation (their variant is their own op name).
pub fn series_label(record: &BenchRecord) -> String {
    match record.implementation.as_str() {
        IMPL_PRIMLAB | IMPL_CEILING => record.label(),
        other if record.timing_mode == super::record::TimingMode::Hot => format!("{other} (hot)"),
        other => other.to_string(),
    }
}

fn point(record: &BenchRecord, x: f64) -> Option<Point> {
    let y = record.timed_median()?;
    let interval = record.noise().map(|n| (n.median_interval.low, n.median_interval.high));
    Some(Point { x, y, interval })
}

fn log2_of(n: usize) -> f64 {
    (n.max(1) as f64).log2()
}

/// Ranks the series: primlab first, then the baselines.
fn implementation_rank(implementation: &str) -> usize {
    match implementation {
        IMPL_PRIMLAB => 0,
        IMPL_CUB => 1,
        IMPL_TORCH => 2,
        _ => 3,
    }
}

/// Distinct (implementation, series label) of `records`, ranked.
fn series_keys(records: &[&BenchRecord]) -> Vec<(String, String)> {
    let mut keys: Vec<(String, String)> = records.iter().map(|r| (r.implementation.clone(), series_label(r))).collect();
    keys.sort_by(|a, b| (implementation_rank(&a.0), &a.1).cmp(&(implementation_rank(&b.0), &b.1)));
    keys.dedup();
    keys
}

/// The roofline of `op`: at each n where the op and a ceiling were both
/// measured, the op's logical bytes divided by the ceiling's GB/s.
fn roofline(records: &[BenchRecord], op_records: &[&BenchRecord], ceiling_op: &str, label: &str) -> Option<Series> {
    let mut points: Vec<Point> = Vec::new();
    for r in op_records {
        let Some(ceiling) = records
            .iter()
            .find(|c| c.implementation == IMPL_CEILING && c.op == ceiling_op && c.size() == BenchSize::Elements(r.n))
        else {
            continue;
        };
        let Some(ceiling_us) = ceiling.timed_median() else { continue };
        let gbps = ceiling.logical_bytes as f64 / (ceiling_us * 1e3);
        let x = log2_of(r.n);
        if gbps > 0.0 && r.logical_bytes > 0 && !points.iter().any(|p| p.x == x) {
            points.push(Point { x, y: r.logical_bytes as f64 / (gbps * 1e3), interval: None });
        }
    }
    points.sort_by(|a, b| a.x.total_cmp(&b.x));
    (!points.is_empty()).then(|| Series {
        label: label.to_string(),
        points,
        roofline: true,
        colour: if ceiling_op == COPY_OP { (70, 70, 70) } else { (150, 150, 150) },
    })
}

/// The panels of `primitive`: a log-log panel per 1-D op, a categorical
/// panel per row op and shape.
pub fn panels_for(records: &[BenchRecord], primitive: &str, colours: &ColourMap) -> Vec<Panel> {
    let mine: Vec<&BenchRecord> =
        records.iter().filter(|r| r.primitive == primitive && r.timed_median().is_some()).collect();
    let mut ops: Vec<&str> = mine.iter().map(|r| r.op.as_str()).collect();
    ops.sort_unstable();
    ops.dedup();
    let mut panels = Vec::new();
    for op in ops {
        let flat: Vec<&BenchRecord> = mine.iter().copied().filter(|r| r.op == op && r.shape.is_none()).collect();
        if !flat.is_empty() {
            let mut series: Vec<Series> = series_keys(&flat)
                .into_iter()
                .map(|(_, label)| {
                    let rs: Vec<&BenchRecord> = flat.iter().copied().filter(|r| series_label(r) == label).collect();
                    let mut points: Vec<Point> = rs.iter().filter_map(|r| point(r, log2_of(r.n))).collect();
                    points.sort_by(|a, b| a.x.total_cmp(&b.x));
                    Series { label, points, roofline: false, colour: colours.colour(rs[0]) }
                })
                .collect();
            if primitive != super::entries::CEILINGS {
                let ours: Vec<&BenchRecord> =
                    flat.iter().copied().filter(|r| r.implementation == IMPL_PRIMLAB).collect();
                series.extend(roofline(records, &ours, COPY_OP, "copy-bandwidth time of these bytes"));
                series.extend(roofline(records, &ours, READ_OP, "read-bandwidth time of these bytes"));
            }
            panels.push(Panel { title: op.to_string(), x_axis: XAxis::Log2Elements, series });
        }
        let mut shapes: Vec<[usize; 2]> = mine.iter().filter(|r| r.op == op).filter_map(|r| r.shape).collect();
        shapes.sort_unstable();
        shapes.dedup();
        for shape in shapes {
            let at: Vec<&BenchRecord> = mine.iter().copied().filter(|r| r.op == op && r.shape == Some(shape)).collect();
            let keys = series_keys(&at);
            let series: Vec<Series> = keys
                .iter()
                .enumerate()
                .filter_map(|(i, (_, label))| {
                    let r = at.iter().copied().find(|r| series_label(r) == *label)?;
                    Some(Series {
                        label: label.clone(),
                        points: point(r, i as f64).into_iter().collect(),
                        roofline: false,
                        colour: colours.colour(r),
                    })
                })
                .collect();
            let categories = keys.into_iter().map(|(_, label)| label).collect();
            panels.push(Panel {
                title: format!("{op} [{}, {}]", shape[0], shape[1]),
                x_axis: XAxis::Categories(categories),
                series,
            });
        }
    }
    panels.retain(|p| p.series.iter().any(|s| !s.roofline && !s.points.is_empty()));
    panels
}

/// Draws one PNG per primitive with records into `out_dir`, each figure
/// captioned with `metadata` (GPU, sources, coverage, iterations); returns
/// (primitive, path) of each file written.
pub fn draw_all(records: &[BenchRecord], out_dir: &Path, metadata: &str) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let colours = ColourMap::new(records);
    let mut primitives: Vec<&str> = records.iter().map(|r| r.primitive.as_str()).collect();
    primitives.sort_unstable();
    primitives.dedup();
    let mut written = Vec::new();
    for primitive in primitives {
        let panels = panels_for(records, primitive, &colours);
        if panels.is_empty() {
            continue;
        }
        let path = out_dir.join(format!("{primitive}.png"));
        let title = format!("{primitive}: median time per call (95 % interval bars)");
        // plotters writes to a path: render to a temporary one and rename it into place.
        crate::bench::output::render_atomic(&path, |temp| draw_png(temp, &title, metadata, &panels))?;
        written.push((primitive.to_string(), path));
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(implementation: &str, primitive: &str, op: &str, variant: &str, n: usize, us: f64) -> BenchRecord {
        BenchRecord::synthetic(implementation, primitive, op, variant, n, us, 4 * n as u64)
    }

    #[test]
    fn one_log_log_panel_per_op_with_error_bars_and_rooflines() {
        let records = vec![
            rec(IMPL_PRIMLAB, "scan", "exclusive_scan_i32_i64", "decoupled_lookback", 1 << 20, 10.0)
                .with_samples(vec![9.0, 10.0, 11.0, 10.0, 10.5]),
            rec(IMPL_PRIMLAB, "scan", "exclusive_scan_i32_i64", "decoupled_lookback", 1 << 10, 5.0),
            rec(IMPL_CUB, "scan", "exclusive_scan_i32_i64", "cub_exclusive_scan_i32_i64", 1 << 20, 12.0),
            rec(IMPL_TORCH, "scan", "inclusive_scan_i32_i64", "torch_cumsum_i32_i64", 1 << 20, 30.0),
            rec(IMPL_CEILING, "ceilings", COPY_OP, COPY_OP, 1 << 20, 5.0),
        ];
        let colours = ColourMap::new(&records);
        let panels = panels_for(&records, "scan", &colours);
        assert_eq!(panels.len(), 2);
        let exclusive = &panels[0];
        assert_eq!(exclusive.x_axis, XAxis::Log2Elements);
        let labels: Vec<&str> = exclusive.series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["primlab decoupled_lookback", "cub", "copy-bandwidth time of these bytes"]);
        let ours = &exclusive.series[0];
        assert_eq!(ours.points[0].x, 10.0);
        assert_eq!(ours.points[0].interval, None, "no samples: no error bar");
        let (low, high) = ours.points[1].interval.unwrap();
        assert!(low <= 10.0 && high >= 10.0);
        // Copy moves 4n bytes in 5 us; the op's 4n bytes take the same 5 us at that bandwidth.
        let roof = &exclusive.series[2];
        assert!(roof.roofline && (roof.points[0].y - 5.0).abs() < 1e-9);
        assert_eq!(exclusive.series[1].colour, (0, 0, 0));
        assert_eq!(panels[1].series[0].colour, (255, 127, 14));
    }

    #[test]
    fn row_ops_get_one_categorical_panel_per_shape_and_colours_hold_across_plots() {
        let shaped = |implementation: &str, variant: &str, rows: usize, us: f64| BenchRecord {
            shape: Some([rows, 1024]),
            ..rec(implementation, "softmax", "softmax_f32", variant, rows * 1024, us)
        };
        let records = vec![
            shaped(IMPL_PRIMLAB, "online_block", 4096, 20.0),
            shaped(IMPL_TORCH, "torch_softmax_f32", 4096, 25.0),
            shaped(IMPL_PRIMLAB, "online_block", 8192, 40.0),
            rec(IMPL_PRIMLAB, "reduce", "reduce_sum_i32_i64", "single_pass", 1 << 20, 3.0),
        ];
        let colours = ColourMap::new(&records);
        let panels = panels_for(&records, "softmax", &colours);
        let titles: Vec<&str> = panels.iter().map(|p| p.title.as_str()).collect();
        assert_eq!(titles, ["softmax_f32 [4096, 1024]", "softmax_f32 [8192, 1024]"]);
        assert_eq!(panels[0].x_axis, XAxis::Categories(vec!["primlab online_block".into(), "torch".into()]));
        assert_eq!(panels[0].series[1].points[0].x, 1.0);
        assert_eq!(panels[0].series[0].colour, panels[1].series[0].colour);
        assert_ne!(colours.colour(&records[0]), colours.colour(&records[3]));
    }
}
