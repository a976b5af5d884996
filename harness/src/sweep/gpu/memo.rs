//! A one-slot cache: consecutive cases of one (size, family) share their
//! generated input and model expectation instead of regenerating them.

use std::sync::{Arc, Mutex};

/// The key of one generated input: (size, family name, seed).
pub type InputKey = (usize, String, u64);

/// A memo shared by the cases of one primitive, holding a generated case or
/// the generator's error.
pub type SharedMemo<V> = Arc<Memo<InputKey, Result<V, String>>>;

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
}
