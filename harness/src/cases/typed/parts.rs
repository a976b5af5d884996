//! The parts of a typed contract (shape, operator, types, accumulator,
//! tolerance, NaN rule), their validation, and the name that states them.

use crate::registry::Primitive;
use crate::sweep::raw::Dtype;
use kernels::ScanKind;

/// The operator of a reduce or scan.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// Addition (integers wrap in the output type).
    Sum,
    /// The smaller value.
    Min,
    /// The larger value.
    Max,
}

impl Op {
    /// Every operator.
    pub const ALL: [Op; 3] = [Op::Sum, Op::Min, Op::Max];

    /// Its name: `sum`, `min`, `max`.
    pub fn name(self) -> &'static str {
        match self {
            Op::Sum => "sum",
            Op::Min => "min",
            Op::Max => "max",
        }
    }

    fn from_name(name: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|o| o.name() == name)
    }
}

/// What a typed contract computes.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shape {
    /// One value from the whole input.
    Reduce,
    /// Every prefix.
    Scan(ScanKind),
    /// The index of the extremum (argmax when `max`).
    Arg {
        /// argmax (else argmin).
        max: bool,
    },
    /// One value per segment of `offsets`.
    Segmented,
    /// The kept items in order and their count: by flags (`flagged`) or by `x > 0`.
    Compact {
        /// Kept where `flags[i] != 0` (else where `in[i] > 0`).
        flagged: bool,
    },
    /// Counts per even bin of `[lower, upper)` (`[lower, upper]` when `closed`).
    Histogram {
        /// A sample equal to `upper` counts in the last bin (`torch.histc`, `numpy.histogram`).
        closed: bool,
    },
    /// The softmax of each row of a `rows x cols` row-major input.
    Softmax {
        /// An all-masked row (every logit -inf) is all NaN (`torch.softmax`), else all 0.
        masked_nan: bool,
        /// The input's rows are `stride` elements apart (`stride > cols`; the
        /// elements between are not logits); the output is contiguous.
        strided: bool,
    },
}

impl Shape {
    /// Whether the shape folds values by an operator (reduce, scan, segmented).
    pub fn folds(self) -> bool {
        matches!(self, Shape::Reduce | Shape::Scan(_) | Shape::Segmented)
    }
}

/// What a float arg reduction, min or max does with NaN.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum NanRule {
    /// No input holds NaN (arg reductions: nor ±inf); the default.
    #[default]
    Finite,
    /// Arg reductions: NaN wins (the first NaN's index); ±inf ordinary values (`torch.argmax`).
    NanFirst,
    /// Arg reductions: NaN ignored (`numpy.nanargmax`); min and max: NaN
    /// ignored, a fold of NaN only NaN or the identity (`fmaxf`, `numpy.nanmax`).
    NanIgnored,
    /// Min and max: a NaN in the fold gives NaN (`torch.amax`, `numpy.max`).
    NanPropagate,
}

impl NanRule {
    /// Every rule.
    pub const ALL: [NanRule; 4] = [NanRule::Finite, NanRule::NanFirst, NanRule::NanIgnored, NanRule::NanPropagate];

    /// Its token in contract names (None: the default).
    pub fn token(self) -> Option<&'static str> {
        match self {
            NanRule::Finite => None,
            NanRule::NanFirst => Some("nan_first"),
            NanRule::NanIgnored => Some("nan_ignored"),
            NanRule::NanPropagate => Some("nan_propagate"),
        }
    }

    fn named(token: &str) -> Option<NanRule> {
        NanRule::ALL.into_iter().find(|r| r.token() == Some(token))
    }

    /// The rules besides the default that `shape` over `dtype_in` with `op` takes.
    fn allowed(shape: Shape, op: Op, dtype_in: Dtype) -> &'static [NanRule] {
        match shape {
            Shape::Arg { .. } if is_float(dtype_in) => &[NanRule::NanFirst, NanRule::NanIgnored],
            _ if shape.folds() && op != Op::Sum && is_float(dtype_in) => &[NanRule::NanPropagate, NanRule::NanIgnored],
            _ => &[],
        }
    }
}

/// How a float sum is judged.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tolerance {
    /// The order-free bound of the accumulator type, plus the output's rounding.
    OrderFree,
    /// The user's: `|got - exact| <= atol + rtol |exact|`, or within `ulp`
    /// units in the last place of the exact value rounded to the output type.
    User {
        /// Relative tolerance.
        rtol: f64,
        /// Absolute tolerance.
        atol: f64,
        /// Units in the last place (None: not given).
        ulp: Option<u32>,
    },
}

/// A request for a typed contract, as a manifest or `primlab.check` states it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Request {
    /// The shape: `inclusive`/`exclusive` (scan), `argmax`/`argmin` (arg_reduce); none for reduce.
    pub kind: Option<String>,
    /// The operator (`sum`, `min`, `max`).
    pub op: Option<String>,
    /// Input element type (`float32` or `f32`, ...).
    pub dtype_in: Option<String>,
    /// Output element type (default: the input's; int64 for an arg reduction).
    pub dtype_out: Option<String>,
    /// Accumulator of a float sum (default: the widest of input, output and float32).
    pub accumulator: Option<String>,
    /// Relative tolerance of a float sum.
    pub rtol: Option<f64>,
    /// Absolute tolerance of a float sum.
    pub atol: Option<f64>,
    /// Ulp tolerance of a float sum.
    pub ulp: Option<u32>,
    /// The NaN rule of a float arg reduction (`nan_first`, `nan_ignored`) or
    /// min or max (`nan_propagate`, `nan_ignored`), or a histogram's or
    /// softmax's named rule (`last_bin_closed`, `all_masked_nan`).
    pub nan: Option<String>,
}

impl Request {
    /// The request, when it gives any part of a typed contract (a kind alone does not).
    pub fn given(self) -> Option<Request> {
        let parts = Request { kind: None, ..self.clone() };
        (parts != Request::default()).then_some(self)
    }
}

/// A valid typed contract's parts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Parts {
    /// What it computes.
    pub shape: Shape,
    /// The operator (arg reductions: max or min, as the shape).
    pub op: Op,
    /// Input element type.
    pub dtype_in: Dtype,
    /// Output element type (int64 for an arg reduction).
    pub dtype_out: Dtype,
    /// The accumulator of a float sum (else the output type).
    pub accumulator: Dtype,
    /// How a float sum is judged.
    pub tolerance: Tolerance,
    /// The NaN rule of a float arg reduction, min or max.
    pub nan: NanRule,
}

/// The element types of typed contracts, with their short names.
const TYPES: [(Dtype, &str); 7] = [
    (Dtype::Int32, "i32"),
    (Dtype::Int64, "i64"),
    (Dtype::Uint32, "u32"),
    (Dtype::Bfloat16, "bf16"),
    (Dtype::Float16, "f16"),
    (Dtype::Float32, "f32"),
    (Dtype::Float64, "f64"),
];

/// The short name of `dtype` (`f32`).
pub fn short(dtype: Dtype) -> &'static str {
    TYPES.iter().find(|(d, _)| *d == dtype).map(|(_, s)| *s).unwrap_or_else(|| dtype.name())
}

/// The type named `name`, short (`bf16`) or long (`bfloat16`).
pub fn dtype_named(name: &str) -> Result<Dtype, String> {
    TYPES.iter().find(|(d, s)| *s == name || d.name() == name).map(|(d, _)| *d).ok_or_else(|| {
        let names: Vec<String> = TYPES.iter().map(|(d, s)| format!("{} ({s})", d.name())).collect();
        format!("unknown element type '{name}': choose from {}", names.join(", "))
    })
}

/// Whether `dtype` is a float type.
pub fn is_float(dtype: Dtype) -> bool {
    matches!(dtype, Dtype::Bfloat16 | Dtype::Float16 | Dtype::Float32 | Dtype::Float64)
}

/// Significand bits (floats) or width (integers): the order of "wider".
fn precision(dtype: Dtype) -> u32 {
    match dtype {
        Dtype::Bfloat16 => 8,
        Dtype::Float16 => 11,
        Dtype::Float32 => 24,
        Dtype::Float64 => 53,
        Dtype::Int32 | Dtype::Uint32 => 32,
        Dtype::Int64 => 64,
        Dtype::Uint8 => 8,
    }
}

/// The unit roundoff of a float type (2^-8, 2^-24, 2^-53).
pub fn unit_roundoff(dtype: Dtype) -> f64 {
    2f64.powi(-(precision(dtype) as i32))
}

/// What one flush of a subnormal to zero may lose in an accumulator of
/// `dtype`: its smallest normal, 2^-126, for float32 and bfloat16 (float32
/// arithmetic: CUDA's float `atomicAdd` and `-ftz=true` code flush subnormal
/// inputs and results to zero); 0 for float16 and float64, whose GPU
/// arithmetic keeps subnormals.
pub fn flush_loss(dtype: Dtype) -> f64 {
    match dtype {
        Dtype::Float32 | Dtype::Bfloat16 => 2f64.powi(-126),
        _ => 0.0,
    }
}

/// Whether every value of `narrow` is a value of `wide` (int64 holds int32
/// and uint32; float32 holds bfloat16 and float16; neither of those two
/// holds the other: bfloat16 has the range, float16 the precision).
fn holds(wide: Dtype, narrow: Dtype) -> bool {
    wide == narrow
        || matches!(
            (wide, narrow),
            (Dtype::Int64, Dtype::Int32 | Dtype::Uint32)
                | (Dtype::Float32, Dtype::Bfloat16 | Dtype::Float16)
                | (Dtype::Float64, Dtype::Bfloat16 | Dtype::Float16 | Dtype::Float32)
        )
}

fn wider(a: Dtype, b: Dtype) -> Dtype {
    if precision(b) > precision(a) {
        b
    } else {
        a
    }
}

/// A tolerance value as a name token: digits and an exponent, no dot (`1.5e-5` is `15e-6`).
pub fn number_token(v: f64) -> String {
    let text = format!("{v:e}");
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    match mantissa.split_once('.') {
        Some((whole, fraction)) => format!("{whole}{fraction}e{}", exponent - fraction.len() as i32),
        None => format!("{mantissa}e{exponent}"),
    }
}

fn tolerance_value(what: &str, v: f64) -> Result<f64, String> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(format!("{what} must be a finite number >= 0, got {v}"))
    }
}

impl Parts {
    /// The primitive a contract of this shape belongs to.
    pub fn primitive(&self) -> Primitive {
        match self.shape {
            Shape::Reduce => Primitive::Reduce,
            Shape::Scan(_) => Primitive::Scan,
            Shape::Arg { .. } => Primitive::ArgReduce,
            Shape::Segmented => Primitive::SegmentedReduce,
            Shape::Compact { .. } => Primitive::Compact,
            Shape::Softmax { .. } => Primitive::Softmax,
            Shape::Histogram { .. } => Primitive::Histogram,
        }
    }

    /// Whether the outputs are float sums, judged by a bound.
    pub fn float_sum(&self) -> bool {
        self.op == Op::Sum && is_float(self.dtype_in) && self.shape.folds()
    }

    /// The parts of `request` for `primitive`, validated.
    pub fn compose(primitive: Primitive, request: &Request) -> Result<Parts, String> {
        let kind = request.kind.as_deref();
        let dtype_in = dtype_named(request.dtype_in.as_deref().ok_or("name the input type (dtype_in)")?)?;
        let shape = match (primitive, kind) {
            (Primitive::Reduce, None | Some("reduce")) => Shape::Reduce,
            (Primitive::Scan, Some("inclusive")) => Shape::Scan(ScanKind::Inclusive),
            (Primitive::Scan, Some("exclusive")) => Shape::Scan(ScanKind::Exclusive),
            (Primitive::ArgReduce, Some("argmax")) => Shape::Arg { max: true },
            (Primitive::ArgReduce, Some("argmin")) => Shape::Arg { max: false },
            (Primitive::SegmentedReduce, None) => Shape::Segmented,
            (Primitive::Compact, Some("flagged")) => Shape::Compact { flagged: true },
            (Primitive::Compact, Some("positive")) => Shape::Compact { flagged: false },
            (Primitive::Compact, _) => return Err("a typed compaction's contract is flagged or positive".into()),
            (Primitive::Softmax, Some(kind @ ("rows" | "strided_rows"))) => Shape::Softmax {
                masked_nan: request.nan.as_deref() == Some("all_masked_nan"),
                strided: kind == "strided_rows",
            },
            (Primitive::Softmax, _) => return Err("a typed softmax's contract is rows or strided_rows".into()),
            (Primitive::Histogram, Some("even")) => {
                Shape::Histogram { closed: request.nan.as_deref() == Some("last_bin_closed") }
            }
            (Primitive::Histogram, _) => return Err("a typed histogram's contract is even".into()),
            (Primitive::SegmentedReduce, Some(other)) => {
                return Err(format!(
                    "a typed segmented reduction takes no contract kind ('{other}'): its operator is op"
                ))
            }
            (Primitive::Scan, _) => return Err("a typed scan's contract is inclusive or exclusive".into()),
            (Primitive::ArgReduce, _) => return Err("a typed arg reduction's contract is argmax or argmin".into()),
            (Primitive::Reduce, Some(other)) => {
                return Err(format!("a typed reduce takes no contract kind ('{other}'): its operator is op"))
            }
            (other, _) => {
                return Err(format!(
                    "primitive {other} has no typed contracts (dtype_in, op, ...): its sum is float32 by definition; \
                     reduce (float sums of any type), scan, arg_reduce, segmented_reduce, compact, softmax and \
                     histogram have them"
                ))
            }
        };
        let op = match (shape, request.op.as_deref()) {
            (Shape::Arg { max }, None) => {
                if max {
                    Op::Max
                } else {
                    Op::Min
                }
            }
            (Shape::Arg { .. }, Some(_)) => return Err("an arg reduction takes no op: argmax or argmin says it".into()),
            (Shape::Compact { .. } | Shape::Softmax { .. } | Shape::Histogram { .. }, None) => Op::Sum,
            (Shape::Histogram { .. }, Some(_)) => return Err("a histogram takes no op: it counts".into()),
            (Shape::Softmax { .. }, Some(_)) => return Err("a softmax takes no op".into()),
            (Shape::Compact { .. }, Some(_)) => {
                return Err("a compaction takes no op: flagged or positive says what it keeps".into())
            }
            (_, None) => return Err("name the operator (op = sum, min or max)".into()),
            (_, Some(name)) => {
                Op::from_name(name).ok_or_else(|| format!("unknown operator '{name}': choose from sum, min, max"))?
            }
        };
        let dtype_out = match (shape, request.dtype_out.as_deref()) {
            (Shape::Arg { .. }, Some(out)) if dtype_named(out)? != Dtype::Int64 => {
                return Err(format!("an arg reduction writes an int64 index, not {out}"))
            }
            (Shape::Arg { .. }, _) => Dtype::Int64,
            (Shape::Histogram { .. }, Some(out)) if dtype_named(out)? != Dtype::Int32 => {
                return Err(format!("a histogram writes int32 counts, not {out}"))
            }
            (Shape::Histogram { .. }, _) => Dtype::Int32,
            (_, Some(out)) => dtype_named(out)?,
            (_, None) => dtype_in,
        };
        let accumulator = request.accumulator.as_deref().map(dtype_named).transpose()?;
        let tolerance = match (request.rtol, request.atol, request.ulp) {
            (None, None, None) => Tolerance::OrderFree,
            (rtol, atol, ulp) => Tolerance::User {
                rtol: tolerance_value("rtol", rtol.unwrap_or(0.0))?,
                atol: tolerance_value("atol", atol.unwrap_or(0.0))?,
                ulp,
            },
        };
        let nan = match request.nan.as_deref() {
            None | Some("all_masked_nan") if matches!(shape, Shape::Softmax { .. }) => NanRule::Finite,
            None | Some("last_bin_closed") if matches!(shape, Shape::Histogram { .. }) => NanRule::Finite,
            Some(other) if matches!(shape, Shape::Histogram { .. }) => {
                return Err(format!("unknown histogram rule '{other}': last_bin_closed (torch.histc) or none"))
            }
            Some(other) if matches!(shape, Shape::Softmax { .. }) => {
                return Err(format!("unknown softmax rule '{other}': all_masked_nan (torch.softmax) or none"))
            }
            None => NanRule::Finite,
            Some(token) => NanRule::named(token).ok_or_else(|| {
                format!("unknown NaN rule '{token}': choose from nan_first, nan_ignored (arg reductions), nan_propagate, nan_ignored (min, max)")
            })?,
        };
        Parts::new(shape, op, (dtype_in, dtype_out, accumulator), tolerance, nan)
    }

    /// Validated parts; `accumulator` None takes the default.
    fn new(
        shape: Shape,
        op: Op,
        (dtype_in, dtype_out, accumulator): (Dtype, Dtype, Option<Dtype>),
        tolerance: Tolerance,
        nan: NanRule,
    ) -> Result<Parts, String> {
        if dtype_in == Dtype::Uint8 || dtype_out == Dtype::Uint8 {
            return Err("uint8 is a flag type, not an element type of a typed contract".into());
        }
        let sum = op == Op::Sum && shape.folds();
        let float_sum = sum && is_float(dtype_in);
        if !float_sum && tolerance != Tolerance::OrderFree {
            return Err("a tolerance (rtol, atol, ulp) applies to float sums only: every other result is exact".into());
        }
        check_nan_rule(shape, op, dtype_in, nan)?;
        let accumulator = match (accumulator, float_sum) {
            (None, true) => wider(wider(dtype_in, dtype_out), Dtype::Float32),
            (Some(acc), true) if is_float(acc) && holds(acc, dtype_in) => acc,
            (Some(acc), true) => {
                return Err(format!(
                    "the accumulator of a {} sum must be a float type holding every input exactly, not {}",
                    dtype_in.name(),
                    acc.name()
                ))
            }
            (Some(acc), false) if acc != dtype_out => {
                return Err(format!(
                    "an accumulator applies to float sums only ({} in, op {}): the result is exact in {}",
                    dtype_in.name(),
                    op.name(),
                    dtype_out.name()
                ))
            }
            _ => dtype_out,
        };
        if let Shape::Softmax { .. } = shape {
            let supported = |d: Dtype| matches!(d, Dtype::Bfloat16 | Dtype::Float16 | Dtype::Float32);
            if !supported(dtype_in) || !supported(dtype_out) {
                return Err(format!(
                    "a typed softmax reads and writes bfloat16, float16 or float32 (its tolerance is our kernels' \
                     float32 arithmetic, then the output's rounding), not {} -> {}",
                    dtype_in.name(),
                    dtype_out.name()
                ));
            }
        }
        if let Shape::Histogram { .. } = shape {
            let counted = [
                Dtype::Int32,
                Dtype::Int64,
                Dtype::Uint32,
                Dtype::Bfloat16,
                Dtype::Float16,
                Dtype::Float32,
                Dtype::Float64,
            ];
            if !counted.contains(&dtype_in) {
                return Err(format!(
                    "a typed histogram counts int32, int64, uint32, bfloat16, float16, float32 or float64 samples \
                     (its bounds are int64, float32 or, for float64 samples, float64 parameters), not {}",
                    dtype_in.name()
                ));
            }
            return Ok(Parts { shape, op, dtype_in, dtype_out, accumulator: dtype_out, tolerance, nan });
        }
        if let Shape::Compact { .. } = shape {
            if dtype_out != dtype_in {
                return Err(format!(
                    "a compaction moves its items: out is {}, not {}",
                    dtype_in.name(),
                    dtype_out.name()
                ));
            }
        }
        if !matches!(shape, Shape::Arg { .. }) {
            if is_float(dtype_in) != is_float(dtype_out) {
                return Err(format!(
                    "{} in and {} out: a typed contract keeps ints or floats",
                    dtype_in.name(),
                    dtype_out.name()
                ));
            }
            if shape.folds() && !float_sum && !holds(dtype_out, dtype_in) {
                return Err(format!(
                    "a {} {} narrows {} to {}: the output type must hold every input exactly",
                    op.name(),
                    match shape {
                        Shape::Scan(_) => "scan",
                        Shape::Segmented => "segmented reduction",
                        _ => "reduce",
                    },
                    dtype_in.name(),
                    dtype_out.name()
                ));
            }
        }
        Ok(Parts { shape, op, dtype_in, dtype_out, accumulator, tolerance, nan })
    }

    /// The default accumulator of these parts' types.
    fn default_accumulator(&self) -> Dtype {
        if self.float_sum() {
            wider(wider(self.dtype_in, self.dtype_out), Dtype::Float32)
        } else {
            self.dtype_out
        }
    }

    /// The contract name that states every part (see the module's table).
    pub fn name(&self) -> String {
        let (i, o) = (short(self.dtype_in), short(self.dtype_out));
        let mut name = match self.shape {
            Shape::Reduce => format!("{}.{i}.{o}", self.op.name()),
            Shape::Scan(kind) => format!("{}.{}.{i}.{o}", scan_kind_name(kind), self.op.name()),
            Shape::Arg { max } => format!("{}.{i}", if max { "argmax" } else { "argmin" }),
            Shape::Segmented => format!("{}.{i}.{o}", self.op.name()),
            Shape::Compact { flagged } => format!("{}.{i}", if flagged { "flagged" } else { "positive" }),
            Shape::Softmax { masked_nan, strided } => format!(
                "{}.{i}.{o}{}",
                if strided { "strided_rows" } else { "rows" },
                if masked_nan { ".all_masked_nan" } else { "" }
            ),
            Shape::Histogram { closed } => format!("even.{i}{}", if closed { ".last_bin_closed" } else { "" }),
        };
        if self.accumulator != self.default_accumulator() {
            name += &format!(".acc_{}", short(self.accumulator));
        }
        if let Tolerance::User { rtol, atol, ulp } = self.tolerance {
            name += &format!(".rtol_{}.atol_{}", number_token(rtol), number_token(atol));
            if let Some(k) = ulp {
                name += &format!(".ulp_{k}");
            }
        }
        if let Some(token) = self.nan.token() {
            name += &format!(".{token}");
        }
        name
    }

    /// The parts a typed `name` of `primitive` states: None when `name` is not
    /// typed (a registry contract or a named rule), else the parts or why not.
    pub fn parse(primitive: Primitive, name: &str) -> Option<Result<Parts, String>> {
        let tokens: Vec<&str> = name.split('.').collect();
        let mut request = Request::default();
        let rest = match (primitive, tokens.as_slice()) {
            (Primitive::Reduce, [op, i, o, rest @ ..]) if Op::from_name(op).is_some() => {
                (request.op, request.dtype_in, request.dtype_out) = (some(op), some(i), some(o));
                rest
            }
            (Primitive::Scan, [kind @ ("inclusive" | "exclusive"), op, i, o, rest @ ..])
                if Op::from_name(op).is_some() =>
            {
                (request.kind, request.op, request.dtype_in, request.dtype_out) =
                    (some(kind), some(op), some(i), some(o));
                rest
            }
            // argmax.f32 and its named rules are the registry's.
            (Primitive::ArgReduce, [kind @ ("argmax" | "argmin"), i, rest @ ..]) if *i != "f32" => {
                (request.kind, request.dtype_in) = (some(kind), some(i));
                rest
            }
            (Primitive::SegmentedReduce, [op, i, o, rest @ ..]) if Op::from_name(op).is_some() => {
                (request.op, request.dtype_in, request.dtype_out) = (some(op), some(i), some(o));
                rest
            }
            (Primitive::Softmax, [kind @ ("rows" | "strided_rows"), i, o, rest @ ..]) => {
                (request.kind, request.dtype_in, request.dtype_out) = (some(kind), some(i), some(o));
                rest
            }
            // even.i32, even.f32 and their closed-last-bin rules are the registry's.
            (Primitive::Histogram, ["even", i, rest @ ..]) if !["i32", "f32"].contains(i) => {
                (request.kind, request.dtype_in) = (some("even"), some(i));
                rest
            }
            // positive.i32 and flagged.i32 are the registry's.
            (Primitive::Compact, [kind @ ("flagged" | "positive"), i, rest @ ..]) if *i != "i32" => {
                (request.kind, request.dtype_in) = (some(kind), some(i));
                rest
            }
            _ => return None,
        };
        Some(parse_options(rest, &mut request).and_then(|()| {
            let parts = Parts::compose(primitive, &request)?;
            // One name per contract: the canonical spelling only.
            if parts.name() == name {
                Ok(parts)
            } else {
                Err(format!("'{name}' is not the canonical name of its contract: write {}", parts.name()))
            }
        }))
    }

    /// The registry contract (or named rule) these parts are, when they are one.
    pub fn registry_name(&self) -> Option<String> {
        let plain = self.tolerance == Tolerance::OrderFree && self.accumulator == self.default_accumulator();
        match (self.shape, self.op, self.dtype_in, self.dtype_out) {
            (Shape::Reduce, Op::Sum, Dtype::Int32, Dtype::Int64) if plain => Some("sum.i32".into()),
            (Shape::Scan(kind), Op::Sum, Dtype::Int32, Dtype::Int64) if plain => {
                Some(format!("{}.i32", scan_kind_name(kind)))
            }
            (Shape::Segmented, Op::Sum | Op::Max, Dtype::Int32, Dtype::Int64) if plain => {
                Some(format!("{}.i32", self.op.name()))
            }
            (Shape::Histogram { closed }, _, Dtype::Int32 | Dtype::Float32, _) => {
                let base = format!("even.{}", short(self.dtype_in));
                Some(if closed { format!("{base}.last_bin_closed") } else { base })
            }
            (Shape::Softmax { masked_nan, strided: false }, _, Dtype::Float32, Dtype::Float32) => {
                Some(if masked_nan { "rows.f32.all_masked_nan" } else { "rows.f32" }.into())
            }
            (Shape::Compact { flagged }, _, Dtype::Int32, _) => {
                Some(if flagged { "flagged.i32" } else { "positive.i32" }.into())
            }
            (Shape::Arg { max }, _, Dtype::Float32, _) => {
                let base = if max { "argmax.f32" } else { "argmin.f32" };
                Some(self.nan.token().map(|t| format!("{base}.{t}")).unwrap_or_else(|| base.into()))
            }
            _ => None,
        }
    }

    /// The contract in one line for people, without its edge values (the
    /// contract's summary adds them: [`super::summary`]).
    pub fn summary(&self) -> String {
        let (i, o) = (self.dtype_in.name(), self.dtype_out.name());
        let types = if self.float_sum() {
            format!("{i} in, {} accumulator, {o} out", self.accumulator.name())
        } else {
            format!("{i} in, {o} out")
        };
        match self.shape {
            Shape::Reduce => format!(
                "{}: out[0] = {} over in[0..n) ({types}, one element; {})",
                self.op.name(),
                self.fold_words(),
                self.empty_words()
            ),
            Shape::Scan(kind) => {
                let (range, first) = match kind {
                    ScanKind::Inclusive => ("in[0..=i]", String::new()),
                    _ => ("in[0..i)", format!(", out[0] = {}", self.identity_words())),
                };
                format!(
                    "{} {} scan: out[i] = {} over {range}{first} ({types})",
                    scan_kind_name(kind),
                    self.op.name(),
                    self.fold_words()
                )
            }
            Shape::Segmented => format!(
                "segmented {}: out[s] = {} over in[offsets[s]..offsets[s+1]) for s < segments ({types}, int64 \
                 offsets of segments + 1 entries from 0 to n; an empty segment gives {})",
                self.op.name(),
                self.fold_words(),
                self.identity_words()
            ),
            Shape::Compact { flagged } => format!(
                "compaction by {}: out[0..count) = the kept in[i] in order, count[0] = how many ({i} in and out, \
                 moved bit for bit{}, int64 count; out[count..n) untouched)",
                if flagged { "flags" } else { "x > 0" },
                if flagged { ", uint8 flags" } else { "" }
            ),
            Shape::Histogram { closed } => format!(
                "even-bin histogram: counts[b] = #{{i : lower <= in[i] {} upper, {} = b}} ({i} in, {}; int32 counts of \
                 bins entries{})",
                if closed { "<=" } else { "<" },
                match self.dtype_in {
                    Dtype::Float64 => "min((long long)__dmul_rn(__dsub_rn(in[i], lower), scale), bins - 1)",
                    d if is_float(d) => "min((int)__fmul_rn(__fsub_rn(in[i], lower), scale), bins - 1)",
                    _ => "min(((in[i] - lower) * bins) / (upper - lower), bins - 1) in 128-bit integers",
                },
                match self.dtype_in {
                    Dtype::Float64 => "float64 bounds and scale = bins / (upper - lower) in double",
                    d if is_float(d) => "float32 bounds and scale",
                    _ => "int64 bounds",
                },
                if closed { "; a sample equal to upper counts in the last bin, as torch.histc" } else { "" }
            ),
            Shape::Softmax { masked_nan, strided } => {
                let (row, layout) = if strided {
                    ("r*stride", "rows of stride elements, the first cols of each logits (the rest are not), out contiguous rows x cols")
                } else {
                    ("r*cols", "rows x cols row-major")
                };
                format!(
                    "row softmax: out[r*cols + c] = exp(in[{row} + c] - max_r) / sum_c' exp(in[{row} + c'] - max_r) \
                     ({i} in, {o} out, {layout}; -inf logits give exactly 0, an all-masked row all {})",
                    if masked_nan { "NaN (torch.softmax)" } else { "0" }
                )
            }
            Shape::Arg { max } => format!(
                "{}: index[0] = the lowest i with in[i] = {}(in) ({i} in, one int64 out)",
                if max { "argmax" } else { "argmin" },
                if max { "max" } else { "min" },
            ),
        }
    }

    fn fold_words(&self) -> String {
        match (self.op, is_float(self.dtype_in)) {
            (Op::Sum, false) => format!("the sum wrapping in {} (two's complement)", self.dtype_out.name()),
            (Op::Sum, true) => "the sum".into(),
            (Op::Min, _) => "the smallest value".into(),
            (Op::Max, _) => "the largest value".into(),
        }
    }

    fn identity_words(&self) -> String {
        let float = is_float(self.dtype_out);
        match (self.op, float) {
            (Op::Sum, _) => "0".into(),
            (Op::Min, true) => "+inf".into(),
            (Op::Max, true) => "-inf".into(),
            (Op::Min, false) => format!("the largest {}", self.dtype_out.name()),
            (Op::Max, false) => format!("the smallest {}", self.dtype_out.name()),
        }
    }

    fn empty_words(&self) -> String {
        format!("n = 0 gives {}", self.identity_words())
    }

    /// The comparison in words.
    pub fn rule_words(&self) -> String {
        if let Shape::Compact { .. } = self.shape {
            return "exact: the kept items bit for bit (floats too: a NaN keeps its sign and payload, -0.0 stays \
                    -0.0) and their count; out[count..n) untouched"
                .into();
        }
        if let Shape::Histogram { .. } = self.shape {
            return if is_float(self.dtype_in) {
                "exact: every bin count equal to the model's (NaN and ±inf counted nowhere)".into()
            } else {
                "exact: every bin count equal to the model's".into()
            };
        }
        if let Shape::Softmax { .. } = self.shape {
            return format!(
                "softmax tolerance: each probability within the loosest tolerance our softmax variants declare at \
                 the row width for {} output (relative + per-shift * |x - max| + absolute) of the exact value in \
                 expected (float64), masked logits exactly 0, each unmasked row summing to 1 within the row bound",
                self.dtype_out.name()
            );
        }
        if !self.float_sum() {
            return if is_float(self.dtype_out) {
                format!(
                    "exact: every element equal to the model's value (-0.0 and +0.0 equal{}), and the same element count",
                    match self.nan {
                        NanRule::NanPropagate => "; a NaN expected matches any quiet NaN, a number never",
                        NanRule::NanIgnored => {
                            "; a NaN expected (a fold of NaN only) matches any quiet NaN or the identity, a number never"
                        }
                        _ => "",
                    }
                )
            } else {
                "exact: every element equal to the model's, and the same element count".into()
            };
        }
        let rounding = if precision(self.dtype_out) < precision(self.accumulator) {
            format!(" plus its rounding to {} (u_out |exact| + the smallest subnormal)", self.dtype_out.name())
        } else {
            String::new()
        };
        match self.tolerance {
            Tolerance::OrderFree => format!(
                "order-free bound: |out - exact| <= (k-1) u/(1+u) sum|x| over the k terms of each output, u = 2^-{} \
                 ({} accumulator){}{rounding}; the error computed exactly from the input (expected holds the exact \
                 sums rounded to float64)",
                precision(self.accumulator),
                self.accumulator.name(),
                if flush_loss(self.accumulator) > 0.0 {
                    " plus 2k 2^-126 (float32 arithmetic may flush each subnormal input and result to zero, as \
                     atomicAdd and -ftz=true do)"
                } else {
                    ""
                }
            ),
            Tolerance::User { rtol, atol, ulp } => format!(
                "user tolerance: |out - exact| <= atol + rtol |exact| (atol {atol:e}, rtol {rtol:e}){}; the error \
                 computed exactly from the input (expected holds the exact sums rounded to float64)",
                ulp.map(|k| format!(" or within {k} ulp of the exact value rounded to {}", self.dtype_out.name()))
                    .unwrap_or_default()
            ),
        }
    }
}

/// `nan` is the default or a rule `shape` takes over `dtype_in` with `op`:
/// float arg reductions take nan_first and nan_ignored, float min and max
/// (reduce, scan, segmented) nan_propagate and nan_ignored.
fn check_nan_rule(shape: Shape, op: Op, dtype_in: Dtype, nan: NanRule) -> Result<(), String> {
    let allowed = NanRule::allowed(shape, op, dtype_in);
    if nan == NanRule::Finite || allowed.contains(&nan) {
        return Ok(());
    }
    let token = nan.token().unwrap_or_default();
    Err(match (shape, allowed) {
        (_, []) => format!(
            "NaN rule {token}: a NaN rule applies to a float arg reduction (nan_first, nan_ignored) or a float min or \
             max (nan_propagate, nan_ignored) only, not to {} over {}",
            if shape.folds() { op.name() } else { "this contract" },
            dtype_in.name()
        ),
        (Shape::Arg { .. }, _) => {
            format!(
                "NaN rule {token}: an arg reduction takes nan_first or nan_ignored (nan_propagate is min's and max's)"
            )
        }
        _ => {
            format!("NaN rule {token}: a min or max takes nan_propagate or nan_ignored (nan_first is arg reductions')")
        }
    })
}

fn some(s: &str) -> Option<String> {
    Some(s.to_string())
}

/// The name of a scan kind in contract names.
pub fn scan_kind_name(kind: ScanKind) -> &'static str {
    match kind {
        ScanKind::Inclusive => "inclusive",
        _ => "exclusive",
    }
}

/// Reads the optional tokens of a typed name into `request`.
fn parse_options(tokens: &[&str], request: &mut Request) -> Result<(), String> {
    for token in tokens {
        let number = |v: &str| v.parse::<f64>().map_err(|_| format!("'{token}': {v} is not a number"));
        match token.split_once('_') {
            Some(("acc", t)) => request.accumulator = some(t),
            Some(("rtol", v)) => request.rtol = Some(number(v)?),
            Some(("atol", v)) => request.atol = Some(number(v)?),
            Some(("ulp", v)) => request.ulp = Some(v.parse().map_err(|_| format!("'{token}': {v} is not a count"))?),
            _ if NanRule::named(token).is_some() || ["all_masked_nan", "last_bin_closed"].contains(token) => {
                request.nan = some(token)
            }
            _ => {
                return Err(format!(
                    "unknown part '{token}' of a typed contract name: acc_<type>, rtol_<x>, atol_<x>, ulp_<k>, nan_first, nan_ignored, nan_propagate, last_bin_closed, all_masked_nan"
                ))
            }
        }
    }
    Ok(())
}

#[cfg(test)]
pub(super) fn number_token_of(v: f64) -> String {
    number_token(v)
}
