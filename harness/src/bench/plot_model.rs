//! The plots' model: panels of series of points, each with a style, as
//! `plot.rs` builds them from records and `plot_draw.rs` draws them. Plain
//! data; it knows neither records nor the drawing library.

/// RGB.
pub type Colour = (u8, u8, u8);

/// The mark at each point of a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// A filled circle.
    Circle,
    /// A filled square.
    Square,
    /// A filled triangle, point up.
    TriangleUp,
    /// A filled triangle, point down.
    TriangleDown,
    /// A filled diamond.
    Diamond,
    /// An x.
    Cross,
    /// No mark (the rooflines).
    None,
}

/// How the points of a series are joined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// A solid line.
    Solid,
    /// Long dashes (the copy roofline).
    Dashed,
    /// Short dashes (the read roofline, the 1.0 line of a ratio).
    Dotted,
    /// Not joined (points on a categorical axis).
    None,
}

/// The look of one series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// Its colour.
    pub colour: Colour,
    /// Its mark.
    pub marker: Marker,
    /// Its line.
    pub line: Line,
}

/// One plotted value: the median at `x`, with its interval when known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// log2 of n (1-D panels) or the category's index (row panels).
    pub x: f64,
    /// Median microseconds, or a ratio.
    pub y: f64,
    /// The value's 95 % interval.
    pub interval: Option<(f64, f64)>,
}

/// One series of a panel.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// Points, ascending in x.
    pub points: Vec<Point>,
    /// Its look.
    pub style: Style,
}

/// The x axis of a panel.
#[derive(Debug, Clone, PartialEq)]
pub enum XAxis {
    /// log2 of the elements.
    Log2Elements,
    /// One category per shape (the row ops), `ROWSxCOLS`, by element count.
    Categories(Vec<String>),
}

/// The y axis of a panel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YAxis {
    /// Median microseconds per call, log scale.
    Microseconds,
    /// A ratio, linear, with a line at 1.0.
    Ratio,
}

/// Which panel of an op's row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PanelKind {
    /// Default entry, peers, ceilings.
    Time,
    /// Faster peer / default entry.
    Ratio,
    /// primlab's other schedules.
    Variants,
    /// The teaching baselines.
    Slow,
}

/// One chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// Which one.
    pub kind: PanelKind,
    /// Title: the op and what the panel shows.
    pub title: String,
    /// The x axis.
    pub x_axis: XAxis,
    /// The y axis.
    pub y_axis: YAxis,
    /// The series.
    pub series: Vec<Series>,
}
