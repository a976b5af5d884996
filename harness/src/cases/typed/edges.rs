//! The edge values each typed contract's rule names, and what each gives:
//! the data its summary states them from, and what the rule-coverage test
//! walks (every class a rule says something about is held by some case's
//! input; every class a rule keeps out of its inputs is held by none).
//!
//! | contract | NaN | ±inf | ±0.0 |
//! | --- | --- | --- | --- |
//! | float sums | no case holds it | no case holds them | ordinary terms; a zero sum's sign is free |
//! | float min, max | no case holds it; `.nan_propagate`: a NaN in the fold gives NaN; `.nan_ignored`: ignored (a fold of NaN only: NaN, or the identity) | ordinary values (the identities) | equal: either sign passes |
//! | float arg reductions | no case holds it; `.nan_first`: the first NaN wins; `.nan_ignored`: ignored | no case holds them; with a NaN rule ordinary | -0.0 ties +0.0, the lowest index wins |
//! | `positive.<float>` | not > 0: dropped | +inf kept, -inf dropped | not > 0: dropped |
//! | `flagged.<float>` | moved bit for bit (sign and payload) | moved | moved bit for bit |
//! | float histograms | counted nowhere | outside the bounds: counted nowhere | one sample value, in the bin of 0.0 |
//! | softmax | no logit is NaN | -inf is a masked logit (0); no logit is +inf | (the registry's row blocks) |

use super::parts::{is_float, NanRule, Op, Parts, Shape};

/// A class of input values (or of inputs) a contract's rule says what it gives.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// A NaN of either sign, any payload.
    Nan,
    /// A fold (a reduce's input, a scan's prefix, a segment) of NaN only.
    NanOnlyFold,
    /// +inf.
    PosInf,
    /// -inf.
    NegInf,
    /// -0.0.
    NegZero,
    /// +0.0.
    PosZero,
    /// An integer 0.
    Zero,
    /// A subnormal (nonzero) value of the input type.
    Subnormal,
    /// The extremum an arg reduction looks for, at two indices or more.
    Tie,
    /// A sample equal to the histogram's `upper` bound.
    UpperEdge,
    /// A masked softmax logit (-inf) in a row with unmasked ones.
    MaskedLogit,
    /// A softmax row whose every logit is masked.
    AllMaskedRow,
}

impl Class {
    /// The class in words (`NaN`, `+inf`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Class::Nan => "NaN",
            Class::NanOnlyFold => "a fold of NaN only",
            Class::PosInf => "+inf",
            Class::NegInf => "-inf",
            Class::NegZero => "-0.0",
            Class::PosZero => "+0.0",
            Class::Zero => "0",
            Class::Subnormal => "subnormals",
            Class::Tie => "ties",
            Class::UpperEdge => "a sample equal to upper",
            Class::MaskedLogit => "a masked logit (-inf)",
            Class::AllMaskedRow => "an all-masked row",
        }
    }
}

/// One statement of a rule: what the values of `classes` give, or that no
/// case's input holds them.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeRule {
    /// The classes it speaks of.
    pub classes: &'static [Class],
    /// Whether some case's input holds each class (else none does: the inputs exclude it).
    pub held: bool,
    /// What they give, in words.
    pub gives: String,
}

fn gives(classes: &'static [Class], gives: impl Into<String>) -> EdgeRule {
    EdgeRule { classes, held: true, gives: gives.into() }
}

fn excluded(classes: &'static [Class], why: impl Into<String>) -> EdgeRule {
    EdgeRule { classes, held: false, gives: why.into() }
}

const ZEROS: &[Class] = &[Class::NegZero, Class::PosZero];
const INFINITIES: &[Class] = &[Class::PosInf, Class::NegInf];
const NAN: &[Class] = &[Class::Nan];

/// Every statement of `parts`' rule about edge values (none for integer
/// contracts but ties, zero and the upper bin edge).
pub fn rules(parts: &Parts) -> Vec<EdgeRule> {
    match parts.shape {
        Shape::Reduce | Shape::Scan(_) | Shape::Segmented if parts.float_sum() => sum_rules(),
        Shape::Reduce | Shape::Scan(_) | Shape::Segmented if is_float(parts.dtype_in) => extremum_rules(parts),
        Shape::Arg { max } => arg_rules(parts, max),
        Shape::Compact { flagged } => compact_rules(parts, flagged),
        Shape::Histogram { closed } => histogram_rules(parts, closed),
        Shape::Softmax { masked_nan, .. } => softmax_rules(masked_nan),
        _ => Vec::new(),
    }
}

fn sum_rules() -> Vec<EdgeRule> {
    vec![
        excluded(NAN, "no case holds it (inputs finite; a NaN output fails)"),
        excluded(INFINITIES, "no case holds them (inputs finite; an infinite output fails)"),
        gives(ZEROS, "ordinary terms (a sum that is exactly zero may have either sign)"),
        gives(&[Class::Subnormal], "exact terms, held to the bound like any other"),
    ]
}

fn extremum_rules(parts: &Parts) -> Vec<EdgeRule> {
    let (identity, fold) = match parts.op {
        Op::Min => ("+inf", "fminf"),
        _ => ("-inf", "fmaxf"),
    };
    let scan = matches!(parts.shape, Shape::Scan(_));
    let mut rules = match parts.nan {
        NanRule::NanPropagate => vec![gives(
            NAN,
            format!(
                "nan_propagate: a NaN in the fold gives NaN{} (torch.amax, torch.cummax, numpy.max, \
                 numpy.maximum.accumulate); any quiet NaN passes where NaN is expected (sign and payload free), a \
                 number or a signalling NaN (the unwritten poison) never does",
                if scan { ", so every prefix from the first NaN on is NaN" } else { "" }
            ),
        )],
        NanRule::NanIgnored => vec![
            gives(
                NAN,
                format!(
                    "nan_ignored: NaN is ignored, the fold is that of the other values ({fold}, numpy.nanmax, \
                     numpy.fmax.reduce)"
                ),
            ),
            gives(
                &[Class::NanOnlyFold],
                format!("gives NaN, or the identity {identity} where the fold starts from it: either passes"),
            ),
        ],
        _ => vec![excluded(NAN, "no case holds it (name nan_propagate or nan_ignored to check NaN)")],
    };
    rules.push(gives(INFINITIES, format!("ordinary values (the identity of an empty fold is {identity})")));
    rules.push(gives(ZEROS, "equal: where the extremum is a zero either sign passes"));
    rules.push(gives(&[Class::Subnormal], "ordinary values, compared exactly (a flushed one fails)"));
    rules
}

fn arg_rules(parts: &Parts, max: bool) -> Vec<EdgeRule> {
    let tie = gives(&[Class::Tie], format!("the lowest index of the {}", if max { "maximum" } else { "minimum" }));
    if !is_float(parts.dtype_in) {
        return vec![tie];
    }
    let mut rules = match parts.nan {
        NanRule::NanFirst => vec![
            gives(NAN, "nan_first: the index of the first NaN wins (torch.argmax, numpy.argmax)"),
            gives(INFINITIES, "ordinary values"),
        ],
        NanRule::NanIgnored => vec![
            gives(
                NAN,
                "nan_ignored: ignored, the index among the other values; no input is NaN only (numpy.nanargmax)",
            ),
            gives(INFINITIES, "ordinary values"),
        ],
        _ => vec![
            excluded(NAN, "no case holds it (name nan_first or nan_ignored to check NaN)"),
            excluded(INFINITIES, "no case holds them (inputs finite)"),
        ],
    };
    rules.push(gives(ZEROS, "-0.0 ties +0.0: the lower index wins"));
    rules.push(gives(&[Class::Subnormal], "ordinary values"));
    rules.push(tie);
    rules
}

fn compact_rules(parts: &Parts, flagged: bool) -> Vec<EdgeRule> {
    match (flagged, is_float(parts.dtype_in)) {
        (false, false) => vec![gives(&[Class::Zero], "not > 0: dropped")],
        (true, false) => Vec::new(),
        (false, true) => vec![
            gives(NAN, "not > 0: dropped"),
            gives(ZEROS, "not > 0: dropped"),
            gives(&[Class::PosInf], "> 0: kept"),
            gives(&[Class::NegInf], "not > 0: dropped"),
            gives(&[Class::Subnormal], "the positive ones are > 0: kept, bit for bit (never flushed)"),
        ],
        (true, true) => vec![
            gives(NAN, "moved bit for bit where flagged (sign and payload kept)"),
            gives(ZEROS, "moved bit for bit (-0.0 stays -0.0)"),
            gives(INFINITIES, "moved bit for bit"),
            gives(&[Class::Subnormal], "moved bit for bit (never flushed)"),
        ],
    }
}

fn histogram_rules(parts: &Parts, closed: bool) -> Vec<EdgeRule> {
    let upper = gives(
        &[Class::UpperEdge],
        if closed { "counted in the last bin (last_bin_closed)" } else { "out of range: counted nowhere" },
    );
    if !is_float(parts.dtype_in) {
        return vec![upper];
    }
    vec![
        gives(NAN, "counted nowhere"),
        gives(INFINITIES, "outside [lower, upper] (the bounds are finite): counted nowhere"),
        gives(ZEROS, "one sample value: both in the bin the formula gives 0.0"),
        upper,
    ]
}

fn softmax_rules(masked_nan: bool) -> Vec<EdgeRule> {
    vec![
        gives(&[Class::MaskedLogit], "probability exactly 0"),
        gives(&[Class::AllMaskedRow], if masked_nan { "all NaN (all_masked_nan)" } else { "all 0" }),
        excluded(&[Class::Nan, Class::PosInf], "no logit is NaN or +inf"),
    ]
}

/// The rule's statements in words: `NaN: ...; +inf, -inf: ...`.
pub fn words(parts: &Parts) -> String {
    let statements: Vec<String> = rules(parts)
        .iter()
        .map(|r| {
            let names: Vec<&str> = r.classes.iter().map(|c| c.name()).collect();
            format!("{}: {}", names.join(", "), r.gives)
        })
        .collect();
    statements.join("; ")
}

/// What `parts`' rule says NaN gives, when it says it (for failure lines).
pub fn nan_words(parts: &Parts) -> Option<String> {
    rules(parts).into_iter().find(|r| r.held && r.classes.contains(&Class::Nan)).map(|r| r.gives)
}
