//! The contracts whose cases stream, and how each makes a case a piece at a
//! time: its inputs from the raw catalogue's own generators, in pieces, and
//! its model as a piece fold ([`model::pieces`]). A case is found by its id
//! (the family and seed the catalogue gave it), so the streamed case is the
//! very case the catalogue would have made whole; the tests prove the two
//! equal for every family the catalogue holds.

use super::folds::PieceModel;
use super::folds::{bins_model, f32s, int32s, model_error, Bins, CarriedScans, ClosedLastBin, Fold, Independent};
use super::generators;
use crate::cases::rules::RULES;
use crate::registry::Primitive;
use crate::sweep::case::CaseId;
use crate::sweep::gpu::histogram::{int_shapes, F32_SPEC};
use crate::sweep::raw::{self, Array, Contract, Value};
use crate::sweep::SweepPlan;
use kernels::HistogramSpec;
use model::exact::BinnedAccumulator;
use model::generators::{int_pieces, DataFamily};
use model::pieces::{
    compact_piece, histogram_piece_f32, histogram_piece_i32, ArgsF32, SegmentsI32, SumI32, SumScansI32,
};
use std::sync::Arc;

/// The pieces of one input of a case, in order.
pub type Pieces = Box<dyn Iterator<Item = Array> + Send>;

/// One input of a case.
pub enum Input {
    /// An input of n items, made a piece at a time (the k-th pieces of all
    /// such inputs have one length; each is made on its own, so the
    /// uploader makes them side by side).
    Pieces(Pieces),
    /// An input held whole: a segmented reduction's offsets, one per segment.
    Whole(Array),
}

/// Every input of a case, in the contract's input order.
pub type InputPieces = Vec<Input>;

type MakeInputs = dyn Fn(usize) -> Result<InputPieces, String> + Send + Sync;
type MakeModel = dyn Fn() -> Box<dyn PieceModel> + Send + Sync;

/// A case made and judged a piece at a time.
#[derive(Clone)]
pub struct StreamedCase {
    /// Input elements.
    pub n: usize,
    /// Elements of each input buffer, in the contract's order (n for an
    /// input made in pieces, the length of one held whole).
    pub input_elements: Vec<usize>,
    /// Parameter values, in the contract's order.
    pub params: Vec<Value>,
    /// Elements of each output buffer, in the contract's order (n for a
    /// per-item output, 1 for a scalar, the bins of a histogram).
    pub output_elements: Vec<usize>,
    /// Why the contract's outputs cannot hold this case's answer (a count past
    /// its int32 counts), known before any input is made; None when they can.
    /// Such a case is outside the contract: `check` leaves it out of its plan,
    /// said so, and its inputs are refused if asked for.
    pub unheld: Option<String>,
    inputs: Arc<MakeInputs>,
    model: Arc<MakeModel>,
}

impl StreamedCase {
    /// The inputs, each in pieces of `piece` items (the last may be shorter).
    /// Error: the generator refused (a family it does not make).
    pub fn inputs(&self, piece: usize) -> Result<InputPieces, String> {
        (self.inputs)(piece.max(1))
    }

    /// A fresh fold of the model.
    pub fn model(&self) -> Box<dyn PieceModel> {
        (self.model)()
    }
}

/// How a streamed contract makes the case of an id (`None`: a family it does not make).
type Maker = fn(&Contract, &CaseId) -> Option<StreamedCase>;

/// The streamed contracts, each with its maker: the registry's, and the
/// named rules whose base streams and whose answer folds too (the
/// histogram's closed last bin).
fn table() -> Vec<(Contract, Maker)> {
    let mut table: Vec<(Contract, Maker)> = vec![
        (raw::exact_sum::CONTRACTS[0], exact_sum),
        (raw::segmented_reduce::CONTRACTS[0], segmented),
        (raw::segmented_reduce::CONTRACTS[1], segmented),
        (raw::reduce::CONTRACTS[0], reduce_sum),
        (raw::scan::CONTRACTS[0], scan),
        (raw::scan::CONTRACTS[1], scan),
        (raw::compact::CONTRACTS[0], compaction),
        (raw::compact::CONTRACTS[1], compaction),
        (raw::histogram::CONTRACTS[0], histogram_i32),
        (raw::histogram::CONTRACTS[1], histogram_f32),
        (raw::arg_reduce::CONTRACTS[0], arg_reduce),
        (raw::arg_reduce::CONTRACTS[1], arg_reduce),
    ];
    let closed: [(&str, Maker); 2] = [
        ("even.i32.last_bin_closed", |c, id| closed(histogram_i32(c, id)?)),
        ("even.f32.last_bin_closed", |c, id| closed(histogram_f32(c, id)?)),
    ];
    for (name, make) in closed {
        table.extend(RULES.iter().filter(|r| r.contract.name == name).map(|r| (r.contract, make)));
    }
    table
}

/// The contracts whose cases stream.
#[cfg(test)]
pub fn streamed_contracts() -> Vec<Contract> {
    table().iter().map(|(c, _)| *c).collect()
}

/// Whether `contract`'s cases stream (at [`super::STREAM_FROM`] elements and more).
#[cfg(test)]
pub fn streams(contract: &Contract) -> bool {
    table().iter().any(|(c, _)| c == contract)
}

/// The case `id` of `contract` made a piece at a time, at any size, when
/// the contract streams and its maker knows the case's family.
pub fn streamed(contract: &Contract, id: &CaseId) -> Option<StreamedCase> {
    table().iter().find(|(c, _)| c == contract).and_then(|(_, make)| make(contract, id))
}

/// How many elements a per-case buffer of a case holds (offsets, bins,
/// segments), where the contract has one.
#[derive(Debug, Clone, Copy, Default)]
struct PerCase {
    inputs: usize,
    outputs: usize,
}

/// A case of `contract` at `id.n` whose per-case buffers hold `per_case` elements.
fn case(
    contract: &Contract,
    id: &CaseId,
    (params, per_case): (Vec<Value>, PerCase),
    inputs: impl Fn(usize) -> Result<InputPieces, String> + Send + Sync + 'static,
    model: impl Fn() -> Box<dyn PieceModel> + Send + Sync + 'static,
) -> StreamedCase {
    let elements = |buffers: &[raw::Buffer], per: usize| buffers.iter().map(|b| b.len.elements(id.n, per)).collect();
    StreamedCase {
        n: id.n,
        input_elements: elements(contract.inputs, per_case.inputs),
        params,
        output_elements: elements(contract.outputs, per_case.outputs),
        unheld: None,
        inputs: Arc::new(inputs),
        model: Arc::new(model),
    }
}

/// The integer family of a case id, when it is one.
fn int_family(name: &str) -> Option<DataFamily> {
    DataFamily::from_name(name).ok().filter(DataFamily::is_integer)
}

/// The int32 values of `family` at (n, seed) in pieces of `piece` items
/// (made side by side, or by the model's generator for a family made whole).
fn int_values(family: DataFamily, n: usize, seed: u64, piece: usize) -> Result<Pieces, String> {
    if let Some(pieces) = generators::int_pieces(family, n, seed, piece) {
        return Ok(Box::new(pieces.map(Array::Int32)));
    }
    let pieces = int_pieces(family, n, seed).map_err(|e| e.to_string())?.with_piece(piece);
    Ok(Box::new(pieces.map(Array::Int32)))
}

/// [`int_values`] as a case's one input.
fn int_inputs(family: DataFamily, n: usize, seed: u64, piece: usize) -> Result<InputPieces, String> {
    Ok(vec![Input::Pieces(int_values(family, n, seed, piece)?)])
}

/// The f32 values of `uniform_f32` at (n, seed) in pieces of `piece` items, as a case's one input.
fn uniform_inputs(n: usize, seed: u64, piece: usize) -> InputPieces {
    vec![Input::Pieces(Box::new(generators::uniform_f32_pieces(n, seed, piece).map(Array::Float32)))]
}

/// `reduce` `sum.i32`: the int64 sum, at the end.
fn reduce_sum(contract: &Contract, id: &CaseId) -> Option<StreamedCase> {
    let (family, n, seed) = (int_family(&id.family)?, id.n, id.seed);
    let model = move || -> Box<dyn PieceModel> {
        Box::new(Fold {
            state: SumI32::new(n),
            piece: |sum, inputs| {
                sum.piece(int32s(inputs, 0)?).map_err(model_error)?;
                Ok(vec![None])
            },
            finish: |sum| Ok(vec![Some(Array::Int64(vec![sum.value()]))]),
        })
    };
    Some(case(contract, id, (vec![], PerCase::default()), move |piece| int_inputs(family, n, seed, piece), model))
}

/// `scan` `exclusive.i32` and `inclusive.i32`: each piece's prefixes.
fn scan(contract: &Contract, id: &CaseId) -> Option<StreamedCase> {
    let (family, n, seed) = (int_family(&id.family)?, id.n, id.seed);
    let inclusive = contract.name.starts_with("inclusive");
    let model = move || -> Box<dyn PieceModel> {
        if (n as u64) < 1 << 32 {
            return Box::new(CarriedScans { inclusive, carry: 0 });
        }
        Box::new(Fold {
            state: (SumScansI32::new(n), inclusive),
            piece: |(scans, inclusive), inputs| {
                let (exclusive, inclusive_prefixes) = scans.piece(int32s(inputs, 0)?).map_err(model_error)?;
                Ok(vec![Some(Array::Int64(if *inclusive { inclusive_prefixes } else { exclusive }))])
            },
            finish: |_| Ok(vec![None]),
        })
    };
    Some(case(contract, id, (vec![], PerCase::default()), move |piece| int_inputs(family, n, seed, piece), model))
}

/// `compact` `positive.i32` and `flagged.i32`: each piece's kept items, the count at the end.
fn compaction(contract: &Contract, id: &CaseId) -> Option<StreamedCase> {
    let (family, n, seed) = (int_family(&id.family)?, id.n, id.seed);
    let flagged = contract.inputs.len() == 2;
    let inputs = move |piece: usize| -> Result<InputPieces, String> {
        let mut inputs = int_inputs(family, n, seed, piece)?;
        if flagged {
            inputs.push(Input::Pieces(Box::new(generators::compaction_flag_pieces(n, seed, piece).map(Array::Uint8))));
        }
        Ok(inputs)
    };
    let model = move || -> Box<dyn PieceModel> {
        Box::new(Independent {
            state: (flagged, 0i64),
            map: |&(flagged, _), inputs| {
                let items = int32s(inputs, 0)?;
                Ok(match (flagged, inputs.get(1)) {
                    (true, Some(Array::Uint8(flags))) => compact_piece(items, flags).map_err(model_error)?.1,
                    (true, other) => return Err(format!("the flags of a piece are {:?}", other.map(Array::dtype))),
                    (false, _) => compact_piece(items, &vec![0; items.len()]).map_err(model_error)?.0,
                })
            },
            combine: |(_, count), kept| {
                *count += kept.len() as i64;
                vec![Some(Array::Int32(kept)), None]
            },
            finish: |(_, count)| Ok(vec![None, Some(Array::Int64(vec![*count]))]),
        })
    };
    Some(case(contract, id, (vec![], PerCase::default()), inputs, model))
}

/// `histogram` `even.i32`: the bins at the end. The family is
/// `<data family>.<shape>`, the shape one of the catalogue's int32 shapes.
fn histogram_i32(contract: &Contract, id: &CaseId) -> Option<StreamedCase> {
    let (data, shape) = id.family.split_once('.')?;
    // Every shape of the catalogue (the smallest sizes visit all of them).
    let shapes = int_shapes(&SweepPlan::of_primitive(Primitive::Histogram, &[], 0), 0);
    let &(shape, family, bins, lower, upper) = shapes.iter().find(|s| s.0 == shape && s.1.name() == data)?;
    let (n, seed) = (id.n, id.seed);
    // Every skewed sample in one bin: past i32::MAX its count is past the contract's int32 counts.
    let unheld = (shape == "skewed" && n > i32::MAX as usize)
        .then(|| format!("a bin count does not fit int32: all {n} samples fall in one bin"));
    let refused = unheld.clone();
    let inputs = move |piece: usize| -> Result<InputPieces, String> {
        if let Some(why) = &refused {
            return Err(why.clone());
        }
        if shape == "skewed" {
            // Every sample in one bin, as the catalogue's skewed shape.
            let mut left = n;
            return Ok(vec![Input::Pieces(Box::new(std::iter::from_fn(move || {
                let k = piece.min(left);
                left -= k;
                (k > 0).then(|| Array::Int32(vec![3; k]))
            })))]);
        }
        int_inputs(family, n, seed, piece)
    };
    let spec = HistogramSpec { bins: bins as u32, lower, upper };
    let model = move || bins_model(Bins { spec, samples: int32s, count: histogram_piece_i32 });
    let params = vec![Value::Int32(bins as i32), Value::Int32(lower), Value::Int32(upper)];
    let made = case(contract, id, (params, PerCase { inputs: 0, outputs: bins }), inputs, model);
    Some(StreamedCase { unheld, ..made })
}

/// `histogram` `even.f32`: the catalogue's one f32 shape, uniform samples over 100 bins.
fn histogram_f32(contract: &Contract, id: &CaseId) -> Option<StreamedCase> {
    let expected_family = format!("{}.bins{}", DataFamily::UniformFloat.name(), F32_SPEC.bins);
    if id.family != expected_family {
        return None;
    }
    let (n, seed) = (id.n, id.seed);
    let inputs = move |piece: usize| -> Result<InputPieces, String> { Ok(uniform_inputs(n, seed, piece)) };
    let model = move || bins_model(Bins { spec: F32_SPEC, samples: f32s, count: histogram_piece_f32 });
    let s = F32_SPEC;
    let params = vec![
        Value::Int32(s.bins as i32),
        Value::Float32(s.lower),
        Value::Float32(s.upper),
        Value::Float32(model::histogram::f32_scale(&s)),
    ];
    Some(case(contract, id, (params, PerCase { inputs: 0, outputs: s.bins as usize }), inputs, model))
}

/// `arg_reduce` `argmax.f32` and `argmin.f32`: the index at the end. The
/// families: `uniform_float`, and `many_ties_f32` (the many-ties integers as f32).
fn arg_reduce(contract: &Contract, id: &CaseId) -> Option<StreamedCase> {
    let (n, seed) = (id.n, id.seed);
    let tied = match id.family.as_str() {
        "uniform_float" => false,
        "many_ties_f32" => true,
        _ => return None,
    };
    let inputs = move |piece: usize| -> Result<InputPieces, String> {
        if tied {
            let ints = int_values(DataFamily::ManyTies, n, seed, piece)?;
            let floats = ints.map(|p| match p {
                Array::Int32(v) => Array::Float32(v.into_iter().map(|v| v as f32).collect()),
                other => other,
            });
            return Ok(vec![Input::Pieces(Box::new(floats))]);
        }
        Ok(uniform_inputs(n, seed, piece))
    };
    let max = contract.name.starts_with("argmax");
    let model = move || -> Box<dyn PieceModel> {
        Box::new(Fold {
            state: (ArgsF32::default(), max),
            piece: |(args, _), inputs| {
                args.piece(f32s(inputs, 0)?).map_err(model_error)?;
                Ok(vec![None])
            },
            finish: |(args, max)| {
                let ((_, at_max), (_, at_min)) = args.finish().map_err(model_error)?;
                Ok(vec![Some(Array::Int64(vec![if *max { at_max } else { at_min } as i64]))])
            },
        })
    };
    Some(case(contract, id, (vec![], PerCase::default()), inputs, model))
}

/// `exact_sum` `sum.f32`, the `uniform_float` family: the correctly rounded
/// sum at the end, from the model's exact accumulator (accumulators of
/// disjoint pieces merge exactly, so pieces are added side by side).
fn exact_sum(contract: &Contract, id: &CaseId) -> Option<StreamedCase> {
    if id.family != DataFamily::UniformFloat.name() {
        return None;
    }
    let (n, seed) = (id.n, id.seed);
    let model = || -> Box<dyn PieceModel> {
        Box::new(Independent {
            state: BinnedAccumulator::new(),
            map: |_, inputs| {
                let mut part = BinnedAccumulator::new();
                f32s(inputs, 0)?.iter().for_each(|&x| part.add(x));
                Ok(part)
            },
            combine: |sum, part| {
                sum.merge(&part);
                vec![None]
            },
            finish: |sum| Ok(vec![Some(Array::Float32(vec![sum.round()]))]),
        })
    };
    Some(case(contract, id, (vec![], PerCase::default()), move |piece| Ok(uniform_inputs(n, seed, piece)), model))
}

/// `segmented_reduce` `sum.i32` and `max.i32`: the small-int values a piece
/// at a time, the offsets of the family's shape whole (one per segment: at
/// 2^31 items in segments of 1024, 16 MB), the segment sums or maxima at the end.
fn segmented(contract: &Contract, id: &CaseId) -> Option<StreamedCase> {
    use crate::sweep::gpu::segmented_reduce::{offsets, shape_name, shapes};
    let (data, name) = id.family.split_once('.')?;
    let (n, seed) = (id.n, id.seed);
    let plan = SweepPlan::of_primitive(Primitive::SegmentedReduce, &[n], seed);
    let shape = shapes(&plan, n).into_iter().find(|&shape| shape_name(shape, n) == name)?;
    if data != DataFamily::SmallInts.name() {
        return None;
    }
    let offsets = Arc::new(offsets(shape, n, seed));
    let segments = offsets.len().saturating_sub(1);
    let wide: Vec<i64> = offsets.iter().map(|&o| o as i64).collect();
    let inputs = move |piece: usize| -> Result<InputPieces, String> {
        Ok(vec![
            Input::Pieces(int_values(DataFamily::SmallInts, n, seed, piece)?),
            Input::Whole(Array::Int64(wide.clone())),
        ])
    };
    let max = contract.name.starts_with("max");
    let model = move || -> Box<dyn PieceModel> {
        Box::new(Fold {
            state: (SegmentsI32::new(&offsets, n).map_err(model_error), max),
            piece: |(fold, _), inputs| {
                let fold = fold.as_mut().map_err(|e| e.clone())?;
                fold.piece(int32s(inputs, 0)?);
                Ok(vec![None])
            },
            finish: |(fold, max)| {
                let done = std::mem::replace(fold, Err("the segments were finished".into()))?;
                let (sums, maxima) = done.finish();
                Ok(vec![Some(Array::Int64(if *max { maxima } else { sums }))])
            },
        })
    };
    let shape = (vec![Value::Int64(segments as i64)], PerCase { inputs: offsets_len(segments), outputs: segments });
    Some(case(contract, id, shape, inputs, model))
}

/// Offsets of `segments` segments: one more than there are segments.
fn offsets_len(segments: usize) -> usize {
    segments + 1
}

/// The case made the histogram's closed-last-bin rule's: a sample equal to
/// `upper` also counts in the last bin (the rule's adjustment of the base's
/// answer, folded: the samples at `upper` are counted piece by piece and
/// added to the last bin at the end).
fn closed(case: StreamedCase) -> Option<StreamedCase> {
    let upper = *case.params.get(2)?;
    let base = case.model.clone();
    let model = move || -> Box<dyn PieceModel> { Box::new(ClosedLastBin { base: base(), upper, at_upper: 0 }) };
    Some(StreamedCase { model: Arc::new(model), ..case })
}
