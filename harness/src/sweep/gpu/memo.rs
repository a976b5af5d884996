//! Prepared inputs: the cases of one (size, family) read one generated
//! input, and the model's answers to it, made once ([`PreparedInput`]) and
//! shared by every case of that input. Whoever runs the catalogue (the
//! sweep's workers, the receipt gate) prepares one input, runs or digests its
//! cases, and drops it: nothing is cached behind the caller's back, so the
//! caller alone decides how many inputs are held at once (a 2^28 scan with
//! its expected prefixes is 5 GB).

use super::GpuCase;
use crate::sweep::case::{CaseId, Verdict};
use crate::sweep::digest::CaseDigest;
use std::any::Any;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

type Shared = Arc<dyn Any + Send + Sync>;

/// One input of the catalogue, made on demand.
pub trait InputSource: Send + Sync {
    /// Unique per generated input in the catalogue (cases with the same key
    /// read the same input).
    fn key(&self) -> &str;
    /// Generates it (the generator's error, if any, is every case's).
    fn prepare(&self) -> PreparedInput;
    /// For an input made a piece at a time ([`Inputs::pieced`]): the digests of
    /// the input ([`INPUT_PART`]) and of every answer part, computed from the
    /// pieces without holding them (the receipt gate's way on a small
    /// machine). `None`: the input is made whole only.
    fn digests_only(&self) -> Option<Result<BTreeMap<String, String>, String>> {
        None
    }
    /// Whether [`InputSource::digests_only`] gives its digests (holding one piece at a time).
    fn pieced(&self) -> bool {
        false
    }
}

/// The part name of the input's own digest.
pub const INPUT_PART: &str = "input";

/// How a pieced input is made ([`Inputs::pieced`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Keep the input and the model's answers (to run the cases), digesting them as they are made.
    Data,
    /// Only digest them, holding a piece at a time.
    DigestsOnly,
}

/// What a pieced input's maker returns: the data (with [`Keep::Data`]) and
/// the digests, by part name, of the input ([`INPUT_PART`]) and of the
/// model's answers its cases are compared with (the cases' `expected_part`s).
pub struct Pieced<P> {
    /// The input and answers; `None` with [`Keep::DigestsOnly`].
    pub data: Option<P>,
    /// (part, digest) pairs.
    pub digests: Vec<(String, String)>,
}

/// A generated input, and what the cases on it derived from it so far (the
/// model's answers and digests, by part), so that each is computed once.
pub struct PreparedInput {
    data: Result<Shared, String>,
    parts: Mutex<BTreeMap<String, Shared>>,
}

impl PreparedInput {
    fn new(data: Result<Shared, String>) -> PreparedInput {
        PreparedInput { data, parts: Mutex::new(BTreeMap::new()) }
    }

    /// A prepared input holding `recipe` as it is: for an input whose cases
    /// make what they need themselves, once, through [`PreparedInput::shared`]
    /// (a streamed input that the first case writes to the device).
    pub fn holding<P: Send + Sync + 'static>(recipe: P) -> PreparedInput {
        PreparedInput::new(Ok(Arc::new(recipe)))
    }

    /// The held value as `P` ([`PreparedInput::holding`]), or the generator's error.
    pub fn held<P: Send + Sync + 'static>(&self) -> Result<&P, String> {
        self.data()
    }

    /// The part named `name`, made by `make` by the first case that asks and
    /// shared with the other cases of this input; dropped with the input.
    pub fn shared<V: Send + Sync + 'static>(&self, name: &str, make: impl FnOnce() -> V) -> Arc<V> {
        self.part(name, make)
    }

    /// The part named `name` if a case made it.
    pub fn shared_if_made<V: Send + Sync + 'static>(&self, name: &str) -> Option<Arc<V>> {
        self.get(name)
    }

    /// The input as `P`, or the generator's error.
    fn data<P: Send + Sync + 'static>(&self) -> Result<&P, String> {
        match &self.data {
            Ok(d) => d.downcast_ref::<P>().ok_or_else(|| "an input of another type (a catalogue bug)".to_string()),
            Err(e) => Err(e.clone()),
        }
    }

    /// The part named `name` if it was made.
    fn get<V: Send + Sync + 'static>(&self, name: &str) -> Option<Arc<V>> {
        let cached = self.parts.lock().unwrap_or_else(|p| p.into_inner()).get(name).cloned();
        cached.and_then(|v| v.downcast::<V>().ok())
    }

    /// The part named `name`, made by `make` on first use.
    fn part<V: Send + Sync + 'static>(&self, name: &str, make: impl FnOnce() -> V) -> Arc<V> {
        if let Some(v) = self.get(name) {
            return v;
        }
        // Made outside the lock: one caller per input, and `make` may be long.
        let value = Arc::new(make());
        self.parts.lock().unwrap_or_else(|p| p.into_inner()).insert(name.to_string(), value.clone() as Shared);
        value
    }
}

type Make<P> = Arc<dyn Fn() -> Result<P, String> + Send + Sync>;
type DigestOf<P> = Arc<dyn Fn(&P) -> String + Send + Sync>;
type MakePieced<P> = Arc<dyn Fn(Keep) -> Result<Pieced<P>, String> + Send + Sync>;

/// How an input is made: whole, then digested; or a piece at a time, digested as it goes.
enum Source<P> {
    Whole { make: Make<P>, input_digest: DigestOf<P> },
    Pieced { make: MakePieced<P> },
}

impl<P> Clone for Source<P> {
    fn clone(&self) -> Self {
        match self {
            Source::Whole { make, input_digest } => {
                Source::Whole { make: make.clone(), input_digest: input_digest.clone() }
            }
            Source::Pieced { make } => Source::Pieced { make: make.clone() },
        }
    }
}

/// The inputs of one kind (one type of prepared data).
pub struct Inputs<P> {
    kind: std::marker::PhantomData<fn() -> P>,
}

impl<P> Default for Inputs<P> {
    fn default() -> Self {
        Inputs { kind: std::marker::PhantomData }
    }
}

impl<P: Send + Sync + 'static> Inputs<P> {
    /// One input, named by `key` (unique per generated input of this kind),
    /// made by `make`, whose input digest is `input_digest`.
    pub fn input(
        &self,
        key: String,
        make: impl Fn() -> Result<P, String> + Send + Sync + 'static,
        input_digest: impl Fn(&P) -> String + Send + Sync + 'static,
    ) -> Input<P> {
        Input {
            key: Self::typed_key(key),
            source: Source::Whole { make: Arc::new(make), input_digest: Arc::new(input_digest) },
        }
    }

    /// An input made a piece at a time by `make`, which digests the input and
    /// the answers of every part its cases use as it makes them, and keeps
    /// them only when asked ([`Keep`]): the sweep and the receipt gate then
    /// digest the same pieces, one holding them and one not.
    pub fn pieced(
        &self,
        key: String,
        make: impl Fn(Keep) -> Result<Pieced<P>, String> + Send + Sync + 'static,
    ) -> Input<P> {
        Input { key: Self::typed_key(key), source: Source::Pieced { make: Arc::new(make) } }
    }

    /// The type name keeps keys of different kinds of input apart.
    fn typed_key(key: String) -> String {
        format!("{}:{key}", std::any::type_name::<P>())
    }
}

/// One input of the catalogue, shared by the cases that read it.
pub struct Input<P> {
    key: String,
    source: Source<P>,
}

impl<P> Clone for Input<P> {
    fn clone(&self) -> Self {
        Input { key: self.key.clone(), source: self.source.clone() }
    }
}

impl<P: Send + Sync + 'static> InputSource for Input<P> {
    fn key(&self) -> &str {
        &self.key
    }

    fn prepare(&self) -> PreparedInput {
        match &self.source {
            Source::Whole { make, .. } => PreparedInput::new(make().map(|p| Arc::new(p) as Shared)),
            Source::Pieced { make } => match make(Keep::Data) {
                Ok(Pieced { data: Some(data), digests }) => {
                    let prepared = PreparedInput::new(Ok(Arc::new(data) as Shared));
                    for (part, digest) in digests {
                        prepared.part(&format!("digest:{part}"), || digest);
                    }
                    prepared
                }
                Ok(Pieced { data: None, .. }) => {
                    PreparedInput::new(Err("a pieced input kept no data (a catalogue bug)".to_string()))
                }
                Err(e) => PreparedInput::new(Err(e)),
            },
        }
    }

    fn pieced(&self) -> bool {
        matches!(self.source, Source::Pieced { .. })
    }

    fn digests_only(&self) -> Option<Result<BTreeMap<String, String>, String>> {
        match &self.source {
            Source::Whole { .. } => None,
            Source::Pieced { make } => Some(make(Keep::DigestsOnly).map(|p| p.digests.into_iter().collect())),
        }
    }
}

impl<P: Send + Sync + 'static> Input<P> {
    /// The digest of the input itself (made once per prepared input; a
    /// pieced input made it with its pieces).
    fn input_digest(&self, prepared: &PreparedInput, data: &P) -> Result<String, String> {
        let name = format!("digest:{INPUT_PART}");
        match &self.source {
            Source::Whole { input_digest, .. } => Ok(prepared.part(&name, || input_digest(data)).as_ref().clone()),
            Source::Pieced { .. } => prepared
                .get::<String>(&name)
                .map(|d| d.as_ref().clone())
                .ok_or_else(|| "a pieced input without its digest (a catalogue bug)".to_string()),
        }
    }

    /// A case on this input whose expected output is part of `P` (or cheap):
    /// `expected` digests the model's answer for this case (cases with the
    /// same `expected_part` share that digest); `run` launches the kernel on
    /// poisoned outputs and compares.
    pub fn case(
        &self,
        id: CaseId,
        expected_part: &str,
        expected: impl Fn(&P) -> String + Send + Sync + 'static,
        run: impl Fn(&kernels::Gpu, &P) -> Verdict + Send + Sync + 'static,
    ) -> GpuCase {
        self.case_with(
            id,
            expected_part,
            move |p: &P| expected(p),
            |digest: &String| digest.clone(),
            move |gpu, p, _| run(gpu, p),
        )
    }

    /// A case whose model answer `E` is made from the input by `answer`
    /// once per prepared input and `expected_part` (every case of the part
    /// shares it), digested by `digest`, and handed to `run` beside the
    /// input, so that no case recomputes the model.
    pub fn case_with<E: Send + Sync + 'static>(
        &self,
        id: CaseId,
        expected_part: &str,
        answer: impl Fn(&P) -> E + Send + Sync + 'static,
        digest: impl Fn(&E) -> String + Send + Sync + 'static,
        run: impl Fn(&kernels::Gpu, &P, &E) -> Verdict + Send + Sync + 'static,
    ) -> GpuCase {
        let answer = Arc::new(answer);
        let for_reference = (self.clone(), answer.clone());
        let for_run = answer;
        let value_part = format!("answer:{expected_part}");
        let digest_part = format!("digest:{expected_part}");
        let value_part_for_run = value_part.clone();
        GpuCase {
            id,
            input: Arc::new(self.clone()),
            expected_part: expected_part.to_string(),
            reference: Box::new(move |prepared| {
                let (input, answer) = &for_reference;
                let data = prepared.data::<P>()?;
                // A pieced input digested its answers as it made them.
                let expected = match prepared.get::<String>(&digest_part) {
                    Some(made) => made,
                    None => prepared.part(&digest_part, || digest(&prepared.part(&value_part, || answer(data)))),
                };
                Ok(CaseDigest {
                    input_digest: input.input_digest(prepared, data)?,
                    expected_digest: expected.as_ref().clone(),
                })
            }),
            run: Box::new(move |gpu, prepared| match prepared.data::<P>() {
                Ok(data) => run(gpu, data, &prepared.part(&value_part_for_run, || for_run(data))),
                Err(e) => Verdict::fail("an input", e, "generator"),
            }),
        }
    }
}

/// The input of a case on fixed data written in the catalogue: nothing to
/// generate, keyed by the case itself.
pub struct FixedInput {
    key: String,
}

impl FixedInput {
    /// The input of the case `id`.
    pub fn of(id: &CaseId) -> FixedInput {
        FixedInput { key: format!("fixed:{}", id.key()) }
    }
}

impl InputSource for FixedInput {
    fn key(&self) -> &str {
        &self.key
    }

    fn prepare(&self) -> PreparedInput {
        PreparedInput::new(Ok(Arc::new(())))
    }
}

/// The index ranges of consecutive cases that read one input (the
/// catalogue puts every case of an input next to each other).
pub fn groups(cases: &[GpuCase]) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        match out.last_mut() {
            Some(last) if cases[last.start].input_key() == case.input_key() => last.end = i + 1,
            _ => out.push(i..i + 1),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn id(v: &str) -> CaseId {
        CaseId { primitive: "p".into(), variant: v.into(), size: "3".into(), n: 3, family: "f".into(), seed: 0 }
    }

    #[test]
    fn cases_on_one_input_share_it_its_answers_and_digests() {
        let made = Arc::new(AtomicUsize::new(0));
        let answered = Arc::new(AtomicUsize::new(0));
        let counter = made.clone();
        let inputs: Inputs<Vec<i32>> = Inputs::default();
        let input = inputs.input(
            "k".into(),
            move || {
                counter.fetch_add(1, Ordering::Relaxed);
                Ok(vec![1, 2, 3])
            },
            |x| crate::sweep::digest::Fingerprint::new().i32s(x).finish(),
        );
        let a = input.case(id("a"), "sum", |x| x.iter().sum::<i32>().to_string(), |_, _| Verdict::Pass);
        let b = input.case(id("b"), "max", |x| x.iter().max().unwrap_or(&0).to_string(), |_, _| Verdict::Pass);
        let count = answered.clone();
        let sum = move |x: &Vec<i32>| {
            count.fetch_add(1, Ordering::Relaxed);
            x.iter().sum::<i32>()
        };
        let c = input.case_with(
            id("c"),
            "total",
            sum.clone(),
            |s: &i32| s.to_string(),
            |_, _, s| {
                if *s == 6 {
                    Verdict::Pass
                } else {
                    Verdict::fail(6, s, "sum")
                }
            },
        );
        let d = input.case_with(id("d"), "total", sum, |s: &i32| s.to_string(), |_, _, _| Verdict::Pass);
        let cases = vec![a, b, c, d];
        assert_eq!(groups(&cases), vec![0..4]);
        let prepared = cases[0].prepare();
        let digests: Vec<CaseDigest> = cases.iter().map(|c| c.reference(&prepared).unwrap()).collect();
        assert!(digests.iter().all(|d| d.input_digest == digests[0].input_digest));
        assert_eq!((digests[0].expected_digest.as_str(), digests[1].expected_digest.as_str()), ("6", "3"));
        assert_eq!(digests[2].expected_digest, "6");
        assert_eq!(made.load(Ordering::Relaxed), 1, "one input made");
        assert_eq!(answered.load(Ordering::Relaxed), 1, "one model answer for the two cases of its part");
    }

    #[test]
    fn a_generator_error_is_every_case_s_error_and_inputs_split_groups() {
        let inputs: Inputs<Vec<i32>> = Inputs::default();
        let broken = inputs.input("x".into(), || Err("no such family".to_string()), |_| String::new());
        let fine = inputs.input("y".into(), || Ok(vec![1]), |_| String::new());
        let cases = vec![
            broken.case(id("a"), "e", |_| String::new(), |_, _| Verdict::Pass),
            fine.case(id("b"), "e", |_| String::new(), |_, _| Verdict::Pass),
            fine.case(id("c"), "e", |_| String::new(), |_, _| Verdict::Pass),
        ];
        assert_eq!(groups(&cases), vec![0..1, 1..3]);
        let prepared = cases[0].prepare();
        assert_eq!(cases[0].reference(&prepared).unwrap_err(), "no such family");
    }
}
