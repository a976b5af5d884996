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
/// A row input with its shape.
type ShapedInput<T> = ((usize, usize), SharedInput<T>);

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

/// The inputs of the current size; each kind is made on first use.
pub struct InputPool<'g> {
    gpu: &'g Gpu,
    ints: Option<Rc<InputSet<i32>>>,
    floats: Option<Rc<InputSet<f32>>>,
    floats_bf16: Option<Rc<InputSet<half::bf16>>>,
    logits: Option<ShapedInput<f32>>,
    logits_bf16: Option<ShapedInput<half::bf16>>,
}

impl<'g> InputPool<'g> {
    /// An empty pool on `gpu`.
    pub fn new(gpu: &'g Gpu) -> InputPool<'g> {
        InputPool { gpu, ints: None, floats: None, floats_bf16: None, logits: None, logits_bf16: None }
    }

    /// The `n` int32 inputs in [-9, 9].
    pub fn ints(&mut self, n: usize) -> Result<Rc<InputSet<i32>>> {
        if let Some(set) = self.ints.as_ref().filter(|s| s.host.len() == n) {
            return Ok(set.clone());
        }
        self.ints = None;
        let set = Rc::new(InputSet::new(self.gpu, inputs::small_ints(n), &format!("int32 input n={n}"))?);
        self.ints = Some(set.clone());
        Ok(set)
    }

    /// The `n` float32 inputs in [-0.5, 0.5).
    pub fn floats(&mut self, n: usize) -> Result<Rc<InputSet<f32>>> {
        if let Some(set) = self.floats.as_ref().filter(|s| s.host.len() == n) {
            return Ok(set.clone());
        }
        self.floats = None;
        let set = Rc::new(InputSet::new(self.gpu, inputs::uniform_floats(n), &format!("float32 input n={n}"))?);
        self.floats = Some(set.clone());
        Ok(set)
    }

    /// The float32 inputs rounded to bf16.
    pub fn floats_bf16(&mut self, n: usize) -> Result<Rc<InputSet<half::bf16>>> {
        if let Some(set) = self.floats_bf16.as_ref().filter(|s| s.host.len() == n) {
            return Ok(set.clone());
        }
        self.floats_bf16 = None;
        let host = match self.floats.as_ref().filter(|s| s.host.len() == n) {
            Some(f32_set) => inputs::to_bf16(&f32_set.host),
            None => inputs::to_bf16(&inputs::uniform_floats(n)),
        };
        let set = Rc::new(InputSet::new(self.gpu, host, &format!("bf16 input n={n}"))?);
        self.floats_bf16 = Some(set.clone());
        Ok(set)
    }

    /// `[rows, cols]` float32 logits.
    pub fn logits(&mut self, rows: usize, cols: usize) -> Result<Rc<InputSet<f32>>> {
        if let Some((_, set)) = self.logits.as_ref().filter(|(shape, _)| *shape == (rows, cols)) {
            return Ok(set.clone());
        }
        self.logits = None;
        let set =
            Rc::new(InputSet::new(self.gpu, inputs::logits(rows * cols), &format!("float32 logits [{rows}, {cols}]"))?);
        self.logits = Some(((rows, cols), set.clone()));
        Ok(set)
    }

    /// `[rows, cols]` bf16 logits (the float32 logits rounded to nearest).
    pub fn logits_bf16(&mut self, rows: usize, cols: usize) -> Result<Rc<InputSet<half::bf16>>> {
        if let Some((_, set)) = self.logits_bf16.as_ref().filter(|(shape, _)| *shape == (rows, cols)) {
            return Ok(set.clone());
        }
        self.logits_bf16 = None;
        // The cast of the float32 logits of this shape (made again only when absent).
        let host = match self.logits.as_ref().filter(|(shape, _)| *shape == (rows, cols)) {
            Some((_, f32_set)) => inputs::to_bf16(&f32_set.host),
            None => inputs::to_bf16(&inputs::logits(rows * cols)),
        };
        let set = Rc::new(InputSet::new(self.gpu, host, &format!("bf16 logits [{rows}, {cols}]"))?);
        self.logits_bf16 = Some(((rows, cols), set.clone()));
        Ok(set)
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
