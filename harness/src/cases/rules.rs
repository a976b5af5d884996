//! Named rules: contracts that differ from one of the registry's user contracts
//! ([`raw::contracts`]) in one stated rule, so that a kernel written to a
//! framework's rule can be checked against that rule instead of failing ours.
//!
//! | contract | its rule | the base contract's rule |
//! | --- | --- | --- |
//! | `even.i32.last_bin_closed`, `even.f32.last_bin_closed` | a sample equal to `upper` counts in the last bin (`torch.histc`, `numpy.histogram`) | `[lower, upper)`: `upper` is not counted |
//! | `rows.f32.all_masked_nan` | a row whose every logit is `-inf` is all NaN (`torch.softmax`) | such a row is all 0 |
//! | `argmax.f32.nan_first`, `argmin.f32.nan_first` | NaN wins: the index of the first NaN; ±inf are ordinary values (`torch.argmax`, `numpy.argmax`) | inputs finite (no case holds NaN or ±inf) |
//! | `argmax.f32.nan_ignored`, `argmin.f32.nan_ignored` | NaN ignored: the extremum of the other values; never NaN only (`numpy.nanargmax`) | the same |
//!
//! A rule contract has its base's buffers, parameters and comparison; its
//! name (`<base>.<rule>`) is in every case id, so every failure line names
//! the rule, and its summary states it. Its cases are the base's (the
//! catalogue and the edge families, each expected output adjusted to the
//! rule) plus families where the rule shows ([`with_catalogue`]). Rule: an
//! adjustment only moves what the rule defines apart (the last bin's count,
//! an all-masked row, an input holding NaN or ±inf); on every other input
//! the rule and its base agree, so the base's model answers stand.
//!
//! A kernel that fails a base contract where one of its rules would pass
//! hears so in its failure line ([`compare`]): "would pass under
//! even.f32.last_bin_closed (...)".

use super::typed;
use super::typed::rows;
use crate::edge_families;
use crate::registry::Primitive;
use crate::sweep::case::Verdict;
use crate::sweep::gpu::arg_reduce::FloatFamily;
use crate::sweep::gpu::{case_seed, id};
use crate::sweep::raw::mismatch;
use crate::sweep::raw::{self, variant, Array, Contract, RawCase, RawSpec, Value};
use crate::sweep::SweepPlan;
use model::generators::{uniform_f32, Rng};

/// One named rule over a base contract.
pub struct NamedRule {
    /// The primitive of the base contract.
    pub primitive: Primitive,
    /// The base contract's name (`even.f32`).
    pub base: &'static str,
    /// The rule contract (`even.f32.last_bin_closed`), the base's buffers and comparison.
    pub contract: Contract,
    /// The rule in words, with the frameworks that follow it.
    pub statement: &'static str,
    /// The frameworks whose rule over the base this is, by the name a user
    /// gives (`framework = "torch"`): their default function of that kind
    /// (`torch.histc`, `numpy.argmax`) follows it.
    pub frameworks: &'static [&'static str],
    /// The base's model answer of `case` made this rule's.
    adjust: Adjust,
    /// The outputs this rule defines apart from the base, checked (a failure
    /// naming the rule) and mapped to the base's answer for the comparison.
    accept: Accept,
    /// The families where the rule shows, beyond the base's cases.
    families: Families,
}

fn same(_: &mut RawCase) {}

fn unchanged(_: &RawCase, _: &mut [Array]) -> Result<(), Verdict> {
    Ok(())
}

fn none(_: &SweepPlan, _: &Contract, _: &str, _: &mut Vec<RawSpec>) {}

const HISTOGRAM_CLOSED: &str =
    "the last bin closed at upper: a sample equal to upper counts in bin bins - 1 (torch.histc, numpy.histogram)";
const SOFTMAX_NAN: &str = "an all-masked row (every logit -inf) is all NaN (torch.softmax)";
const ARG_NAN_FIRST: &str =
    "NaN wins: the index of the first NaN; ±inf are ordinary values; else the lowest index of the extremum, \
     -0.0 ties 0.0 (torch.argmax/argmin, numpy.argmax/argmin)";
const ARG_NAN_IGNORED: &str = "NaN ignored: the lowest index of the extremum of the values that are not NaN; ±inf \
     are ordinary values, -0.0 ties 0.0; no case is NaN only (numpy.nanargmax/nanargmin)";

/// A named rule over `base` (one of the registry's contracts): its contract
/// is the base's buffers, parameters and comparison under `name` and `summary`.
const fn rule(
    (primitive, base): (Primitive, &Contract),
    (name, summary): (&'static str, &'static str),
    (statement, frameworks): (&'static str, &'static [&'static str]),
    (adjust, accept, families): (Adjust, Accept, Families),
) -> NamedRule {
    NamedRule {
        primitive,
        base: base.name,
        contract: Contract { name, summary, ..*base },
        statement,
        frameworks,
        adjust,
        accept,
        families,
    }
}

/// The frameworks a user may name (`framework = "torch"`).
pub const FRAMEWORKS: [&str; 2] = ["torch", "numpy"];

type Adjust = fn(&mut RawCase);
type Accept = fn(&RawCase, &mut [Array]) -> Result<(), Verdict>;
type Families = fn(&SweepPlan, &Contract, &str, &mut Vec<RawSpec>);

/// How each kind of rule applies: the histogram's last bin, the softmax's
/// all-masked rows, the arg reduction's NaN and infinities.
const LAST_BIN: (Adjust, Accept, Families) = (close_last_bin, unchanged, upper_edge_cases);
const MASKED_ROWS: (Adjust, Accept, Families) = (same, all_masked_rows_nan, none);
const NAN_INPUTS: (Adjust, Accept, Families) = (same, unchanged, nan_and_infinity_cases);

/// Every named rule.
pub static RULES: [NamedRule; 7] = [
    rule(
        (Primitive::Histogram, &raw::histogram::CONTRACTS[0]),
        (
            "even.i32.last_bin_closed",
            "even-bin histogram, the last bin closed: counts[b] = #{i : lower <= in[i] <= upper, \
             min(((in[i] - lower) * bins) / (upper - lower), bins - 1) = b in 64-bit integers} (int32 in, \
             int32 counts of bins entries; a sample equal to upper counts in the last bin, as torch.histc \
             and numpy.histogram)",
        ),
        (HISTOGRAM_CLOSED, &["torch", "numpy"]),
        LAST_BIN,
    ),
    rule(
        (Primitive::Histogram, &raw::histogram::CONTRACTS[1]),
        (
            "even.f32.last_bin_closed",
            "even-bin histogram, the last bin closed: counts[b] = #{i : lower <= in[i] <= upper, \
             min((int)__fmul_rn(__fsub_rn(in[i], lower), scale), bins - 1) = b} (f32 in, NaN not counted, \
             int32 counts of bins entries; a sample equal to upper counts in the last bin, as torch.histc \
             and numpy.histogram)",
        ),
        (HISTOGRAM_CLOSED, &["torch", "numpy"]),
        LAST_BIN,
    ),
    rule(
        (Primitive::Softmax, &raw::softmax::CONTRACTS[0]),
        (
            "rows.f32.all_masked_nan",
            "row softmax: out[r*cols + c] = exp(in[r*cols + c] - max_r) / sum_c' exp(in[r*cols + c'] - max_r) \
             (f32 in and out, rows x cols row-major; -inf logits give exactly 0; an all-masked row is all \
             NaN, as torch.softmax)",
        ),
        (SOFTMAX_NAN, &["torch"]),
        MASKED_ROWS,
    ),
    rule(
        (Primitive::ArgReduce, &raw::arg_reduce::CONTRACTS[0]),
        (
            "argmax.f32.nan_first",
            "argmax, NaN first: index[0] = the lowest i with in[i] NaN, else the lowest i with in[i] = \
             max(in) (f32 in, ±inf ordinary values, -0.0 ties 0.0; one int64 out; as torch.argmax and \
             numpy.argmax)",
        ),
        (ARG_NAN_FIRST, &["torch", "numpy"]),
        NAN_INPUTS,
    ),
    rule(
        (Primitive::ArgReduce, &raw::arg_reduce::CONTRACTS[1]),
        (
            "argmin.f32.nan_first",
            "argmin, NaN first: index[0] = the lowest i with in[i] NaN, else the lowest i with in[i] = \
             min(in) (f32 in, ±inf ordinary values, -0.0 ties 0.0; one int64 out; as torch.argmin and \
             numpy.argmin)",
        ),
        (ARG_NAN_FIRST, &["torch", "numpy"]),
        NAN_INPUTS,
    ),
    rule(
        (Primitive::ArgReduce, &raw::arg_reduce::CONTRACTS[0]),
        (
            "argmax.f32.nan_ignored",
            "argmax, NaN ignored: index[0] = the lowest i with in[i] = the maximum of the values that are not \
             NaN (f32 in, ±inf ordinary values, -0.0 ties 0.0, never NaN only; one int64 out; as \
             numpy.nanargmax)",
        ),
        (ARG_NAN_IGNORED, &[]),
        NAN_INPUTS,
    ),
    rule(
        (Primitive::ArgReduce, &raw::arg_reduce::CONTRACTS[1]),
        (
            "argmin.f32.nan_ignored",
            "argmin, NaN ignored: index[0] = the lowest i with in[i] = the minimum of the values that are not \
             NaN (f32 in, ±inf ordinary values, -0.0 ties 0.0, never NaN only; one int64 out; as \
             numpy.nanargmin)",
        ),
        (ARG_NAN_IGNORED, &[]),
        NAN_INPUTS,
    ),
];

/// The named rule whose contract is `contract` (None: a registry contract).
pub fn rule_of(contract: &Contract) -> Option<&'static NamedRule> {
    RULES.iter().find(|r| r.contract.name == contract.name && r.contract.inputs == contract.inputs)
}

/// The contract `name` of `primitive` (a registry contract, a named rule or a
/// typed contract, [`typed`]), or a message naming every valid one.
pub fn contract(primitive: Primitive, name: &str) -> Result<&'static Contract, String> {
    if let Some(rule) = RULES.iter().find(|r| r.primitive == primitive && r.contract.name == name) {
        return Ok(&rule.contract);
    }
    if let Some(row) = rows::contract_named(primitive, name) {
        return row;
    }
    if let Some(parts) = typed::Parts::parse(primitive, name) {
        return parts.and_then(|parts| resolved(primitive, parts));
    }
    raw::contract(primitive, name).map_err(|message| {
        let rules: Vec<&str> = RULES.iter().filter(|r| r.primitive == primitive).map(|r| r.contract.name).collect();
        let message =
            if rules.is_empty() { message } else { format!("{message}; or a named rule: {}", rules.join(", ")) };
        match typed::example(primitive) {
            Some(example) => format!("{message}; or a typed contract such as {example} (op, dtype_in, dtype_out, ...)"),
            None => message,
        }
    })
}

/// The contract of typed `parts`: the registry contract (or named rule) they
/// name where they name one (`sum.i32.i64` is `sum.i32`), else the typed contract.
fn resolved(primitive: Primitive, parts: typed::Parts) -> Result<&'static Contract, String> {
    match parts.registry_name() {
        Some(registry) => contract(primitive, &registry),
        None => Ok(typed::contract_of(parts)),
    }
}

/// The contract a manifest or `primlab.check` names: `name` alone, or a typed
/// contract composed from `request` (its kind from `name`), then as
/// `framework` states it ([`contract_for`]).
pub fn contract_requested(
    primitive: Primitive,
    name: Option<&str>,
    request: Option<&typed::Request>,
    framework: Option<&str>,
) -> Result<(&'static Contract, Option<String>), String> {
    match (name, request) {
        (Some(name), Some(_)) if name.contains('.') => Err(format!(
            "contract '{name}' is a whole contract name: with op, dtype_in, ... give only its kind (inclusive, \
             exclusive, argmax, argmin, flagged, positive, rows, strided_rows, even, layernorm, rmsnorm, cross_entropy), or \
             the name alone"
        )),
        (_, Some(request)) => {
            let kind = name.map(str::to_string).or_else(|| request.kind.clone());
            if let Some(row) = rows::kind_named(kind.as_deref()) {
                let contract = rows::within(primitive, rows::parts::RowParts::compose(row, request)?)?;
                return contract_for(primitive, contract.name, framework);
            }
            let request = typed::Request { kind, ..request.clone() };
            let contract = resolved(primitive, typed::Parts::compose(primitive, &request)?)?;
            contract_for(primitive, contract.name, framework)
        }
        (Some(name), None) => contract_for(primitive, name, framework),
        (None, None) => Err(format!(
            "name the contract of primitive {primitive} (contract = ...), or a typed one by op and dtype_in"
        )),
    }
}

/// The contract `name` of `primitive` as `framework` states it: the named
/// rule over `name` that the framework follows, else `name` itself when no
/// named rule over it is the framework's (primlab knows of no difference
/// there; the note says so). Without a framework, [`contract`].
pub fn contract_for(
    primitive: Primitive,
    name: &str,
    framework: Option<&str>,
) -> Result<(&'static Contract, Option<String>), String> {
    let Some(framework) = framework else { return contract(primitive, name).map(|c| (c, None)) };
    if !FRAMEWORKS.contains(&framework) {
        return Err(format!("unknown framework '{framework}': choose from {}", FRAMEWORKS.join(", ")));
    }
    let base = contract(primitive, name)?;
    if let Some(theirs) = rows::framework_rule(base, framework).or_else(|| typed::framework_rule(base, framework)) {
        return Ok((theirs, Some(format!("{framework}'s rule over {name}: {}", theirs.name))));
    }
    if rule_of(base).is_some() {
        return Err(format!("{name} is a named rule already; give its base contract with a framework, or it alone"));
    }
    let theirs = RULES.iter().find(|r| r.primitive == primitive && r.base == name && r.frameworks.contains(&framework));
    Ok(match theirs {
        Some(rule) => (&rule.contract, Some(format!("{framework}'s rule over {name}: {}", rule.contract.name))),
        None => (base, Some(format!("{framework}: no named rule over {name} differs from it; checked against {name}"))),
    })
}

/// The cases a user's kernel of `contract` gets: the registry catalogue and
/// the edge families ([`edge_families::with_catalogue`]); for a named rule,
/// those with each answer adjusted to the rule, then the rule's own families.
pub fn with_catalogue(plan: &SweepPlan, primitive: Primitive, contract: &Contract, label: &str) -> Vec<RawSpec> {
    if let Some(row) = rows::of(contract) {
        return rows::catalogue::cases(plan, row.parts, &row.contract, label);
    }
    if let Some(typed) = typed::of(contract) {
        return typed::catalogue::cases(plan, typed.parts, &typed.contract, label);
    }
    let specs = edge_families::with_catalogue(plan, primitive, contract, label);
    let Some(rule) = rule_of(contract) else { return specs };
    let adjust = rule.adjust;
    let mut out: Vec<RawSpec> = specs
        .into_iter()
        .map(|spec| {
            let make = spec.make;
            RawSpec::new(spec.id, move || {
                let mut case = make()?;
                adjust(&mut case);
                Ok(case)
            })
        })
        .collect();
    (rule.families)(plan, contract, label, &mut out);
    out
}

/// The verdict on `got` for `case` of `contract`: a named rule first checks
/// and maps what it defines apart, then the base's comparison decides. A
/// failure of a registry contract that one of its named rules would pass
/// says so, naming that rule.
pub fn compare(contract: &Contract, case: &RawCase, got: &[Array]) -> Verdict {
    if let Some(row) = rows::of(contract) {
        return rows::compare::compare(row, case, got);
    }
    if let Some(typed) = typed::of(contract) {
        return typed::compare::compare(typed, case, got);
    }
    if let Some(rule) = rule_of(contract) {
        let mut mapped = got.to_vec();
        if let Err(failure) = (rule.accept)(case, &mut mapped) {
            return failure;
        }
        return contract.compare(case, &mapped);
    }
    match contract.compare(case, got) {
        Verdict::Fail(mut m) => {
            if let Some(rule) = passing_rule(contract, case, got) {
                m.what = format!("{} (would pass under {}: {})", m.what, rule.contract.name, rule.statement);
            }
            Verdict::Fail(m)
        }
        other => other,
    }
}

/// The summary lines under a failed comparison of `got` for `case`: a typed
/// contract's own, else the registry rule's ([`mismatch`]).
pub fn mismatch_lines(contract: &Contract, case: &RawCase, got: &[Array]) -> Vec<String> {
    match (rows::of(contract), typed::of(contract)) {
        (Some(row), _) => rows::compare::summary_lines(row, case, got),
        (None, Some(typed)) => typed::compare::summary_lines(typed, case, got),
        (None, None) => mismatch::lines(&mismatch::summarize(contract, case, got)),
    }
}

thread_local! {
    /// The summary of the first failed comparison of a typed contract's case
    /// in flight (registry contracts record theirs in [`mismatch`]).
    static TYPED_DETAIL: std::cell::RefCell<Option<Vec<String>>> = const { std::cell::RefCell::new(None) };
}

/// Records the summary of a failed comparison for the case in flight, unless one is recorded.
pub fn record_mismatch(contract: &Contract, case: &RawCase, got: &[Array]) {
    if rows::of(contract).is_none() && typed::of(contract).is_none() {
        return mismatch::record(contract, case, got);
    }
    TYPED_DETAIL.with(|first| {
        let mut first = first.borrow_mut();
        if first.is_none() {
            *first = Some(mismatch_lines(contract, case, got));
        }
    });
}

/// Takes the worst error a typed float sum or a row contract's output of the
/// case in flight reached against its bound (its ratio, and a line saying
/// where), and clears it.
pub fn take_accuracy() -> Option<(f64, String)> {
    typed::compare::take_worst()
}

/// The comparison of `contract` in words: a row contract's or a typed contract's own, else the rule's.
pub fn rule_words(contract: &Contract) -> &'static str {
    rows::of(contract).map(|r| r.rule_words).unwrap_or_else(|| typed::rule_words(contract))
}

/// The short tolerance name of `contract` (`index.json`).
pub fn tolerance_name(contract: &Contract) -> &'static str {
    if rows::of(contract).is_some() {
        return "row_tolerance";
    }
    typed::tolerance_name(contract)
}

/// Takes the recorded summary of the case in flight (and clears it).
pub fn take_detail() -> Vec<String> {
    let mut lines = mismatch::take();
    lines.extend(TYPED_DETAIL.with(|first| first.borrow_mut().take()).unwrap_or_default());
    lines
}

/// The input sizes the cases of `primitive`'s `contract` have for the plan
/// sizes `sizes`: the sizes a manifest's geometry must fit.
pub fn case_sizes(primitive: Primitive, contract: &Contract, sizes: &[usize]) -> Vec<usize> {
    if typed::of(contract).is_none() && rows::of(contract).is_none() {
        return raw::case_sizes(primitive, contract, sizes);
    }
    let plan = SweepPlan::of_primitive(primitive, sizes, 0);
    let mut all: Vec<usize> = with_catalogue(&plan, primitive, contract, "sizes").iter().map(|s| s.id.n).collect();
    all.sort_unstable();
    all.dedup();
    all
}

/// The largest case (input elements) whose failure is tried under the named
/// rules: each try copies the case, and past 2^31 items a copy of the inputs
/// is gigabytes of host memory that a check running beside others may not
/// have. Larger failures are reported without the hint.
const HINT_MAX_ELEMENTS: usize = 1 << 24;

/// The first named rule over `contract` under which `got` passes `case`.
fn passing_rule(contract: &Contract, case: &RawCase, got: &[Array]) -> Option<&'static NamedRule> {
    if case.inputs.iter().map(Array::count).sum::<usize>() > HINT_MAX_ELEMENTS {
        return None;
    }
    RULES.iter().filter(|r| r.base == contract.name && r.contract.inputs == contract.inputs).find(|r| {
        let mut adjusted = case.clone();
        (r.adjust)(&mut adjusted);
        let mut mapped = got.to_vec();
        (r.accept)(&adjusted, &mut mapped).is_ok() && r.contract.compare(&adjusted, &mapped).passed()
    })
}

// ---- the histogram's last bin ---------------------------------------------------------------

/// Adds the samples equal to `upper` (parameter 2) to the last bin of the
/// expected counts: the base counts `[lower, upper)`, the rule `[lower, upper]`.
fn close_last_bin(case: &mut RawCase) {
    let at_upper = match (case.inputs.first(), case.params.get(2)) {
        (Some(Array::Int32(x)), Some(Value::Int32(upper))) => x.iter().filter(|&&v| v == *upper).count(),
        (Some(Array::Float32(x)), Some(Value::Float32(upper))) => x.iter().filter(|&&v| v == *upper).count(),
        _ => 0,
    };
    if let Some(Array::Int32(counts)) = case.expected.first_mut() {
        if let Some(last) = counts.last_mut() {
            *last += at_upper as i32;
        }
    }
}

/// A histogram's bins, lower and upper for the rule's own cases.
const EDGE_BINS: i32 = 7;
const EDGE_LOWER: i32 = -3;
const EDGE_UPPER: i32 = 11;

/// At each edge size, one case whose samples sit at the range's edges (`upper`
/// a quarter of the time, `lower`, `upper - 1` and the values just outside, the
/// rest inside), expected by the model then closed ([`close_last_bin`]).
fn upper_edge_cases(plan: &SweepPlan, contract: &Contract, label: &str, out: &mut Vec<RawSpec>) {
    let float = contract.inputs[0].dtype == raw::Dtype::Float32;
    for n in edge_families::sizes(plan) {
        let seed = case_seed(plan.seed, "rule.last_bin_closed", n, usize::from(float));
        let case_id = id("histogram", variant(label, contract), n.to_string(), n, "upper_edges", seed);
        out.push(RawSpec::new(case_id, move || {
            let mut case = if float { upper_edges_f32(n, seed)? } else { upper_edges_i32(n, seed)? };
            close_last_bin(&mut case);
            Ok(case)
        }));
    }
}

/// Draws `n` samples: a quarter `upper`, a quarter from `edges`, the rest from `inside(rng)`.
fn edge_draws<T: Copy>(n: usize, seed: u64, upper: T, edges: &[T], mut inside: impl FnMut(&mut Rng) -> T) -> Vec<T> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| match rng.below(4) {
            0 => upper,
            1 => edges[rng.index(edges.len())],
            _ => inside(&mut rng),
        })
        .collect()
}

fn upper_edges_i32(n: usize, seed: u64) -> Result<RawCase, String> {
    let spec = kernels::HistogramSpec { bins: EDGE_BINS as u32, lower: EDGE_LOWER, upper: EDGE_UPPER };
    let edges = [EDGE_LOWER - 1, EDGE_LOWER, EDGE_UPPER - 1, EDGE_UPPER + 1];
    let span = (EDGE_UPPER - EDGE_LOWER) as u64;
    let x = edge_draws(n, seed, EDGE_UPPER, &edges, |rng| EDGE_LOWER + rng.below(span) as i32);
    let counts = model::histogram::histogram_even(&x, &spec).map_err(|e| e.to_string())?;
    Ok(RawCase {
        inputs: vec![Array::Int32(x)],
        params: vec![Value::Int32(EDGE_BINS), Value::Int32(EDGE_LOWER), Value::Int32(EDGE_UPPER)],
        expected: vec![Array::Int32(counts.into_iter().map(|c| c as i32).collect())],
    })
}

fn upper_edges_f32(n: usize, seed: u64) -> Result<RawCase, String> {
    let spec = kernels::HistogramSpec { bins: 100, lower: -0.5f32, upper: 0.5f32 };
    let below = f32::from_bits(spec.upper.to_bits() - 1);
    let edges = [spec.lower, below, f32::from_bits(spec.upper.to_bits() + 1), f32::from_bits((-0.5f32).to_bits() + 1)];
    let inside = uniform_f32(n, seed ^ 0x5eed);
    let x = {
        let mut k = 0usize;
        edge_draws(n, seed, spec.upper, &edges, |_| {
            k += 1;
            inside[k - 1] * 0.5
        })
    };
    let counts = model::histogram::histogram_even(&x, &spec).map_err(|e| e.to_string())?;
    Ok(RawCase {
        inputs: vec![Array::Float32(x)],
        params: vec![
            Value::Int32(spec.bins as i32),
            Value::Float32(spec.lower),
            Value::Float32(spec.upper),
            Value::Float32(model::histogram::f32_scale(&spec)),
        ],
        expected: vec![Array::Int32(counts.into_iter().map(|c| c as i32).collect())],
    })
}

// ---- the softmax's all-masked rows ----------------------------------------------------------

/// The all-masked rows of `case` (every logit `-inf`), by its `rows` and `cols` parameters.
fn all_masked_rows(case: &RawCase) -> Vec<usize> {
    let (Some(Array::Float32(x)), Some(rows), Some(cols)) = (
        case.inputs.first(),
        case.params.first().and_then(|v| v.as_int()),
        case.params.get(1).and_then(|v| v.as_int()),
    ) else {
        return Vec::new();
    };
    let cols = cols.max(0) as usize;
    (0..rows.max(0) as usize)
        .filter(|&r| {
            cols > 0 && x.get(r * cols..(r + 1) * cols).is_some_and(|row| row.iter().all(|&v| v == f32::NEG_INFINITY))
        })
        .collect()
}

/// Every element of an all-masked row must be NaN; each is then read as the
/// base's 0, so the base comparison judges the other rows.
fn all_masked_rows_nan(case: &RawCase, got: &mut [Array]) -> Result<(), Verdict> {
    let cols = case.params.get(1).and_then(|v| v.as_int()).unwrap_or(0).max(0) as usize;
    let Some(Array::Float32(out)) = got.first_mut() else { return Ok(()) };
    for r in all_masked_rows(case) {
        for i in r * cols..((r + 1) * cols).min(out.len()) {
            if !out[i].is_nan() {
                return Err(Verdict::fail_at(
                    i,
                    "NaN",
                    format!("{:e}", out[i]),
                    &format!("softmax of all-masked row {r} (rule all_masked_nan: {SOFTMAX_NAN})"),
                ));
            }
            out[i] = 0.0;
        }
    }
    Ok(())
}

// ---- arg reduction with NaN and infinities --------------------------------------------------

/// The index an arg-reduce NaN rule gives. `nan_first`: the first NaN if
/// any; else (and always when NaN is ignored) the lowest index of the
/// maximum (or minimum) of the values that are not NaN, `-0.0` equal to
/// `0.0`, ±inf ordinary values. None when no value is left.
pub fn nan_rule_index(x: &[f32], max: bool, nan_first: bool) -> Option<usize> {
    if nan_first {
        if let Some(i) = x.iter().position(|v| v.is_nan()) {
            return Some(i);
        }
    }
    let mut best: Option<usize> = None;
    for (i, &v) in x.iter().enumerate().filter(|(_, v)| !v.is_nan()) {
        let better = best.is_none_or(|b| if max { v > x[b] } else { v < x[b] });
        if better {
            best = Some(i);
        }
    }
    best
}

/// The rule's families: (name, data from n and seed).
const NAN_FAMILIES: [FloatFamily; 3] =
    [("nan_late", nan_late), ("nan_first_element", nan_first_element), ("infinities", infinities)];

/// Uniform values with NaN at a seeded position in the second half and at the end.
fn nan_late(n: usize, seed: u64) -> Vec<f32> {
    let mut x = uniform_f32(n, seed);
    let mut rng = Rng::new(seed ^ 0x004e_414e);
    let at = n / 2 + rng.index(n - n / 2);
    x[at] = f32::NAN;
    x[n - 1] = f32::NAN;
    x
}

/// NaN at element 0, ±inf after it.
fn nan_first_element(n: usize, seed: u64) -> Vec<f32> {
    let mut x = uniform_f32(n, seed);
    x[0] = f32::NAN;
    if n > 2 {
        x[1] = f32::INFINITY;
        x[n - 1] = f32::NEG_INFINITY;
    }
    x
}

/// ±inf at seeded positions, each twice (the lower index wins), no NaN.
fn infinities(n: usize, seed: u64) -> Vec<f32> {
    let mut x = uniform_f32(n, seed);
    let mut rng = Rng::new(seed ^ 0x0049_4e46);
    for v in [f32::INFINITY, f32::NEG_INFINITY, f32::INFINITY, f32::NEG_INFINITY] {
        let at = rng.index(n);
        x[at] = v;
    }
    x
}

/// At each edge size, one case per family of [`NAN_FAMILIES`], expected by
/// [`nan_rule_index`]. Under the NaN-ignored rule an input that came out NaN
/// only (n = 1) gets a 0.0 at its end: that rule defines no index for it.
fn nan_and_infinity_cases(plan: &SweepPlan, contract: &Contract, label: &str, out: &mut Vec<RawSpec>) {
    let max = !contract.name.starts_with("argmin");
    let nan_first = contract.name.ends_with(".nan_first");
    for n in edge_families::sizes(plan) {
        for (f, &(family, make)) in NAN_FAMILIES.iter().enumerate() {
            let seed = case_seed(plan.seed, "rule.nan_first", n, f);
            let case_id = id("arg_reduce", variant(label, contract), n.to_string(), n, family, seed);
            out.push(RawSpec::new(case_id, move || {
                let mut x = make(n, seed);
                if !nan_first && x.iter().all(|v| v.is_nan()) {
                    x[n - 1] = 0.0;
                }
                let index = nan_rule_index(&x, max, nan_first).ok_or("an empty input has no index")? as i64;
                Ok(RawCase::new(vec![Array::Float32(x)], vec![Array::Int64(vec![index])]))
            }));
        }
    }
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
