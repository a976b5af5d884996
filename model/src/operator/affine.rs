//! Composition of affine maps over wrapping `u64`: the associative, non-commutative operator
//! that proves a schedule keeps left-to-right order.

/// The map `x -> a*x + b` over `u64` with wrapping (mod 2^64) arithmetic, defined once in
/// `primlab-types` (shared with the kernels crate, whose layout matches the CUDA struct).
pub use primlab_types::AffineMap;

/// Composition of [`AffineMap`]s in left-to-right order: `combine(f, g)` is "apply `f` first,
/// then `g`", i.e. `x -> g.a*(f.a*x + f.b) + g.b` = `(g.a*f.a, g.a*f.b + g.b)` (wrapping).
/// Identity `(a=1, b=0)`. Never fails. Associative (function composition), **not
/// commutative**: a reduction of `[f0, f1, …]` is the map "apply f0, then f1, …", which
/// changes if the schedule reorders inputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Affine;

impl_operator!(Affine => AffineMap {
    name: "Affine",
    commutative: false,
    identity: AffineMap::IDENTITY,
    combine(f, g) => Ok(AffineMap::combine(*f, *g))
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::Operator;
    use proptest::prelude::*;

    fn map() -> impl Strategy<Value = AffineMap> {
        (any::<u64>(), any::<u64>()).prop_map(|(a, b)| AffineMap { a, b })
    }

    #[test]
    fn non_commutative_witness() {
        let f = AffineMap { a: 2, b: 0 };
        let g = AffineMap { a: 1, b: 1 };
        // f then g: 2x + 1; g then f: 2x + 2.
        assert_eq!(Affine.combine(&f, &g), Ok(AffineMap { a: 2, b: 1 }));
        assert_eq!(Affine.combine(&g, &f), Ok(AffineMap { a: 2, b: 2 }));
        assert!(!Affine.is_commutative());
    }

    proptest! {
        #[test]
        fn associative_and_is_composition(f in map(), g in map(), h in map(), x in any::<u64>()) {
            let l = Affine.combine(&Affine.combine(&f, &g)?, &h)?;
            let r = Affine.combine(&f, &Affine.combine(&g, &h)?)?;
            prop_assert_eq!(l, r);
            prop_assert_eq!(l.apply(x), h.apply(g.apply(f.apply(x))));
            prop_assert_eq!(Affine.combine(&Affine.identity(), &f)?, f);
            prop_assert_eq!(Affine.combine(&f, &Affine.identity())?, f);
        }

        #[test]
        fn commutativity_fails_somewhere(f in map(), g in map()) {
            // Not a law but a witness search: record that random pairs usually differ.
            let fg = Affine.combine(&f, &g)?;
            let gf = Affine.combine(&g, &f)?;
            if f.b.wrapping_mul(g.a).wrapping_add(g.b) != g.b.wrapping_mul(f.a).wrapping_add(f.b) {
                prop_assert_ne!(fg, gf);
            }
        }
    }
}
