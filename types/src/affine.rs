//! The non-commutative operator of reduce and scan: composition of affine
//! maps `x -> a*x + b` over wrapping u64 arithmetic. It is associative (ring
//! arithmetic modulo 2^64 is exact) but not commutative, so a schedule that
//! swaps two operands gives a different answer: it proves that reduce and
//! scan keep left-to-right order. Mirror of `AffineMap` / `AffineCompose` in
//! `kernels/cuda/common/operators.cuh`.

/// The affine map `x -> a*x + b` over wrapping u64 arithmetic.
///
/// Layout: `#[repr(C)]`, 16 bytes, 8-byte aligned, `a` then `b`: the same as
/// the CUDA `struct AffineMap { u64 a; u64 b; }` (the kernels crate checks
/// both sides). Serialised (feature `serde`) as `{"a": .., "b": ..}`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct AffineMap {
    /// The slope (multiplier).
    pub a: u64,
    /// The offset.
    pub b: u64,
}

impl AffineMap {
    /// The identity map `x -> x`: the result of reducing an empty input and
    /// the first element of every exclusive scan.
    pub const IDENTITY: AffineMap = AffineMap { a: 1, b: 0 };

    /// The map `x -> a*x + b`.
    pub const fn new(a: u64, b: u64) -> AffineMap {
        AffineMap { a, b }
    }

    /// `combine(f, g)` = "f, then g" = `g(f(x))` = `{g.a*f.a, g.a*f.b + g.b}`
    /// (wrapping). `f` covers the lower input indices: a reduction of
    /// `[f0, f1, f2]` is `combine(combine(f0, f1), f2)`.
    pub const fn combine(f: AffineMap, g: AffineMap) -> AffineMap {
        AffineMap { a: g.a.wrapping_mul(f.a), b: g.a.wrapping_mul(f.b).wrapping_add(g.b) }
    }

    /// `a*x + b` (wrapping).
    pub const fn apply(self, x: u64) -> u64 {
        self.a.wrapping_mul(x).wrapping_add(self.b)
    }
}

// SAFETY: #[repr(C)] plain old data of two u64, the layout the kernels expect.
#[cfg(feature = "cuda")]
unsafe impl cudarc::driver::DeviceRepr for AffineMap {}
// SAFETY: every bit pattern (all-zero included) is a valid AffineMap.
#[cfg(feature = "cuda")]
unsafe impl cudarc::driver::ValidAsZeroBits for AffineMap {}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(seed: &mut u64) -> AffineMap {
        let mut next = || {
            *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            *seed ^ (*seed >> 29)
        };
        AffineMap::new(next(), next())
    }

    #[test]
    fn layout_is_two_u64() {
        assert_eq!(std::mem::size_of::<AffineMap>(), 16);
        assert_eq!(std::mem::align_of::<AffineMap>(), 8);
        assert_eq!(std::mem::offset_of!(AffineMap, a), 0);
        assert_eq!(std::mem::offset_of!(AffineMap, b), 8);
    }

    #[test]
    fn combine_is_composition_associative_and_not_commutative() {
        let mut seed = 7;
        for _ in 0..1000 {
            let (f, g, h) = (sample(&mut seed), sample(&mut seed), sample(&mut seed));
            let x = sample(&mut seed).a;
            assert_eq!(AffineMap::combine(f, g).apply(x), g.apply(f.apply(x)));
            assert_eq!(
                AffineMap::combine(AffineMap::combine(f, g), h),
                AffineMap::combine(f, AffineMap::combine(g, h))
            );
            assert_eq!(AffineMap::combine(AffineMap::IDENTITY, f), f);
            assert_eq!(AffineMap::combine(f, AffineMap::IDENTITY), f);
        }
        let (f, g) = (AffineMap::new(2, 1), AffineMap::new(3, 5));
        assert_ne!(AffineMap::combine(f, g), AffineMap::combine(g, f));
    }
}
