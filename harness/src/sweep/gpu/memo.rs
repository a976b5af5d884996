//! Prepared inputs: consecutive cases of one (size, family) share their
//! generated input and model expectation instead of regenerating them, and
//! each part's digest is computed once. Each thread keeps one prepared input
//! at a time (whatever primitive it belongs to), so that the largest inputs
//! (a 2^28 scan with its expected prefixes is 5 GB) are never held side by
//! side: memory stays within one case's needs.

use super::GpuCase;
use crate::sweep::case::{CaseId, Verdict};
use crate::sweep::digest::CaseDigest;
use std::any::Any;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

type Shared = Arc<dyn Any + Send + Sync>;

thread_local! {
    /// This thread's one prepared input: (key, value).
    static SLOT: RefCell<Option<(String, Shared)>> = const { RefCell::new(None) };
}

/// The value for `key` from this thread's slot, made by `make` (after the
/// slot's old value is dropped) unless it is the cached one.
fn cached<V: Send + Sync + 'static>(key: &str, make: impl FnOnce() -> V) -> Arc<V> {
    let hit = SLOT.with(|slot| {
        slot.borrow().as_ref().filter(|(k, _)| k == key).and_then(|(_, v)| v.clone().downcast::<V>().ok())
    });
    if let Some(v) = hit {
        return v;
    }
    // Drop the old value before making the new one (large inputs).
    SLOT.with(|slot| *slot.borrow_mut() = None);
    let value = Arc::new(make());
    SLOT.with(|slot| *slot.borrow_mut() = Some((key.to_string(), value.clone() as Shared)));
    value
}

/// A generated input with its model expectation, and the digests of its parts.
pub struct Prepared<P> {
    /// The input and expectation.
    pub data: P,
    digests: Mutex<BTreeMap<String, String>>,
}

impl<P> Prepared<P> {
    fn digest(&self, part: &str, make: impl FnOnce(&P) -> String) -> String {
        let mut cache = self.digests.lock().unwrap_or_else(|p| p.into_inner());
        cache.entry(part.to_string()).or_insert_with(|| make(&self.data)).clone()
    }
}

type Make<P> = Arc<dyn Fn() -> Result<P, String> + Send + Sync>;
type DigestOf<P> = Arc<dyn Fn(&P) -> String + Send + Sync>;

/// The prepared inputs of one kind (one type of prepared data).
pub struct Inputs<P> {
    kind: std::marker::PhantomData<fn() -> P>,
}

impl<P> Default for Inputs<P> {
    fn default() -> Self {
        Inputs { kind: std::marker::PhantomData }
    }
}

impl<P: Send + Sync + 'static> Inputs<P> {
    /// One input, named by `key` (unique per generated input in the
    /// catalogue), made by `make`, whose input digest is `input_digest`.
    pub fn input(
        &self,
        key: String,
        make: impl Fn() -> Result<P, String> + Send + Sync + 'static,
        input_digest: impl Fn(&P) -> String + Send + Sync + 'static,
    ) -> Input<P> {
        // The type name keeps keys of different kinds of input apart.
        let key = format!("{}:{key}", std::any::type_name::<P>());
        Input { key, make: Arc::new(make), input_digest: Arc::new(input_digest) }
    }
}

/// One prepared input of the catalogue, shared by the cases that read it.
pub struct Input<P> {
    key: String,
    make: Make<P>,
    input_digest: DigestOf<P>,
}

impl<P> Clone for Input<P> {
    fn clone(&self) -> Self {
        Input { key: self.key.clone(), make: self.make.clone(), input_digest: self.input_digest.clone() }
    }
}

impl<P: Send + Sync + 'static> Input<P> {
    fn get(&self) -> Arc<Result<Prepared<P>, String>> {
        cached(&self.key, || (self.make)().map(|data| Prepared { data, digests: Mutex::new(BTreeMap::new()) }))
    }

    /// A case on this input. `expected` digests the model's answer for this
    /// case; cases with the same `expected_part` share that digest. `run`
    /// launches the kernel on poisoned outputs and compares.
    pub fn case(
        &self,
        id: CaseId,
        expected_part: &str,
        expected: impl Fn(&P) -> String + Send + Sync + 'static,
        run: impl Fn(&kernels::Gpu, &P) -> Verdict + Send + Sync + 'static,
    ) -> GpuCase {
        let for_reference = self.clone();
        let for_run = self.clone();
        let part = format!("expected:{expected_part}");
        GpuCase {
            id,
            reference: Box::new(move || {
                let prepared = for_reference.get();
                match prepared.as_ref() {
                    Ok(p) => Ok(CaseDigest {
                        input_digest: p.digest("input", |d| (for_reference.input_digest)(d)),
                        expected_digest: p.digest(&part, &expected),
                    }),
                    Err(e) => Err(e.clone()),
                }
            }),
            run: Box::new(move |gpu| {
                let prepared = for_run.get();
                match prepared.as_ref() {
                    Ok(p) => run(gpu, &p.data),
                    Err(e) => Verdict::fail("an input", e, "generator"),
                }
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_key_reuses_the_value_and_a_new_key_replaces_it() {
        let a = cached("k1", || vec![1u8]);
        let b = cached("k1", || vec![2u8]);
        assert!(Arc::ptr_eq(&a, &b));
        let c = cached("k2", || vec![3u8]);
        assert_eq!(*c, vec![3]);
        let d = cached("k1", || vec![4u8]);
        assert_eq!(*d, vec![4], "one slot: k1 was dropped when k2 came");
    }

    #[test]
    fn cases_on_one_input_share_it_and_its_digests() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let made = Arc::new(AtomicUsize::new(0));
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
        let id = |v: &str| CaseId {
            primitive: "p".into(),
            variant: v.into(),
            size: "3".into(),
            n: 3,
            family: "f".into(),
            seed: 0,
        };
        let a = input.case(id("a"), "sum", |x| x.iter().sum::<i32>().to_string(), |_, _| Verdict::Pass);
        let b = input.case(id("b"), "max", |x| x.iter().max().unwrap_or(&0).to_string(), |_, _| Verdict::Pass);
        let (ra, rb) = ((a.reference)().unwrap(), (b.reference)().unwrap());
        assert_eq!(ra.input_digest, rb.input_digest);
        assert_eq!((ra.expected_digest.as_str(), rb.expected_digest.as_str()), ("6", "3"));
        assert_eq!(made.load(Ordering::Relaxed), 1);
    }
}
