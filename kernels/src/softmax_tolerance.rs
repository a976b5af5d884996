//! The declared accuracy of every softmax schedule: the per-element bound
//! [`softmax_tolerance`] derives from each schedule's rounding structure (its
//! normaliser tree), and its data-independent ulp summary.

use super::{row_in_registers_shape, row_in_warp_registers_items, SoftmaxDtype, SoftmaxVariant};
use super::{ROW_IN_REGISTERS_SHAPES, SOFTMAX_BLOCK_THREADS};

/// Unit roundoff of f32, `2^-24`.
pub(crate) const U_F32: f64 = 1.0 / 16_777_216.0;
/// Relative rounding bound of bf16 (round to nearest), `2^-8`.
pub(crate) const U_BF16: f64 = 1.0 / 256.0;
/// `|x - m|` above which an f32 output lies below the normal range
/// (`e^-88 < 2^-126`); used only by the data-independent ulp summary.
const MAX_NORMAL_SHIFT: f64 = 88.0;

/// The declared accuracy of one softmax configuration (see
/// [`softmax_tolerance`]): for an element whose exact probability is `p` and
/// whose logit sits `shift = x - m` below the row maximum,
/// `|got - p| <= (relative + per_shift * |shift|) * p + absolute`, and for a
/// row, `|sum_i got_i - 1| <= row_sum` (sum taken exactly).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SoftmaxTolerance {
    /// Relative error allowed regardless of the shift.
    pub relative: f64,
    /// Additional relative error per unit of `|x - m|` (the rounding of
    /// `x - m` in f32 is amplified by exp).
    pub per_shift: f64,
    /// Absolute allowance for results in the subnormal range.
    pub absolute: f64,
    /// Bound on `|sum of the row's outputs - 1|`.
    pub row_sum: f64,
}

impl SoftmaxTolerance {
    /// The largest `|got - exact|` allowed for one element.
    pub fn element_bound(&self, exact: f64, shift: f64) -> f64 {
        (self.relative + self.per_shift * shift.abs()) * exact.abs() + self.absolute
    }

    /// Whether `got` is within [`SoftmaxTolerance::element_bound`] of `exact`.
    pub fn allows(&self, exact: f64, shift: f64, got: f64) -> bool {
        (got - exact).abs() <= self.element_bound(exact, shift)
    }
}

/// `gamma_k = k u / (1 - k u)`.
fn gamma(k: f64) -> f64 {
    k * U_F32 / (1.0 - k * U_F32)
}

/// Rounding structure of the normaliser `d` for one schedule.
struct NormaliserTree {
    /// Most additions any term passes through.
    additions: f64,
    /// Rescalings by `expf` (accurate, 2 ulp) a term may pass through, each
    /// followed by one rounded multiply.
    accurate_rescales: f64,
    /// Merges by `SoftmaxMerge` (`__expf`: 2 + 1.173|Δ| ulp) a term may pass through.
    fast_rescales: f64,
    /// Relative error per unit of `|x - m|` of a term (argument roundings,
    /// and `__expf`'s 1.173 ulp per unit = 2.35u).
    per_shift: f64,
}

fn log2_ceil(x: usize) -> f64 {
    (usize::BITS - x.max(1).saturating_sub(1).leading_zeros()) as f64
}

fn normaliser_tree(cols: usize, variant: SoftmaxVariant, chunk: usize) -> NormaliserTree {
    // chunk: values per thread-level chunk (the vector width, or 1 when scalar).
    let chunk_levels = log2_ceil(chunk);
    let chunks = cols.div_ceil(chunk);
    match variant {
        SoftmaxVariant::ThreePass => {
            // per thread: pairwise chunk sum (log2 chunk), then one add per chunk
            // (k chunks per thread); warp_reduce 5; warps of the block: 256/32 = 8 -> 3
            // (the 2 further shuffle levels add an exact 0).
            let k = chunks.div_ceil(SOFTMAX_BLOCK_THREADS as usize) as f64;
            NormaliserTree {
                additions: chunk_levels + k + 5.0 + 3.0,
                accurate_rescales: 0.0,
                fast_rescales: 0.0,
                per_shift: 1.0,
            }
        }
        SoftmaxVariant::RowInRegisters => {
            let (_, threads, items) = row_in_registers_shape(cols).unwrap_or(ROW_IN_REGISTERS_SHAPES[2]);
            let additions = log2_ceil(items as usize) + 5.0 + log2_ceil(threads as usize / 32);
            NormaliserTree { additions, accurate_rescales: 0.0, fast_rescales: 0.0, per_shift: 1.0 }
        }
        SoftmaxVariant::RowInWarpRegisters => {
            // pairwise over the lane's items, then warp_reduce's 5 levels
            let items = row_in_warp_registers_items(cols).unwrap_or(32);
            let additions = log2_ceil(items as usize) + 5.0;
            NormaliserTree { additions, accurate_rescales: 0.0, fast_rescales: 0.0, per_shift: 1.0 }
        }
        SoftmaxVariant::OnlineBlock | SoftmaxVariant::OnlineWarp => {
            let (threads, merges) = match variant {
                // warp_reduce (5) + the second warp pass of block_all_reduce (5; the
                // identity merges are not assumed exact with __expf).
                SoftmaxVariant::OnlineBlock => (SOFTMAX_BLOCK_THREADS as usize, 10.0),
                _ => (32, 5.0),
            };
            let k = chunks.div_ceil(threads) as f64;
            NormaliserTree {
                // chunk pairwise + one add per chunk + one add per merge
                additions: chunk_levels + k + merges,
                // a running max can rise once per chunk
                accurate_rescales: k,
                fast_rescales: merges,
                // the argument rounding (1u per unit, telescoping over the rescales of
                // a term) plus __expf's 1.173 ulp per unit (2.35u): at most 3.35u per
                // unit of |x - m|.
                per_shift: 3.35,
            }
        }
    }
}

/// The declared accuracy of `variant` on rows of `cols` logits of `dtype`
/// (16-byte path iff `cols` is a multiple of the dtype's vector width).
///
/// # Derivation (f32 output; `u = 2^-24`, first-order terms, then rounded up)
///
/// Let `t_i = x_i - m <= 0` (m is exact: `fmaxf`), `C = cols`.
/// 1. `a_i = fl(x_i - m) = t_i (1 + α)`, `|α| <= u`, so `e^{a_i} = e^{t_i} (1 + β)`,
///    `|β| <= u |t_i| (1 + 1e-3)`.
/// 2. `E_i = expf(a_i)`: CUDA's `expf` is accurate to 2 ulp, i.e. relative `4u`.
///    So `E_i = e^{t_i} (1 + η_i)`, `|η_i| <= (4 + |t_i|) u`.
/// 3. The normaliser `d̂`: each term passes through at most `A` rounded
///    additions (the schedule's tree depth: chunk pairwise levels, one per
///    chunk of a thread, 5 shuffle levels, log2(warps) block levels), so the
///    addition error is at most `γ_A` relative. Online schedules also rescale
///    a term at most `R` times by `expf` (relative `(4 + |Δ|)u` plus one
///    multiply `u`), and `M` times by `SoftmaxMerge`'s `__expf` (documented
///    `2 + 1.173|Δ|` ulp = `(4 + 2.35|Δ|)u`, plus a multiply `u`); the `|Δ|`
///    of one term's rescalings add up to at most `|t_i|` (the maxima only
///    rise), so per unit of `|t_i|` the relative error is at most `s = 1u`
///    (ThreePass, RowInRegisters) or `3.35u` (online).
///    The weighted mean `sum e^{t_i} |t_i| / sum e^{t_i}` is at most
///    `ln C + 0.5` (concavity of `w ln(1/w)`, with the maximum's weight 1), so
///    `|d̂/d - 1| <= δ = γ_A + (4 + 5R + 5M + s (ln C + 0.5)) u` (times `1 + 1e-3`).
/// 4. `r = __frcp_rn(d̂)` rounds once (`u`), `p̂ = E_i * r` rounds once (`u`).
///
/// Hence `|p̂_i / p_i - 1| <= (1 + 4.004u)(1 + 1.001u|t_i|)(1 + u)^2 / (1 - δ) - 1`,
/// which is `relative + per_shift |t_i|` below. In the subnormal range the
/// expf and multiply errors are absolute: `2^-146` covers them.
///
/// Row sums: `|sum p̂_i - 1| <= sum |p̂_i - p_i| <= relative + per_shift (ln C + 0.5) + C 2^-146`.
///
/// bf16 output rounds `p̂` once more (relative `2^-8`): `relative_bf16 =
/// 2^-8 + (1 + 2^-8) relative`, `per_shift_bf16 = (1 + 2^-8) per_shift`,
/// absolute `2^-133` (half a bf16 subnormal ulp plus the f32 allowance); the
/// bf16 input itself is exact in f32.
pub fn softmax_tolerance(cols: usize, variant: SoftmaxVariant, dtype: SoftmaxDtype) -> SoftmaxTolerance {
    let cols = cols.max(1);
    let chunk = if cols % dtype.vector_width() == 0 { dtype.vector_width() } else { 1 };
    let f32_tolerance = f32_tolerance(cols, variant, chunk);
    match dtype {
        SoftmaxDtype::F32 => f32_tolerance,
        SoftmaxDtype::Bf16 => {
            let relative = U_BF16 + (1.0 + U_BF16) * f32_tolerance.relative;
            let per_shift = (1.0 + U_BF16) * f32_tolerance.per_shift;
            let absolute = 2f64.powi(-133);
            let ln_c = (cols as f64).ln() + 0.5;
            let row_sum = relative + per_shift * ln_c + cols as f64 * absolute;
            SoftmaxTolerance { relative, per_shift, absolute, row_sum }
        }
    }
}

fn f32_tolerance(cols: usize, variant: SoftmaxVariant, chunk: usize) -> SoftmaxTolerance {
    let tree = normaliser_tree(cols, variant, chunk);
    let ln_c = (cols as f64).ln() + 0.5;
    let delta = gamma(tree.additions)
        + (4.0 + 5.0 * tree.accurate_rescales + 5.0 * tree.fast_rescales + tree.per_shift * ln_c) * U_F32 * 1.001;
    let relative = (1.0 + 4.004 * U_F32) * (1.0 + U_F32).powi(2) / (1.0 - delta) - 1.0;
    let per_shift = (1.0 + relative) * 1.001 * U_F32;
    let absolute = 2f64.powi(-146);
    let row_sum = relative + per_shift * ln_c + cols as f64 * absolute;
    SoftmaxTolerance { relative, per_shift, absolute, row_sum }
}

/// A data-independent summary of [`softmax_tolerance`] for f32 output: the
/// largest error, in ulps of the exact value, over every element whose exact
/// probability is a normal f32 (those have `|x - m| < 88`), for either access
/// path (16-byte or scalar). Elements below `2^-126` are bounded by the
/// absolute term `2^-146` instead. One ulp of `p` is more than `p * 2^-24`,
/// so the ulp count is at most `(relative + 88 per_shift) * 2^24`.
pub fn softmax_error_bound_ulps(cols: usize, variant: SoftmaxVariant) -> f64 {
    let cols = cols.max(1);
    [1usize, 4]
        .into_iter()
        .map(|chunk| {
            let t = f32_tolerance(cols, variant, chunk);
            (t.relative + MAX_NORMAL_SHIFT * t.per_shift) / U_F32
        })
        .fold(0.0, f64::max)
}
