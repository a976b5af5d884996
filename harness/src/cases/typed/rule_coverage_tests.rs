//! Every stated rule is exercised: for every typed contract (each shape over
//! each type it takes, with each NaN rule and option), each edge-value class
//! its rule says something about ([`edges::rules`]) is held by the input of
//! some case of its catalogue, and each class its rule keeps out of the
//! inputs is held by none. The classes come from the rule's own data, so a
//! family dropped from a contract (NaN from compaction, say) fails here.

use super::edges::{self, Class};
use super::families::{float_values, int_values};
use super::parts::{is_float, Parts, Request, Shape};
use super::{contract_of, of, Typed};
use crate::cases::rules;
use crate::registry::Primitive;
use crate::sweep::raw::{Array, Dtype, RawCase, Value};
use crate::sweep::SweepPlan;
use std::collections::HashSet;

/// The plan sizes walked (a segmented plan's families take turns over its
/// shapes from size to size: five sizes give each family a turn past 33
/// items), and the largest case kept (the long segment and wide softmax rows are left out).
const SIZES: [usize; 5] = [1, 33, 257, 1000, 4099];
const LARGEST: usize = 5000;
const SEED: u64 = 0xc0_7e5e;

const TYPES: [&str; 7] = ["int32", "int64", "uint32", "bfloat16", "float16", "float32", "float64"];
const OPTIONS: [Option<&str>; 6] = [
    None,
    Some("nan_first"),
    Some("nan_ignored"),
    Some("nan_propagate"),
    Some("last_bin_closed"),
    Some("all_masked_nan"),
];

/// The (kind, op) pairs of `primitive`'s typed contracts.
fn kinds(primitive: Primitive) -> Vec<(Option<&'static str>, Option<&'static str>)> {
    let ops = [Some("sum"), Some("min"), Some("max")];
    match primitive {
        Primitive::Reduce | Primitive::SegmentedReduce => ops.map(|op| (None, op)).to_vec(),
        Primitive::Scan => ["inclusive", "exclusive"].iter().flat_map(|&k| ops.map(|op| (Some(k), op))).collect(),
        Primitive::ArgReduce => vec![(Some("argmax"), None), (Some("argmin"), None)],
        Primitive::Compact => vec![(Some("flagged"), None), (Some("positive"), None)],
        Primitive::Histogram => vec![(Some("even"), None)],
        Primitive::Softmax => vec![(Some("rows"), None), (Some("strided_rows"), None)],
        _ => Vec::new(),
    }
}

/// Every typed contract with its input type as output type (the default),
/// each composable NaN rule and option: those the registry does not own.
fn every_contract() -> Vec<(Primitive, &'static Typed)> {
    let primitives = [
        Primitive::Reduce,
        Primitive::Scan,
        Primitive::ArgReduce,
        Primitive::SegmentedReduce,
        Primitive::Compact,
        Primitive::Histogram,
        Primitive::Softmax,
    ];
    let mut out = Vec::new();
    for primitive in primitives {
        for (kind, op) in kinds(primitive) {
            for dtype in TYPES {
                for option in OPTIONS {
                    let request = Request {
                        kind: kind.map(str::to_string),
                        op: op.map(str::to_string),
                        dtype_in: Some(dtype.into()),
                        nan: option.map(str::to_string),
                        ..Request::default()
                    };
                    let Ok(parts) = Parts::compose(primitive, &request) else { continue };
                    if parts.registry_name().is_none() {
                        out.push((primitive, of(contract_of(parts)).expect("a typed contract")));
                    }
                }
            }
        }
    }
    out
}

/// The smallest normal magnitude of a float type.
fn smallest_normal(dtype: Dtype) -> f64 {
    match dtype {
        Dtype::Float64 => f64::MIN_POSITIVE,
        Dtype::Float16 => 2f64.powi(-14),
        _ => 2f64.powi(-126),
    }
}

fn param_f64(case: &RawCase, k: usize) -> Option<f64> {
    match case.params.get(k)? {
        Value::Int32(v) => Some(f64::from(*v)),
        Value::Int64(v) => Some(*v as f64),
        Value::Float32(v) => Some(f64::from(*v)),
        Value::Float64(v) => Some(*v),
    }
}

/// The logits of a softmax case (a strided row's padding is no logit).
fn logits(case: &RawCase) -> Vec<Vec<f64>> {
    let values = case.inputs.first().and_then(float_values).expect("float logits");
    let cols = param_f64(case, 1).expect("cols") as usize;
    let stride = param_f64(case, 2).map(|s| s as usize).unwrap_or(cols);
    values.chunks(stride.max(1)).map(|row| row[..cols.min(row.len())].to_vec()).collect()
}

/// The classes of single float values in `values` of `dtype`.
fn value_classes(values: &[f64], dtype: Dtype, found: &mut HashSet<Class>) {
    for &v in values {
        let class = if v.is_nan() {
            Class::Nan
        } else if v.is_infinite() {
            if v > 0.0 {
                Class::PosInf
            } else {
                Class::NegInf
            }
        } else if v == 0.0 {
            if v.is_sign_negative() {
                Class::NegZero
            } else {
                Class::PosZero
            }
        } else if v.abs() < smallest_normal(dtype) {
            Class::Subnormal
        } else {
            continue;
        };
        found.insert(class);
    }
}

/// Whether some fold of the case (the input, a scan's first prefix, a segment) holds NaN only.
fn nan_only_fold(parts: &Parts, case: &RawCase, values: &[f64]) -> bool {
    let all_nan = |v: &[f64]| !v.is_empty() && v.iter().all(|x| x.is_nan());
    match parts.shape {
        Shape::Scan(_) => values.first().is_some_and(|x| x.is_nan()),
        Shape::Segmented => match case.inputs.get(1) {
            Some(Array::Int64(offsets)) => offsets.windows(2).any(|w| all_nan(&values[w[0] as usize..w[1] as usize])),
            _ => false,
        },
        _ => all_nan(values),
    }
}

/// Whether an arg reduction's extremum (of the values that are not NaN) is at two indices or more.
fn tied<T: PartialOrd + Copy>(values: impl Iterator<Item = T> + Clone, max: bool) -> bool {
    let better = |a: T, b: T| if max { a > b } else { a < b };
    let Some(best) = values.clone().reduce(|a, b| if better(b, a) { b } else { a }) else { return false };
    values.filter(|&v| v == best).count() > 1
}

/// Every class the input of `case` holds.
fn classes_in(parts: &Parts, case: &RawCase) -> HashSet<Class> {
    let mut found = HashSet::new();
    if let Shape::Softmax { .. } = parts.shape {
        for row in logits(case) {
            value_classes(&row, parts.dtype_in, &mut found);
            let masked = row.iter().filter(|&&x| x == f64::NEG_INFINITY).count();
            if masked > 0 {
                found.insert(if masked == row.len() { Class::AllMaskedRow } else { Class::MaskedLogit });
            }
        }
        return found;
    }
    let input = case.inputs.first().expect("an input");
    let upper = param_f64(case, 2);
    if let Some(values) = float_values(input) {
        value_classes(&values, parts.dtype_in, &mut found);
        let numbers = values.iter().copied().filter(|v| !v.is_nan());
        let checks = [
            (Class::NanOnlyFold, nan_only_fold(parts, case, &values)),
            (Class::Tie, matches!(parts.shape, Shape::Arg { max } if tied(numbers, max))),
            (Class::UpperEdge, parts.primitive() == Primitive::Histogram && upper.is_some_and(|u| values.contains(&u))),
        ];
        found.extend(checks.into_iter().filter(|(_, held)| *held).map(|(class, _)| class));
    } else if let Some(ints) = int_values(input) {
        let upper = match case.params.get(2) {
            Some(Value::Int64(u)) => Some(*u),
            _ => None,
        };
        let checks = [
            (Class::Zero, ints.contains(&0)),
            (Class::Tie, matches!(parts.shape, Shape::Arg { max } if tied(ints.iter().copied(), max))),
            (Class::UpperEdge, parts.primitive() == Primitive::Histogram && upper.is_some_and(|u| ints.contains(&u))),
        ];
        found.extend(checks.into_iter().filter(|(_, held)| *held).map(|(class, _)| class));
    }
    found
}

/// Every class the inputs of `t`'s catalogue hold at [`SIZES`] (cases up to [`LARGEST`] elements).
fn classes_of(primitive: Primitive, t: &Typed) -> HashSet<Class> {
    let plan = SweepPlan::of_primitive(primitive, &SIZES, SEED);
    let mut found = HashSet::new();
    for spec in rules::with_catalogue(&plan, primitive, &t.contract, "coverage") {
        if spec.id.n > LARGEST {
            continue;
        }
        let case = (spec.make)().unwrap_or_else(|e| {
            panic!("{primitive} {} n={} family {} seed {:#x}: {e}", t.contract.name, spec.id.n, spec.id.family, SEED)
        });
        found.extend(classes_in(&t.parts, &case));
    }
    found
}

/// What `t`'s rule states against what its cases hold: one line per class missed or leaked.
fn coverage_gaps(primitive: Primitive, t: &Typed) -> Vec<String> {
    let found = classes_of(primitive, t);
    let mut gaps = Vec::new();
    for rule in edges::rules(&t.parts) {
        for &class in rule.classes {
            let what = match (rule.held, found.contains(&class)) {
                (true, false) => "states what it gives but no case's input holds it",
                (false, true) => "states no case holds it but one does",
                _ => continue,
            };
            gaps.push(format!(
                "{primitive} {}: {} {what} ({}; sizes {SIZES:?}, seed {SEED:#x})",
                t.contract.name,
                class.name(),
                rule.gives
            ));
        }
    }
    gaps
}

#[test]
fn every_class_a_typed_rule_states_is_held_by_some_case_and_every_excluded_class_by_none() {
    let contracts = every_contract();
    assert!(contracts.len() > 150, "the walk found only {} typed contracts", contracts.len());
    let gaps: Vec<String> = contracts.iter().flat_map(|&(primitive, t)| coverage_gaps(primitive, t)).collect();
    assert!(gaps.is_empty(), "{} rule statements not exercised:\n{}", gaps.len(), gaps.join("\n"));
}

/// Every float contract (softmax aside: its logits are the registry's row
/// blocks, masked -inf its only edge) states what NaN, ±inf and ±0.0 give,
/// or that no case holds them; its summary says so.
#[test]
fn every_float_contract_states_nan_infinities_and_signed_zeros() {
    let named = [Class::Nan, Class::PosInf, Class::NegInf, Class::NegZero, Class::PosZero];
    for (_, t) in every_contract() {
        if !is_float(t.parts.dtype_in) || matches!(t.parts.shape, Shape::Softmax { .. }) {
            continue;
        }
        let stated: HashSet<Class> = edges::rules(&t.parts).iter().flat_map(|r| r.classes.iter().copied()).collect();
        for class in named {
            assert!(stated.contains(&class), "{} states nothing of {}", t.contract.name, class.name());
        }
        assert!(t.contract.summary.contains("edge values: NaN: "), "{}: {}", t.contract.name, t.contract.summary);
    }
}

/// The walk bites: the same contract with a family left out misses a class.
#[test]
fn a_compaction_without_its_nan_family_would_miss_nan() {
    let t = of(rules::contract(Primitive::Compact, "positive.f16").expect("typed")).expect("typed");
    assert!(coverage_gaps(Primitive::Compact, t).is_empty());
    let plan = SweepPlan::of_primitive(Primitive::Compact, &SIZES, SEED);
    let without_nan: HashSet<Class> = rules::with_catalogue(&plan, Primitive::Compact, &t.contract, "coverage")
        .iter()
        .filter(|s| s.id.family != "nan_mixed")
        .flat_map(|s| classes_in(&t.parts, &(s.make)().expect("made")))
        .collect();
    assert!(!without_nan.contains(&Class::Nan), "only nan_mixed holds NaN among positive.f16's families");
}
