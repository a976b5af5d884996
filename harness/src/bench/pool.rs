//! Inputs shared by every entry of one size: generated once on the host,
//! uploaded once as rotated copies, dropped (and their device memory freed)
//! before the next size.

use super::inputs;
use super::rotation::RotatingInputs;
use anyhow::{bail, Context, Result};
use cudarc::driver::DeviceRepr;
use kernels::Gpu;
use rayon::prelude::*;
use std::cell::OnceCell;
use std::rc::Rc;

/// Device memory every allocation leaves free (the driver, the baselines'
/// later needs, fragmentation).
pub const DEVICE_MEMORY_MARGIN: u64 = 1 << 30;

/// Fails with a clear message unless `bytes` more device bytes fit with the
/// margin to spare; `what` names the entry.
pub fn ensure_device_memory(gpu: &Gpu, bytes: u64, what: &str) -> Result<()> {
    let (free, total) = gpu.context().mem_get_info().context("reading free device memory")?;
    if (free as u64) < bytes + DEVICE_MEMORY_MARGIN {
        bail!(
            "{what}: needs about {} MiB of device memory, {} MiB of {} MiB free (keeping {} MiB spare)",
            bytes >> 20,
            free >> 20,
            total >> 20,
            DEVICE_MEMORY_MARGIN >> 20
        );
    }
    Ok(())
}

/// An input shared by the entries of one size.
pub type SharedInput<T> = Rc<InputSet<T>>;
/// How an entry fetches its 1-D input of n elements from the pool.
pub type FetchInput<T> = fn(&mut InputPool<'_>, usize) -> Result<SharedInput<T>>;
/// How an entry fetches its `[rows, cols]` input from the pool.
pub type FetchRows<T> = fn(&mut InputPool<'_>, usize, usize) -> Result<SharedInput<T>>;

/// One input: its host values (for the checks) and its rotated device copies.
pub struct InputSet<T: DeviceRepr> {
    /// The values, as every copy holds them.
    pub host: Vec<T>,
    /// The device copies.
    pub device: RotatingInputs<T>,
    sum_i64: OnceCell<i64>,
}

impl<T: DeviceRepr + Copy + Send + Sync> InputSet<T> {
    fn new(gpu: &Gpu, host: Vec<T>, what: &str) -> Result<InputSet<T>> {
        let bytes = (host.len() * std::mem::size_of::<T>()) as u64;
        let l2 = gpu.info().l2_bytes.max(0) as u64;
        // At most one copy beyond 2 x L2 (or the one buffer).
        ensure_device_memory(gpu, 2 * l2 + bytes, what)?;
        let device = RotatingInputs::upload(gpu, &host).with_context(|| what.to_string())?;
        Ok(InputSet { host, device, sum_i64: OnceCell::new() })
    }
}

impl InputSet<i32> {
    /// The exact sum of the host values (computed once).
    pub fn sum_i64(&self) -> i64 {
        *self.sum_i64.get_or_init(|| self.host.par_iter().map(|&x| x as i64).sum())
    }
}

/// One kind of input, kept with the size (`n` or `(rows, cols)`) it was made for.
type Slot<K, T> = Option<(K, SharedInput<T>)>;

/// The input in `slot` when it was made for `key`; otherwise the old one is
/// dropped first (its device memory is freed before the new upload), then
/// `host()` is uploaded as the new one, named `what` in errors.
fn cached<K: PartialEq, T: DeviceRepr + Copy + Send + Sync>(
    gpu: &Gpu,
    slot: &mut Slot<K, T>,
    key: K,
    what: String,
    host: impl FnOnce() -> Vec<T>,
) -> Result<SharedInput<T>> {
    if let Some((_, set)) = slot.as_ref().filter(|(k, _)| *k == key) {
        return Ok(set.clone());
    }
    *slot = None;
    let set = Rc::new(InputSet::new(gpu, host(), &what)?);
    *slot = Some((key, set.clone()));
    Ok(set)
}

/// The host values of `slot` when it was made for `key`.
fn host_of<'s, K: PartialEq, T: DeviceRepr>(slot: &'s Slot<K, T>, key: &K) -> Option<&'s [T]> {
    slot.as_ref().filter(|(k, _)| k == key).map(|(_, set)| set.host.as_slice())
}

/// The inputs of the current size; each kind is made on first use.
pub struct InputPool<'g> {
    gpu: &'g Gpu,
    ints: Slot<usize, i32>,
    floats: Slot<usize, f32>,
    floats_bf16: Slot<usize, half::bf16>,
    logits: Slot<(usize, usize), f32>,
    logits_bf16: Slot<(usize, usize), half::bf16>,
}

impl<'g> InputPool<'g> {
    /// An empty pool on `gpu`.
    pub fn new(gpu: &'g Gpu) -> InputPool<'g> {
        InputPool { gpu, ints: None, floats: None, floats_bf16: None, logits: None, logits_bf16: None }
    }

    /// The `n` int32 inputs in [-9, 9].
    pub fn ints(&mut self, n: usize) -> Result<SharedInput<i32>> {
        cached(self.gpu, &mut self.ints, n, format!("int32 input n={n}"), || inputs::small_ints(n))
    }

    /// The `n` float32 inputs in [-0.5, 0.5).
    pub fn floats(&mut self, n: usize) -> Result<SharedInput<f32>> {
        cached(self.gpu, &mut self.floats, n, format!("float32 input n={n}"), || inputs::uniform_floats(n))
    }

    /// The float32 inputs rounded to bf16 (the cast of the float32 inputs of
    /// this size, made again only when absent).
    pub fn floats_bf16(&mut self, n: usize) -> Result<SharedInput<half::bf16>> {
        let floats = &self.floats;
        cached(self.gpu, &mut self.floats_bf16, n, format!("bf16 input n={n}"), || match host_of(floats, &n) {
            Some(host) => inputs::to_bf16(host),
            None => inputs::to_bf16(&inputs::uniform_floats(n)),
        })
    }

    /// `[rows, cols]` float32 logits.
    pub fn logits(&mut self, rows: usize, cols: usize) -> Result<SharedInput<f32>> {
        let what = format!("float32 logits [{rows}, {cols}]");
        cached(self.gpu, &mut self.logits, (rows, cols), what, || inputs::logits(rows * cols))
    }

    /// `[rows, cols]` bf16 logits (the float32 logits rounded to nearest; the
    /// cast of the float32 logits of this shape, made again only when absent).
    pub fn logits_bf16(&mut self, rows: usize, cols: usize) -> Result<SharedInput<half::bf16>> {
        let logits = &self.logits;
        let what = format!("bf16 logits [{rows}, {cols}]");
        cached(self.gpu, &mut self.logits_bf16, (rows, cols), what, || match host_of(logits, &(rows, cols)) {
            Some(host) => inputs::to_bf16(host),
            None => inputs::to_bf16(&inputs::logits(rows * cols)),
        })
    }

    /// Drops every input (their device memory is freed once no entry holds them).
    pub fn clear(&mut self) {
        self.ints = None;
        self.floats = None;
        self.floats_bf16 = None;
        self.logits = None;
        self.logits_bf16 = None;
    }
}
