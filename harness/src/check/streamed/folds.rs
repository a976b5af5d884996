//! The model folded over a case's inputs a piece at a time: the model's own
//! piece folds ([`model::pieces`]) behind one trait, folded in order
//! ([`Fold`]), side by side where pieces are independent ([`Independent`],
//! [`bins_model`]), or with a carry ([`CarriedScans`]); and a named rule's
//! answer folded over its base's ([`ClosedLastBin`]).

use crate::sweep::raw::{Array, Value};
use kernels::HistogramSpec;
use model::pieces::SumScansI32;
use rayon::prelude::*;

/// Per output, in the contract's order: an answer, or `None`.
pub type Answers = Vec<Option<Array>>;

/// The model of a case folded over its inputs a piece at a time.
pub trait PieceModel: Send {
    /// Takes the next piece of every input made in pieces (in the
    /// contract's order; an input held whole is the model's from the
    /// start); gives, per output, the elements
    /// this piece appends to it (a scan's prefixes, a compaction's kept
    /// items), `None` for the outputs known only at the end.
    fn piece(&mut self, inputs: &[Array]) -> Result<Answers, String>;

    /// Once every piece is in: the outputs known only at the end (a sum, a
    /// count, the bins), whole; `None` for the appended ones.
    fn finish(&mut self) -> Result<Answers, String>;

    /// [`PieceModel::piece`] of each of `pieces`, in order (a model whose
    /// pieces are independent works on them side by side).
    fn batch(&mut self, pieces: &[Vec<Array>]) -> Result<Vec<Answers>, String> {
        pieces.iter().map(|p| self.piece(p)).collect()
    }
}

/// A [`PieceModel`] of a state and two plain functions.
pub(super) struct Fold<S> {
    pub(super) state: S,
    pub(super) piece: fn(&mut S, &[Array]) -> Result<Answers, String>,
    pub(super) finish: fn(&mut S) -> Result<Answers, String>,
}

impl<S: Send> PieceModel for Fold<S> {
    fn piece(&mut self, inputs: &[Array]) -> Result<Answers, String> {
        (self.piece)(&mut self.state, inputs)
    }

    fn finish(&mut self) -> Result<Answers, String> {
        (self.finish)(&mut self.state)
    }
}

/// A [`PieceModel`] whose pieces are independent: `map` gives each piece's
/// part of the answer from the state as it was before any piece (so pieces
/// are mapped side by side), `combine` adds the parts in order.
pub(super) struct Independent<S, P> {
    pub(super) state: S,
    pub(super) map: fn(&S, &[Array]) -> Result<P, String>,
    pub(super) combine: fn(&mut S, P) -> Answers,
    pub(super) finish: fn(&mut S) -> Result<Answers, String>,
}

impl<S: Send + Sync, P: Send> PieceModel for Independent<S, P> {
    fn piece(&mut self, inputs: &[Array]) -> Result<Answers, String> {
        let part = (self.map)(&self.state, inputs)?;
        Ok((self.combine)(&mut self.state, part))
    }

    fn finish(&mut self) -> Result<Answers, String> {
        (self.finish)(&mut self.state)
    }

    fn batch(&mut self, pieces: &[Vec<Array>]) -> Result<Vec<Answers>, String> {
        let (state, map) = (&self.state, self.map);
        let parts: Vec<Result<P, String>> = pieces.par_iter().map(|p| map(state, p)).collect();
        parts.into_iter().map(|part| Ok((self.combine)(&mut self.state, part?))).collect()
    }
}

/// Input `k` of a piece as int32 values.
pub(super) fn int32s(inputs: &[Array], k: usize) -> Result<&[i32], String> {
    match inputs.get(k) {
        Some(Array::Int32(v)) => Ok(v),
        other => Err(format!("input {k} of a piece is {:?}, not int32", other.map(Array::dtype))),
    }
}

/// Input `k` of a piece as f32 values.
pub(super) fn f32s(inputs: &[Array], k: usize) -> Result<&[f32], String> {
    match inputs.get(k) {
        Some(Array::Float32(v)) => Ok(v),
        other => Err(format!("input {k} of a piece is {:?}, not float32", other.map(Array::dtype))),
    }
}

pub(super) fn model_error(e: model::ModelError) -> String {
    e.to_string()
}

/// The int32 -> int64 scans of an input of fewer than 2^32 items, pieces
/// side by side: each piece scanned by the model from 0 (a `SumScansI32` of
/// its own), then every prefix moved by the sum of the pieces before it.
/// The int64 adds are exact: fewer than 2^32 terms of magnitude at most
/// 2^31 stay below 2^63, the bound the model's own plain scan rests on.
pub(super) struct CarriedScans {
    pub(super) inclusive: bool,
    pub(super) carry: i64,
}

impl CarriedScans {
    /// The prefixes of one piece from 0, and its sum.
    fn local(inclusive: bool, inputs: &[Array]) -> Result<(Vec<i64>, i64), String> {
        let x = int32s(inputs, 0)?;
        let (exclusive, inclusive_prefixes) = SumScansI32::new(x.len()).piece(x).map_err(model_error)?;
        let total = x.iter().map(|&v| i64::from(v)).sum();
        Ok((if inclusive { inclusive_prefixes } else { exclusive }, total))
    }
}

impl PieceModel for CarriedScans {
    fn piece(&mut self, inputs: &[Array]) -> Result<Answers, String> {
        let (mut prefixes, total) = Self::local(self.inclusive, inputs)?;
        prefixes.iter_mut().for_each(|p| *p += self.carry);
        self.carry += total;
        Ok(vec![Some(Array::Int64(prefixes))])
    }

    fn finish(&mut self) -> Result<Answers, String> {
        Ok(vec![None])
    }

    fn batch(&mut self, pieces: &[Vec<Array>]) -> Result<Vec<Answers>, String> {
        let inclusive = self.inclusive;
        let local: Result<Vec<(Vec<i64>, i64)>, String> =
            pieces.par_iter().map(|p| Self::local(inclusive, p)).collect();
        let mut local = local?;
        let carries: Vec<i64> = local
            .iter()
            .map(|(_, total)| {
                let before = self.carry;
                self.carry += total;
                before
            })
            .collect();
        local
            .par_iter_mut()
            .zip(carries)
            .for_each(|((prefixes, _), carry)| prefixes.iter_mut().for_each(|p| *p += carry));
        Ok(local.into_iter().map(|(prefixes, _)| vec![Some(Array::Int64(prefixes))]).collect())
    }
}

/// Bin counts as the contract's int32 counts (the raw catalogue's rule: a
/// count past `i32::MAX` is a generator error, not a kernel's).
pub(super) fn bin_counts(counts: &[u64]) -> Result<Answers, String> {
    let narrow: Result<Vec<i32>, _> = counts.iter().map(|&c| i32::try_from(c)).collect();
    let counts = narrow.map_err(|_| "a bin count does not fit int32".to_string())?;
    Ok(vec![Some(Array::Int32(counts))])
}

/// A histogram of samples of `T`: its spec, where a piece's samples are,
/// and the model's count of one piece.
pub(super) struct Bins<T> {
    pub(super) spec: HistogramSpec<T>,
    pub(super) samples: fn(&[Array], usize) -> Result<&[T], String>,
    pub(super) count: CountPiece<T>,
}

/// The model's count of one piece of samples, added into the counts given.
pub(super) type CountPiece<T> = fn(&[T], &HistogramSpec<T>, &mut [u64]) -> Result<(), model::ModelError>;

/// The bins' counts, pieces counted side by side and added in order
/// (counts of disjoint pieces add up to the whole's, the model's piece
/// rule), given at the end as the contract's int32 counts.
pub(super) fn bins_model<T: Send + Sync + 'static>(bins: Bins<T>) -> Box<dyn PieceModel> {
    let total = vec![0u64; bins.spec.bins as usize];
    Box::new(Independent {
        state: (bins, total),
        map: |(bins, _), inputs| {
            let mut part = vec![0u64; bins.spec.bins as usize];
            (bins.count)((bins.samples)(inputs, 0)?, &bins.spec, &mut part).map_err(model_error)?;
            Ok(part)
        },
        combine: |(_, counts), part| {
            counts.iter_mut().zip(part).for_each(|(c, p)| *c += p);
            vec![None]
        },
        finish: |(_, counts)| bin_counts(counts),
    })
}

/// A histogram's fold whose last bin also holds the samples at `upper`.
pub(super) struct ClosedLastBin {
    pub(super) base: Box<dyn PieceModel>,
    pub(super) upper: Value,
    pub(super) at_upper: u64,
}

impl ClosedLastBin {
    /// The samples of one piece equal to `upper` (as the rule compares them: `==`).
    fn at_upper(&self, inputs: &[Array]) -> u64 {
        let count = match (inputs.first(), self.upper) {
            (Some(Array::Int32(x)), Value::Int32(upper)) => x.iter().filter(|&&v| v == upper).count(),
            (Some(Array::Float32(x)), Value::Float32(upper)) => x.iter().filter(|&&v| v == upper).count(),
            _ => 0,
        };
        count as u64
    }
}

impl PieceModel for ClosedLastBin {
    fn piece(&mut self, inputs: &[Array]) -> Result<Answers, String> {
        self.at_upper += self.at_upper(inputs);
        self.base.piece(inputs)
    }

    fn batch(&mut self, pieces: &[Vec<Array>]) -> Result<Vec<Answers>, String> {
        self.at_upper += pieces.iter().map(|p| self.at_upper(p)).sum::<u64>();
        self.base.batch(pieces)
    }

    fn finish(&mut self) -> Result<Answers, String> {
        let mut answers = self.base.finish()?;
        if let Some(Some(Array::Int32(counts))) = answers.first_mut() {
            if let Some(last) = counts.last_mut() {
                *last = i32::try_from(i64::from(*last) + self.at_upper as i64)
                    .map_err(|_| "a bin count does not fit int32".to_string())?;
            }
        }
        Ok(answers)
    }
}
