//! The parts of a row contract (what it computes, its types, affine
//! buffers, saved statistics, eps, reduction, tolerance), their validation,
//! and the one name that states them.

use super::super::parts::{dtype_named, number_token, short};
use crate::cases::typed::parts::Request;
use crate::sweep::raw::Dtype;

/// What a row contract computes over each row of a `rows x cols` input.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowKind {
    /// `(x - mean) / sqrt(var + eps) * gamma + beta`, biased variance.
    LayerNorm,
    /// `x / sqrt(mean(x^2) + eps) * gamma`.
    RmsNorm,
    /// `-log softmax(x)[target]`, then a reduction over the rows.
    CrossEntropy,
}

impl RowKind {
    /// Every kind.
    pub const ALL: [RowKind; 3] = [RowKind::LayerNorm, RowKind::RmsNorm, RowKind::CrossEntropy];

    /// Its name: the first part of its contracts' names, and the primitive a user may name.
    pub fn name(self) -> &'static str {
        match self {
            RowKind::LayerNorm => "layernorm",
            RowKind::RmsNorm => "rmsnorm",
            RowKind::CrossEntropy => "cross_entropy",
        }
    }

    /// The kind named `name`.
    pub fn from_name(name: &str) -> Option<RowKind> {
        RowKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether it normalises rows (layer norm, RMS norm).
    pub fn is_norm(self) -> bool {
        self != RowKind::CrossEntropy
    }

    /// Contract names of this kind, for messages.
    pub fn examples(self) -> &'static str {
        match self {
            RowKind::LayerNorm => "layernorm.f32.f32, layernorm.bf16.bf16.affine.stats",
            RowKind::RmsNorm => "rmsnorm.f32.f32, rmsnorm.bf16.bf16.affine",
            RowKind::CrossEntropy => "cross_entropy.f32.f32.mean, cross_entropy.bf16.f32.none",
        }
    }
}

/// How a cross-entropy reduces its rows' losses.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reduction {
    /// One loss per row; an ignored row's is 0.
    None,
    /// The mean over the rows not ignored (NaN when every row is ignored).
    Mean,
    /// The sum over the rows not ignored (0 when every row is ignored).
    Sum,
}

impl Reduction {
    const ALL: [Reduction; 3] = [Reduction::None, Reduction::Mean, Reduction::Sum];

    /// Its name: `none`, `mean`, `sum` (as `F.cross_entropy`'s `reduction`).
    pub fn name(self) -> &'static str {
        match self {
            Reduction::None => "none",
            Reduction::Mean => "mean",
            Reduction::Sum => "sum",
        }
    }

    fn from_name(name: &str) -> Option<Reduction> {
        Reduction::ALL.into_iter().find(|r| r.name() == name)
    }
}

/// The `eps` a norm's cases pass to the kernel (a float32 parameter).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Eps {
    /// This value, rounded to float32.
    Value(f64),
    /// The machine epsilon of the type the norm computes in, PyTorch's
    /// "opmath" type: float32 (2^-23) for float16, bfloat16 and float32
    /// inputs. `F.rms_norm` takes it when eps is None (its documentation
    /// says `torch.finfo(input.dtype).eps`, but the implementation reads
    /// `numeric_limits` of the opmath type: 2^-23 for bfloat16 too, not 2^-7).
    Opmath,
}

/// The eps of a norm whose name states none (`F.layer_norm`'s default, `nn.LayerNorm`'s).
pub const DEFAULT_EPS: Eps = Eps::Value(1e-5);

/// The element types a row contract reads and writes.
const ROW_TYPES: [Dtype; 3] = [Dtype::Float32, Dtype::Bfloat16, Dtype::Float16];

/// `torch.testing.assert_close`'s default (rtol, atol) for a float type.
pub fn torch_tolerance(dtype: Dtype) -> (f64, f64) {
    match dtype {
        Dtype::Bfloat16 => (1.6e-2, 1e-5),
        Dtype::Float16 => (1e-3, 1e-5),
        Dtype::Float64 => (1e-7, 1e-7),
        _ => (1.3e-6, 1e-5),
    }
}

/// The machine epsilon of the type a norm over `dtype` computes in
/// ([`Eps::Opmath`]): float64's for float64, float32's for every narrower type.
fn opmath_eps(dtype: Dtype) -> f64 {
    match dtype {
        Dtype::Float64 => 2f64.powi(-52),
        _ => 2f64.powi(-23),
    }
}

/// A valid row contract's parts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowParts {
    /// What it computes.
    pub kind: RowKind,
    /// Input element type (logits, or the rows to normalise; gamma and beta too).
    pub dtype_in: Dtype,
    /// Output element type (normalised rows, or losses).
    pub dtype_out: Dtype,
    /// The type the kernel accumulates in: its tolerance scales the error
    /// the row's own magnitude allows (default float32).
    pub accumulator: Dtype,
    /// A norm's elementwise affine buffers: gamma and beta (layer norm) or gamma (RMS norm).
    pub affine: bool,
    /// A norm also writes its per-row float32 statistics: mean and rstd
    /// (layer norm), rstd (RMS norm), as PyTorch's forward saves them.
    pub stats: bool,
    /// A cross-entropy's reduction (norms: unused, `None`).
    pub reduction: Reduction,
    /// A norm's eps.
    pub eps: Eps,
    /// The user's (rtol, atol); None: PyTorch's defaults for the output type.
    pub tolerance: Option<(f64, f64)>,
}

/// The tolerance of each element: `atol + rtol |exact| + rtol_acc scale`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bound {
    /// Relative to the exact value.
    pub rtol: f64,
    /// Absolute.
    pub atol: f64,
    /// Relative to the element's input scale (`torch.testing`'s rtol of the accumulator type).
    pub rtol_acc: f64,
}

impl Bound {
    /// The allowed |got - exact| for a value of input scale `scale`.
    pub fn allowed(&self, exact: f64, scale: f64) -> f64 {
        self.atol + self.rtol * exact.abs() + self.rtol_acc * scale
    }
}

fn nonnegative(what: &str, v: f64) -> Result<f64, String> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(format!("{what} must be a finite number >= 0, got {v}"))
    }
}

/// A row request's options beyond the typed request's fields (from name tokens).
#[derive(Debug, Clone, Default, PartialEq)]
struct Options {
    affine: bool,
    stats: bool,
    reduction: Option<String>,
    eps: Option<String>,
}

impl RowParts {
    /// The parts `request` composes for `kind` (its types, accumulator and
    /// tolerance; a cross-entropy's reduction is `mean`, as `F.cross_entropy`'s).
    pub fn compose(kind: RowKind, request: &Request) -> Result<RowParts, String> {
        RowParts::from_request(kind, request, &Options::default())
    }

    fn from_request(kind: RowKind, request: &Request, options: &Options) -> Result<RowParts, String> {
        if request.op.is_some() || request.ulp.is_some() || request.nan.is_some() {
            return Err(format!(
                "a {} contract takes no op, ulp or NaN rule: its parts are dtype_in, dtype_out, accumulator, rtol \
                 and atol (or its name, e.g. {})",
                kind.name(),
                kind.examples()
            ));
        }
        let dtype_in = row_type(request.dtype_in.as_deref().ok_or("name the input type (dtype_in)")?)?;
        let dtype_out = match request.dtype_out.as_deref() {
            Some(out) => row_type(out)?,
            None => dtype_in,
        };
        let accumulator = match request.accumulator.as_deref() {
            Some(acc) => float_type(acc)?,
            None => Dtype::Float32,
        };
        let tolerance = match (request.rtol, request.atol) {
            (None, None) => None,
            (rtol, atol) => {
                let (torch_rtol, torch_atol) = torch_tolerance(dtype_out);
                Some((
                    nonnegative("rtol", rtol.unwrap_or(torch_rtol))?,
                    nonnegative("atol", atol.unwrap_or(torch_atol))?,
                ))
            }
        };
        let parts = RowParts {
            kind,
            dtype_in,
            dtype_out,
            accumulator,
            affine: options.affine,
            stats: options.stats,
            reduction: Reduction::None,
            eps: DEFAULT_EPS,
            tolerance,
        };
        parts.with_options(options)
    }

    /// `self` with the reduction and eps of `options`, validated for the kind.
    fn with_options(mut self, options: &Options) -> Result<RowParts, String> {
        let kind = self.kind.name();
        if self.kind == RowKind::CrossEntropy {
            if options.affine || options.stats || options.eps.is_some() {
                return Err(format!("a {kind} contract has no affine buffers, statistics or eps"));
            }
            self.reduction = match options.reduction.as_deref() {
                None => Reduction::Mean,
                Some(name) => Reduction::from_name(name)
                    .ok_or_else(|| format!("unknown reduction '{name}' of {kind}: choose from none, mean, sum"))?,
            };
            return Ok(self);
        }
        if let Some(reduction) = &options.reduction {
            return Err(format!("a {kind} contract has no reduction ('{reduction}'): it writes every row"));
        }
        self.eps = match options.eps.as_deref() {
            None => DEFAULT_EPS,
            Some("opmath") => Eps::Opmath,
            Some(v) => {
                let value = v.parse::<f64>().map_err(|_| format!("eps_{v}: {v} is not a number"))?;
                if !(value.is_finite() && value > 0.0 && (value as f32) > 0.0) {
                    return Err(format!("eps must be a positive number a float32 holds, got {v}"));
                }
                Eps::Value(value)
            }
        };
        Ok(self)
    }

    /// The eps value the cases pass (a float32 parameter).
    pub fn eps_value(&self) -> f32 {
        match self.eps {
            Eps::Value(v) => v as f32,
            Eps::Opmath => opmath_eps(self.dtype_in) as f32,
        }
    }

    /// The tolerance of each element.
    pub fn bound(&self) -> Bound {
        let (rtol, atol) = self.tolerance.unwrap_or_else(|| torch_tolerance(self.dtype_out));
        Bound { rtol, atol, rtol_acc: torch_tolerance(self.accumulator).0 }
    }

    /// The canonical name: `<kind>.<in>.<out>` then, as they differ from
    /// the defaults, `.<reduction>` (cross-entropy: always), `.affine`,
    /// `.stats`, `.acc_<t>`, `.eps_<x>` or `.eps_opmath`, `.rtol_<x>.atol_<x>`.
    pub fn name(&self) -> String {
        let mut name = format!("{}.{}.{}", self.kind.name(), short(self.dtype_in), short(self.dtype_out));
        if self.kind == RowKind::CrossEntropy {
            name += &format!(".{}", self.reduction.name());
        }
        for (on, token) in [(self.affine, "affine"), (self.stats, "stats")] {
            if on {
                name += &format!(".{token}");
            }
        }
        if self.accumulator != Dtype::Float32 {
            name += &format!(".acc_{}", short(self.accumulator));
        }
        match self.eps {
            _ if !self.kind.is_norm() || self.eps == DEFAULT_EPS => {}
            Eps::Opmath => name += ".eps_opmath",
            Eps::Value(v) => name += &format!(".eps_{}", number_token(v)),
        }
        if let Some((rtol, atol)) = self.tolerance {
            name += &format!(".rtol_{}.atol_{}", number_token(rtol), number_token(atol));
        }
        name
    }

    /// The parts a row contract's `name` states: None when `name` names no
    /// row kind, else the parts or why not (a name must be canonical).
    pub fn parse(name: &str) -> Option<Result<RowParts, String>> {
        let tokens: Vec<&str> = name.split('.').collect();
        let kind = RowKind::from_name(tokens.first()?)?;
        Some(parse_tokens(kind, &tokens[1..]).and_then(|parts| {
            if parts.name() == name {
                Ok(parts)
            } else {
                Err(format!("'{name}' is not the canonical name of its contract: write {}", parts.name()))
            }
        }))
    }
}

/// The parts of the tokens after a row kind's name.
fn parse_tokens(kind: RowKind, tokens: &[&str]) -> Result<RowParts, String> {
    let want = if kind == RowKind::CrossEntropy { 3 } else { 2 };
    if tokens.len() < want {
        return Err(format!(
            "a {} contract names its types{}: e.g. {}",
            kind.name(),
            if want == 3 { " and its reduction" } else { "" },
            kind.examples()
        ));
    }
    let mut request = Request { dtype_in: some(tokens[0]), dtype_out: some(tokens[1]), ..Request::default() };
    let mut options = Options::default();
    if kind == RowKind::CrossEntropy {
        options.reduction = some(tokens[2]);
    }
    for token in &tokens[want..] {
        let number = |v: &str| v.parse::<f64>().map_err(|_| format!("'{token}': {v} is not a number"));
        match (*token, token.split_once('_')) {
            ("affine", _) => options.affine = true,
            ("stats", _) => options.stats = true,
            (_, Some(("acc", t))) => request.accumulator = some(t),
            (_, Some(("eps", v))) => options.eps = some(v),
            (_, Some(("rtol", v))) => request.rtol = Some(number(v)?),
            (_, Some(("atol", v))) => request.atol = Some(number(v)?),
            _ => {
                return Err(format!(
                    "unknown part '{token}' of a {} contract name: affine, stats, acc_<type>, eps_<x>, eps_opmath, \
                     rtol_<x>, atol_<x>",
                    kind.name()
                ))
            }
        }
    }
    RowParts::from_request(kind, &request, &options)
}

fn some(s: &str) -> Option<String> {
    Some(s.to_string())
}

/// A row contract's element type: float32, bfloat16 or float16.
fn row_type(name: &str) -> Result<Dtype, String> {
    let dtype = dtype_named(name)?;
    if ROW_TYPES.contains(&dtype) {
        Ok(dtype)
    } else {
        Err(format!("a row contract reads and writes float32, bfloat16 or float16, not {}", dtype.name()))
    }
}

/// An accumulator type: a float type.
fn float_type(name: &str) -> Result<Dtype, String> {
    let dtype = dtype_named(name)?;
    if ROW_TYPES.contains(&dtype) || dtype == Dtype::Float64 {
        Ok(dtype)
    } else {
        Err(format!("a row contract's accumulator is a float type, not {}", dtype.name()))
    }
}

impl RowParts {
    /// The contract in one line for people.
    pub fn summary(&self) -> String {
        let (i, o) = (self.dtype_in.name(), self.dtype_out.name());
        let layout = format!("{i} in, {o} out, rows x cols row-major");
        match self.kind {
            RowKind::LayerNorm => format!(
                "layer norm: out[r*cols + c] = (in[r*cols + c] - mean_r) / sqrt(var_r + eps){} with mean_r and the \
                 biased var_r of row r ({layout}; float32 eps = {:e}{}{})",
                if self.affine { " * gamma[c] + beta[c]" } else { "" },
                self.eps_value(),
                if self.affine { format!("; gamma and beta {i} of cols elements") } else { String::new() },
                if self.stats { "; mean[r] = mean_r and rstd[r] = 1/sqrt(var_r + eps), float32" } else { "" },
            ),
            RowKind::RmsNorm => format!(
                "RMS norm: out[r*cols + c] = in[r*cols + c] / sqrt(mean_c' in[r*cols + c']^2 + eps){} ({layout}; \
                 float32 eps = {:e}{}{})",
                if self.affine { " * gamma[c]" } else { "" },
                self.eps_value(),
                if self.affine { format!("; gamma {i} of cols elements") } else { String::new() },
                if self.stats { "; rstd[r] = 1/sqrt(mean square_r + eps), float32" } else { "" },
            ),
            RowKind::CrossEntropy => format!(
                "cross-entropy: loss_r = log sum_c exp(in[r*cols + c]) - in[r*cols + target[r]] (-log_softmax; \
                 {i} logits rows x cols row-major, int64 target[rows] in [0, cols) or ignore_index (int64 \
                 parameter, -100), {o} {}; a target logit of -inf gives +inf, other -inf logits probability 0)",
                match self.reduction {
                    Reduction::None => "loss[rows], an ignored row's 0",
                    Reduction::Mean => "loss[0] = the mean over the rows not ignored (NaN when all are)",
                    Reduction::Sum => "loss[0] = the sum over the rows not ignored (0 when all are)",
                }
            ),
        }
    }

    /// The comparison in words.
    pub fn rule_words(&self) -> String {
        let b = self.bound();
        let scales = match self.kind {
            RowKind::LayerNorm => {
                "out: |gamma[c]| max_c'|x| rstd (the mean's own rounding moves a normalised value that far), mean: \
                 max|x|, rstd: max|x| rstd^2"
            }
            RowKind::RmsNorm => "out: |out| (the mean square's rounding moves it relatively), rstd: rstd",
            RowKind::CrossEntropy => {
                "a row's loss: max|x| over its finite logits; a sum: the sum over the counted rows of max|x| + |loss|, \
                 a mean: that over their count; an ignored row's loss (reduction none) exactly 0"
            }
        };
        format!(
            "row tolerance: |out - exact| <= atol + rtol |exact| + rtol_acc scale (atol {:e}, rtol {:e}{}; rtol_acc \
             {:e}, torch.testing's rtol of the {} accumulator), scale per element: {scales}; float32 statistics \
             within {}; exact +-inf and NaN matched exactly (expected holds the exact values rounded once to \
             float64)",
            b.atol,
            b.rtol,
            if self.tolerance.is_some() { "" } else { ", torch.testing's defaults for the output type" },
            b.rtol_acc,
            self.accumulator.name(),
            if self.tolerance.is_some() { "the same atol and rtol" } else { "float32's atol 1e-5 and rtol 1.3e-6" },
        )
    }
}
