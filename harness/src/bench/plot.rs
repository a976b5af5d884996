//! What the PNG plots of a bench receipt show (drawing is `plot_draw.rs`):
//! one PNG per primitive, one row of panels per op:
//!
//! 1. **time**: median time per call against n (log-log; for the row ops,
//!    against the shape) of primlab's default entry point, CUB, PyTorch, and
//!    the time the op's logical bytes take at the same run's copy and read
//!    bandwidth (dashed and dotted);
//! 2. **ratio**: the faster peer's median over the default entry's (above 1:
//!    primlab is faster) with its 95 % interval widened by the program
//!    margin, as the report's peer table judges it, and a line at 1.0;
//! 3. **variants**: primlab's other schedules, the default entry beside them;
//! 4. **slow**: the teaching baselines ([`SLOW_VARIANTS`]: one thread, an
//!    atomic per element), whose times span decades, in a panel of their own
//!    so that they do not flatten the others.
//!
//! Every series of a figure has its own colour and marker ([`StyleMap`]);
//! the legend draws each series' line and marker as the panel does.

use super::entries::ceilings::{COPY_OP, READ_OP};
use super::entries::DEFAULT_VARIANT;
use super::record::{BenchRecord, BenchSize, TimingMode, IMPL_CEILING, IMPL_CUB, IMPL_PRIMLAB, IMPL_TORCH};
use super::report_peers::PeerComparison;
use std::path::{Path, PathBuf};

use super::plot_draw::draw_png;
use super::plot_model::{Colour, Line, Marker, Panel, PanelKind, Point, Series, Style, XAxis, YAxis};

/// primlab variants that exist to teach, not to compete: a single thread
/// (`serial`) and one atomic per element (`atomic_per_element`,
/// `global_atomic`).
pub const SLOW_VARIANTS: [&str; 3] = ["serial", "atomic_per_element", "global_atomic"];

/// The role of a record's series in a figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Default,
    Peer,
    Ceiling,
    Variant,
    Slow,
}

fn role(r: &BenchRecord) -> Role {
    let cold = r.timing_mode == TimingMode::Cold;
    match r.implementation.as_str() {
        IMPL_PRIMLAB if r.variant == DEFAULT_VARIANT && cold => Role::Default,
        IMPL_PRIMLAB if SLOW_VARIANTS.contains(&r.variant.as_str()) => Role::Slow,
        IMPL_CUB | IMPL_TORCH if cold => Role::Peer,
        IMPL_CEILING => Role::Ceiling,
        _ => Role::Variant,
    }
}

/// Default entry blue circles, CUB black squares, PyTorch orange triangles.
const DEFAULT_STYLE: Style = Style { colour: (31, 119, 180), marker: Marker::Circle, line: Line::Solid };
const CUB_STYLE: Style = Style { colour: (0, 0, 0), marker: Marker::Square, line: Line::Solid };
const TORCH_STYLE: Style = Style { colour: (255, 127, 14), marker: Marker::TriangleUp, line: Line::Solid };
/// The rooflines: dark grey dashed (copy), mid grey dotted (read).
const COPY_STYLE: Style = Style { colour: (70, 70, 70), marker: Marker::None, line: Line::Dashed };
const READ_STYLE: Style = Style { colour: (150, 150, 150), marker: Marker::None, line: Line::Dotted };

/// Colours of every other series: none of them blue, black, orange or grey.
const PALETTE: [Colour; 9] = [
    (214, 39, 40),
    (44, 160, 44),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (23, 190, 207),
    (188, 189, 34),
    (0, 90, 50),
    (120, 0, 120),
];
/// Markers of every other series, cycled with a period prime to the palette's.
const MARKERS: [Marker; 5] = [Marker::Diamond, Marker::TriangleDown, Marker::Cross, Marker::Square, Marker::Circle];

/// One style per series label across a figure: fixed ones for the default
/// entry, CUB, PyTorch and the rooflines; every other label a palette colour
/// and a marker by its rank among the figure's other labels in sorted order.
#[derive(Debug, Clone, PartialEq)]
pub struct StyleMap {
    others: Vec<String>,
}

impl StyleMap {
    /// The map of one figure's records.
    pub fn new(records: &[&BenchRecord]) -> StyleMap {
        let mut others: Vec<String> = records
            .iter()
            .filter(|r| !matches!(role(r), Role::Default | Role::Peer))
            .map(|r| series_label(r))
            .collect();
        others.sort_unstable();
        others.dedup();
        StyleMap { others }
    }

    /// The style of `record`'s series.
    pub fn style(&self, record: &BenchRecord) -> Style {
        match (role(record), record.implementation.as_str()) {
            (Role::Default, _) => DEFAULT_STYLE,
            (Role::Peer, IMPL_CUB) => CUB_STYLE,
            (Role::Peer, _) => TORCH_STYLE,
            _ => {
                let label = series_label(record);
                let rank = self.others.iter().position(|l| *l == label).unwrap_or(0);
                Style {
                    colour: PALETTE[rank % PALETTE.len()],
                    marker: MARKERS[rank % MARKERS.len()],
                    line: Line::Solid,
                }
            }
        }
    }
}

/// The legend label of a record's series: primlab and ceilings by variant,
/// the baselines by implementation (their variant is their own op name).
pub fn series_label(record: &BenchRecord) -> String {
    match record.implementation.as_str() {
        IMPL_PRIMLAB | IMPL_CEILING => record.label(),
        other if record.timing_mode == TimingMode::Hot => format!("{other} (hot)"),
        other => other.to_string(),
    }
}

fn log2_of(n: usize) -> f64 {
    (n.max(1) as f64).log2()
}

/// The x of a size on an op's axis: log2 n, or the shape's category index.
fn x_of(size: BenchSize, shapes: &[[usize; 2]]) -> Option<f64> {
    match size {
        BenchSize::Elements(n) => Some(log2_of(n)),
        BenchSize::Rows { rows, cols } => shapes.iter().position(|s| *s == [rows, cols]).map(|i| i as f64),
    }
}

fn point(record: &BenchRecord, shapes: &[[usize; 2]]) -> Option<Point> {
    let y = record.timed_median()?;
    let interval = record.noise().map(|n| (n.median_interval.low, n.median_interval.high));
    Some(Point { x: x_of(record.size(), shapes)?, y, interval })
}

/// Ranks the series: the default entry, the peers, then the rest by label.
fn rank(r: &BenchRecord) -> usize {
    match (role(r), r.implementation.as_str()) {
        (Role::Default, _) => 0,
        (Role::Peer, IMPL_CUB) => 1,
        (Role::Peer, _) => 2,
        _ => 3,
    }
}

/// One series per label of `records`, ranked, each point at its x.
fn series_of(records: &[&BenchRecord], shapes: &[[usize; 2]], styles: &StyleMap) -> Vec<Series> {
    let mut keys: Vec<(usize, String)> = records.iter().map(|r| (rank(r), series_label(r))).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|(_, label)| {
            let rs: Vec<&BenchRecord> = records.iter().copied().filter(|r| series_label(r) == label).collect();
            let mut points: Vec<Point> = rs.iter().filter_map(|r| point(r, shapes)).collect();
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            let mut style = styles.style(rs.first()?);
            if !shapes.is_empty() {
                style.line = Line::None;
            }
            (!points.is_empty()).then_some(Series { label, points, style })
        })
        .collect()
}

/// The roofline of `op`: at each n where the op and a ceiling were both
/// measured, the op's logical bytes divided by the ceiling's GB/s.
fn roofline(records: &[BenchRecord], op_records: &[&BenchRecord], ceiling_op: &str) -> Option<Series> {
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
    let (label, style) = if ceiling_op == COPY_OP {
        ("these bytes at copy bandwidth", COPY_STYLE)
    } else {
        ("these bytes at read bandwidth", READ_STYLE)
    };
    (!points.is_empty()).then(|| Series { label: label.to_string(), points, style })
}

/// The ratio panel's series: one per peer that was the faster one somewhere.
fn ratio_series(comparisons: &[&PeerComparison], shapes: &[[usize; 2]]) -> Vec<Series> {
    [(IMPL_CUB, CUB_STYLE), (IMPL_TORCH, TORCH_STYLE)]
        .into_iter()
        .filter_map(|(peer, mut style)| {
            let mut points: Vec<Point> = comparisons
                .iter()
                .filter(|c| c.peer == peer)
                .filter_map(|c| {
                    Some(Point { x: x_of(c.size, shapes)?, y: c.ratio, interval: c.interval.map(|i| (i.low, i.high)) })
                })
                .collect();
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            if !shapes.is_empty() {
                style.line = Line::None;
            }
            let label = format!("{peer} time / primlab default time");
            (!points.is_empty()).then_some(Series { label, points, style })
        })
        .collect()
}

/// `ROWSxCOLS`.
fn shape_label([rows, cols]: [usize; 2]) -> String {
    format!("{rows}x{cols}")
}

/// The panels of one op (with `records` its timed records), in row order.
fn op_panels(all: &[BenchRecord], op: &str, records: &[&BenchRecord], styles: &StyleMap) -> Vec<Panel> {
    let mut shapes: Vec<[usize; 2]> = records.iter().filter_map(|r| r.shape).collect();
    shapes.sort_by_key(|[r, c]| (r * c, *r));
    shapes.dedup();
    let x_axis = if shapes.is_empty() {
        XAxis::Log2Elements
    } else {
        XAxis::Categories(shapes.iter().map(|s| shape_label(*s)).collect())
    };
    let with = |roles: &[Role]| -> Vec<&BenchRecord> {
        records.iter().copied().filter(|r| roles.contains(&role(r))).collect()
    };
    let panel = |kind, title: String, y_axis, series: Vec<Series>| Panel {
        kind,
        title: format!("{op}: {title}"),
        x_axis: x_axis.clone(),
        y_axis,
        series,
    };
    let mut time = series_of(&with(&[Role::Default, Role::Peer, Role::Ceiling]), &shapes, styles);
    if shapes.is_empty() && records.iter().all(|r| r.implementation != IMPL_CEILING) {
        let ours: Vec<&BenchRecord> = records.iter().copied().filter(|r| r.implementation == IMPL_PRIMLAB).collect();
        time.extend(roofline(all, &ours, COPY_OP));
        time.extend(roofline(all, &ours, READ_OP));
    }
    let mut panels = vec![panel(PanelKind::Time, "time per call".into(), YAxis::Microseconds, time)];
    let comparisons = super::report_peers::comparisons(all);
    let mine: Vec<&PeerComparison> = comparisons.iter().filter(|c| c.op == op).collect();
    let title = "faster peer / primlab (above 1: primlab faster)".to_string();
    panels.push(panel(PanelKind::Ratio, title, YAxis::Ratio, ratio_series(&mine, &shapes)));
    let variants = series_of(&with(&[Role::Default, Role::Variant]), &shapes, styles);
    if variants.len() > 1 {
        panels.push(panel(PanelKind::Variants, "primlab's schedules".into(), YAxis::Microseconds, variants));
    }
    let slow = series_of(&with(&[Role::Default, Role::Slow]), &shapes, styles);
    if !with(&[Role::Slow]).is_empty() {
        panels.push(panel(PanelKind::Slow, "slow teaching baselines".into(), YAxis::Microseconds, slow));
    }
    panels.retain(|p| !p.series.is_empty());
    panels
}

/// The panels of `primitive`, one row per op (ops in name order).
pub fn panels_for(records: &[BenchRecord], primitive: &str) -> Vec<Vec<Panel>> {
    let mine: Vec<&BenchRecord> =
        records.iter().filter(|r| r.primitive == primitive && r.timed_median().is_some()).collect();
    let styles = StyleMap::new(&mine);
    let mut ops: Vec<&str> = mine.iter().map(|r| r.op.as_str()).collect();
    ops.sort_unstable();
    ops.dedup();
    ops.into_iter()
        .map(|op| {
            let of_op: Vec<&BenchRecord> = mine.iter().copied().filter(|r| r.op == op).collect();
            op_panels(records, op, &of_op, &styles)
        })
        .filter(|row| !row.is_empty())
        .collect()
}

/// Draws one PNG per primitive with records into `out_dir`, each figure
/// captioned with `metadata` (GPU, sources, coverage, iterations); returns
/// (primitive, path) of each file written.
pub fn draw_all(records: &[BenchRecord], out_dir: &Path, metadata: &str) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let mut primitives: Vec<&str> = records.iter().map(|r| r.primitive.as_str()).collect();
    primitives.sort_unstable();
    primitives.dedup();
    let mut written = Vec::new();
    for primitive in primitives {
        let rows = panels_for(records, primitive);
        if rows.is_empty() {
            continue;
        }
        let path = out_dir.join(format!("{primitive}.png"));
        let title = format!("{primitive}: median time per call (bars: 95 % interval), one row per op");
        // plotters writes to a path: render to a temporary one and rename it into place.
        crate::bench::output::render_atomic(&path, |temp| draw_png(temp, &title, metadata, &rows))?;
        written.push((primitive.to_string(), path));
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::entries::ceilings::COPY_OP;

    fn rec(implementation: &str, op: &str, variant: &str, n: usize, us: f64) -> BenchRecord {
        BenchRecord::synthetic(implementation, "scan", op, variant, n, us, 4 * n as u64)
    }

    const OP: &str = "exclusive_scan_i32_i64";

    fn spread(centre: f64) -> Vec<f64> {
        (0..21).map(|i| centre * (1.0 + 0.01 * (i as f64 - 10.0) / 10.0)).collect()
    }

    fn scan_records() -> Vec<BenchRecord> {
        let mut records = Vec::new();
        for (k, base) in [(10usize, 10.0), (20, 14.0)] {
            let n = 1 << k;
            records.push(rec(IMPL_PRIMLAB, OP, DEFAULT_VARIANT, n, base).with_samples(spread(base)));
            records.push(rec(IMPL_PRIMLAB, OP, "decoupled_lookback", n, base * 1.01));
            records.push(rec(IMPL_PRIMLAB, OP, "blelloch", n, base * 2.0));
            records.push(rec(IMPL_PRIMLAB, OP, "serial", n, base * 1000.0));
            records
                .push(rec(IMPL_CUB, OP, "cub_exclusive_scan_i32_i64", n, base * 1.2).with_samples(spread(base * 1.2)));
            records.push(BenchRecord {
                primitive: "ceilings".into(),
                ..rec(IMPL_CEILING, COPY_OP, COPY_OP, n, base / 2.0)
            });
        }
        records
    }

    #[test]
    fn each_op_has_a_time_a_ratio_a_variants_and_a_slow_panel() {
        let rows = panels_for(&scan_records(), "scan");
        assert_eq!(rows.len(), 1);
        let kinds: Vec<PanelKind> = rows[0].iter().map(|p| p.kind).collect();
        assert_eq!(kinds, [PanelKind::Time, PanelKind::Ratio, PanelKind::Variants, PanelKind::Slow]);
        let labels = |p: &Panel| p.series.iter().map(|s| s.label.clone()).collect::<Vec<_>>();
        assert_eq!(labels(&rows[0][0]), ["primlab default", "cub", "these bytes at copy bandwidth"]);
        assert_eq!(labels(&rows[0][2]), ["primlab default", "primlab blelloch", "primlab decoupled_lookback"]);
        assert_eq!(labels(&rows[0][3]), ["primlab default", "primlab serial"]);
        // The serial baseline is in no other panel, so the time panel spans about one decade.
        assert!(rows[0][..3].iter().all(|p| !labels(p).contains(&"primlab serial".to_string())));
        // The copy record moves its 4n bytes in base / 2 = 5 us at 2^10: so do the scan's 4n bytes.
        let roof = &rows[0][0].series[2];
        assert_eq!(roof.style.line, Line::Dashed);
        assert!((roof.points[0].y - 5.0).abs() < 1e-9, "{roof:?}");
        // The ratio: cub / default = 1.2 at both sizes, with an interval.
        let ratio = &rows[0][1];
        assert_eq!(ratio.y_axis, YAxis::Ratio);
        let points = &ratio.series[0].points;
        assert_eq!(points.iter().map(|p| p.x).collect::<Vec<_>>(), [10.0, 20.0]);
        assert!(points.iter().all(|p| (p.y - 1.2).abs() < 1e-9 && p.interval.is_some()));
    }

    #[test]
    fn every_series_of_a_figure_has_its_own_colour_and_marker() {
        let rows = panels_for(&scan_records(), "scan");
        let mut seen: Vec<(String, Style)> = Vec::new();
        for s in rows.iter().flatten().flat_map(|p| &p.series) {
            match seen.iter().find(|(l, _)| *l == s.label) {
                // The same series looks the same in every panel...
                Some((_, style)) => assert_eq!(*style, s.style, "{}", s.label),
                None => seen.push((s.label.clone(), s.style)),
            }
        }
        // ...and no two series share a colour or a marker-and-line.
        for (i, (a, sa)) in seen.iter().enumerate() {
            for (b, sb) in &seen[i + 1..] {
                if a.contains("time / primlab") || b.contains("time / primlab") {
                    continue; // a ratio series is drawn like its peer
                }
                assert_ne!(sa.colour, sb.colour, "{a} and {b}");
            }
        }
        assert!(seen.len() >= 6);
    }

    #[test]
    fn row_ops_are_placed_by_shape_in_element_order() {
        let shaped = |implementation: &str, variant: &str, rows: usize, cols: usize, us: f64| BenchRecord {
            shape: Some([rows, cols]),
            ..rec(implementation, "softmax_f32", variant, rows * cols, us)
        };
        let records = vec![
            shaped(IMPL_PRIMLAB, DEFAULT_VARIANT, 8192, 32000, 40.0),
            shaped(IMPL_PRIMLAB, DEFAULT_VARIANT, 4096, 1024, 20.0),
            shaped(IMPL_TORCH, "torch_softmax_f32", 4096, 1024, 25.0),
            shaped(IMPL_PRIMLAB, "online_block", 4096, 1024, 22.0),
        ];
        let rows = panels_for(&records, "scan");
        let time = &rows[0][0];
        assert_eq!(time.x_axis, XAxis::Categories(vec!["4096x1024".into(), "8192x32000".into()]));
        assert_eq!(time.series[0].points.iter().map(|p| p.x).collect::<Vec<_>>(), [0.0, 1.0]);
        assert_eq!(time.series[0].style.line, Line::None, "categories are not joined");
        assert_eq!(time.series[1].style, Style { line: Line::None, ..TORCH_STYLE });
        assert!((rows[0][1].series[0].points[0].y - 1.25).abs() < 1e-9);
        let kinds: Vec<PanelKind> = rows[0].iter().map(|p| p.kind).collect();
        assert_eq!(kinds, [PanelKind::Time, PanelKind::Ratio, PanelKind::Variants], "no slow variant: no slow panel");
    }
}
