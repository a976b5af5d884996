//! Prepared inputs: consecutive cases of one (size, family) share their
//! generated input and model expectation (a one-slot cache) instead of
//! regenerating them, and each part's digest is computed once.

use super::GpuCase;
use crate::sweep::case::{CaseId, Verdict};
use crate::sweep::digest::CaseDigest;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Holds the most recent value for one key.
pub struct Memo<K, V> {
    slot: Mutex<Option<(K, Arc<V>)>>,
}

impl<K: PartialEq + Clone, V> Default for Memo<K, V> {
    fn default() -> Self {
        Memo { slot: Mutex::new(None) }
    }
}

impl<K: PartialEq + Clone, V> Memo<K, V> {
    /// The value for `key`, made by `make` unless it is the cached one.
    pub fn get(&self, key: &K, make: impl FnOnce() -> V) -> Arc<V> {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((k, v)) = slot.as_ref() {
            if k == key {
                return v.clone();
            }
        }
        // Drop the old value before making the new one (large inputs).
        *slot = None;
        let value = Arc::new(make());
        *slot = Some((key.clone(), value.clone()));
        value
    }
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

/// The prepared inputs of one primitive's cases (one cache slot).
pub struct Inputs<P> {
    memo: Arc<Memo<String, Result<Prepared<P>, String>>>,
}

impl<P> Default for Inputs<P> {
    fn default() -> Self {
        Inputs { memo: Arc::default() }
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
        Input { memo: self.memo.clone(), key, make: Arc::new(make), input_digest: Arc::new(input_digest) }
    }
}

/// One prepared input of the catalogue, shared by the cases that read it.
pub struct Input<P> {
    memo: Arc<Memo<String, Result<Prepared<P>, String>>>,
    key: String,
    make: Make<P>,
    input_digest: DigestOf<P>,
}

impl<P> Clone for Input<P> {
    fn clone(&self) -> Self {
        Input {
            memo: self.memo.clone(),
            key: self.key.clone(),
            make: self.make.clone(),
            input_digest: self.input_digest.clone(),
        }
    }
}

impl<P: Send + Sync + 'static> Input<P> {
    fn get(&self) -> Arc<Result<Prepared<P>, String>> {
        self.memo.get(&self.key, || (self.make)().map(|data| Prepared { data, digests: Mutex::new(BTreeMap::new()) }))
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
    fn the_same_key_reuses_the_value() {
        let memo: Memo<u32, Vec<u8>> = Memo::default();
        let mut made = 0;
        let a = memo.get(&1, || {
            made += 1;
            vec![1]
        });
        let b = memo.get(&1, || {
            made += 1;
            vec![2]
        });
        assert_eq!(made, 1);
        assert!(Arc::ptr_eq(&a, &b));
        let c = memo.get(&2, || vec![3]);
        assert_eq!(*c, vec![3]);
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
