//! What a check reports of the timing `check --bench` made of the user's
//! kernel (the timing itself is the bench's, composed by the command).

/// One timed size.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    /// Elements.
    pub n: usize,
    /// The user's median microseconds.
    pub user_us: f64,
    /// Our fastest variant's median microseconds (None when it has no plan here).
    pub ours_us: Option<f64>,
    /// CUB's median microseconds (None when not timed).
    pub cub_us: Option<f64>,
}

/// The timings, or why they stopped.
#[derive(Debug, Clone)]
pub struct Timed {
    /// Timed sizes.
    pub rows: Vec<Row>,
    /// Our variant's name.
    pub ours: String,
    /// How the CUB baseline went, in one line.
    pub cub: String,
    /// Why timing failed (a failure of the check).
    pub error: Option<String>,
    /// For the receipt.
    pub json: serde_json::Value,
}
