//! Inputs made a piece at a time (see [`super::Inputs::pieced`]): each part
//! of an input or of the model's answer is digested piece by piece as it is
//! made and kept only when the caller runs the cases, so that the sweep
//! (which keeps) and the receipt gate (which holds one piece) feed the
//! digests the very same bytes.

use super::{Keep, Pieced, INPUT_PART};
use crate::sweep::digest::Fingerprint;
use model::digest::DigestElement;

/// One digest part of `count` values of `T`, fed a piece at a time.
pub struct Part<T> {
    fingerprint: Fingerprint,
    kept: Option<Vec<T>>,
    fed: usize,
    count: usize,
}

impl<T: DigestElement> Part<T> {
    /// A part of `count` values, kept with [`Keep::Data`].
    pub fn new(keep: Keep, count: usize) -> Part<T> {
        Part::after(Fingerprint::new(), keep, count)
    }

    /// A part that follows the parts already in `fingerprint`.
    pub fn after(mut fingerprint: Fingerprint, keep: Keep, count: usize) -> Part<T> {
        fingerprint.begin::<T>(count);
        Part { fingerprint, kept: (keep == Keep::Data).then(|| Vec::with_capacity(count)), fed: 0, count }
    }

    /// The next values.
    pub fn push(&mut self, piece: &[T]) {
        self.fingerprint.feed(piece);
        self.fed += piece.len();
        if let Some(kept) = &mut self.kept {
            kept.extend_from_slice(piece);
        }
    }

    /// The fingerprint so far (to add later parts) and the kept values.
    /// Error: fewer or more values fed than the part's count (a catalogue bug).
    pub fn end(self) -> Result<(Fingerprint, Option<Vec<T>>), String> {
        if self.fed != self.count {
            return Err(format!("a part of {} values was fed {} (a catalogue bug)", self.count, self.fed));
        }
        Ok((self.fingerprint, self.kept))
    }

    /// The digest and the kept values.
    pub fn finish(self) -> Result<(String, Option<Vec<T>>), String> {
        let (fingerprint, kept) = self.end()?;
        Ok((fingerprint.finish(), kept))
    }
}

/// One digest part whose count is known only at its end (the kept items of
/// a compaction), fed a piece at a time: see `Fingerprint::begin_unsized`.
pub struct UnsizedPart<T> {
    fingerprint: Fingerprint,
    kept: Option<Vec<T>>,
    fed: usize,
}

impl<T: DigestElement> UnsizedPart<T> {
    /// A part kept with [`Keep::Data`].
    pub fn new(keep: Keep) -> UnsizedPart<T> {
        let mut fingerprint = Fingerprint::new();
        fingerprint.begin_unsized::<T>();
        UnsizedPart { fingerprint, kept: (keep == Keep::Data).then(Vec::new), fed: 0 }
    }

    /// The next values.
    pub fn push(&mut self, piece: &[T]) {
        self.fingerprint.feed(piece);
        self.fed += piece.len();
        if let Some(kept) = &mut self.kept {
            kept.extend_from_slice(piece);
        }
    }

    /// The digest and the kept values.
    pub fn finish(self) -> (String, Option<Vec<T>>) {
        (self.fingerprint.end_unsized(self.fed).finish(), self.kept)
    }
}

/// The result of a pieced maker: `data` made from the kept parts when they
/// were kept, and the digests by part name (the input's first).
pub fn pieced<P>(input_digest: String, answers: Vec<(&str, String)>, data: impl FnOnce() -> Option<P>) -> Pieced<P> {
    let mut digests = vec![(INPUT_PART.to_string(), input_digest)];
    digests.extend(answers.into_iter().map(|(part, d)| (part.to_string(), d)));
    Pieced { data: data(), digests }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_in_pieces_digests_as_the_whole_and_keeps_only_when_asked() {
        let x: Vec<i32> = (0..5000).collect();
        let mut kept = Part::<i32>::new(Keep::Data, x.len());
        let mut digested = Part::<i32>::new(Keep::DigestsOnly, x.len());
        for piece in x.chunks(333) {
            kept.push(piece);
            digested.push(piece);
        }
        let (a, values) = kept.finish().unwrap();
        let (b, none) = digested.finish().unwrap();
        assert_eq!(a, Fingerprint::new().i32s(&x).finish());
        assert_eq!(a, b);
        assert_eq!(values, Some(x.clone()));
        assert!(none.is_none());
        let mut short = Part::<i32>::new(Keep::DigestsOnly, 3);
        short.push(&[1, 2]);
        assert!(short.finish().unwrap_err().contains("fed 2"));
    }
}
