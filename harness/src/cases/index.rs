//! `index.json` of an export: one entry per case with its files, and the
//! comparison rule. Programs in any language read it with a JSON parser.

use serde::{Deserialize, Serialize};

/// The format tag of `index.json` (a reader refuses other tags).
/// Version 2 lists every output (compaction writes two) and the scalar parameters.
pub const FORMAT: &str = "primlab-cases/2";

/// One `.npy` file of a case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileEntry {
    /// The contract's role of the buffer: `in`, `out`.
    pub role: String,
    /// The file name, relative to the folder of `index.json`.
    pub file: String,
    /// The element type (`int32`, `int64`, `float32`, `float64`, `bfloat16`,
    /// `uint8`; bfloat16 is stored as `<u2`, its raw bits).
    pub dtype: String,
    /// Elements.
    pub len: usize,
}

/// One scalar parameter of a case (histogram bins and range, softmax rows
/// and columns, the segment count).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParamEntry {
    /// The contract's name of the parameter.
    pub name: String,
    /// Its type: `int32`, `int64` or `float32`.
    pub dtype: String,
    /// Its value (a float32 as the double it widens to exactly).
    pub value: serde_json::Value,
}

/// One case of an export.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseEntry {
    /// Unique name within the export, the stem of its files: `c00012`.
    pub case: String,
    /// Primitive.
    pub primitive: String,
    /// Contract, e.g. `exclusive.i32`.
    pub contract: String,
    /// Variant as printed in failure lines (`user.<contract>`).
    pub variant: String,
    /// Input elements.
    pub n: usize,
    /// Size as printed.
    pub size: String,
    /// Input data family.
    pub family: String,
    /// Seed of this case's input (0x-hex, as in failure lines).
    pub seed: String,
    /// Input files, in the contract's order.
    pub inputs: Vec<FileEntry>,
    /// Scalar parameters, in the contract's order.
    pub params: Vec<ParamEntry>,
    /// The model's outputs, in the contract's order (exact; float64 exact
    /// values where the tolerance is not `exact`).
    pub expected: Vec<FileEntry>,
    /// Where the program must write its outputs (the contract's types, as
    /// many elements as the matching `expected`).
    pub outputs: Vec<FileEntry>,
    /// Allowed difference from `expected`: `exact`, `softmax_variant_bound`
    /// or `order_free_bound` (`rule` says it in words).
    pub tolerance: String,
    /// The comparison rule in words.
    pub rule: String,
}

/// The whole index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Index {
    /// [`FORMAT`].
    pub format: String,
    /// Primitive.
    pub primitive: String,
    /// The contracts exported, in case order (`cases verify` regenerates
    /// their catalogue from these, the seed and the sizes).
    #[serde(default)]
    pub contracts: Vec<String>,
    /// The seed the cases were generated from (0x-hex).
    pub seed: String,
    /// Sizes visited.
    pub sizes: Vec<usize>,
    /// Every case.
    pub cases: Vec<CaseEntry>,
}
