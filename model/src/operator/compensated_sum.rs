//! Neumaier-compensated f32 addition, operation for operation as `CompensatedSumF32` in
//! `kernels/cuda/common/operators.cuh`: present to replay the compensated GPU tree bit for bit.

/// A compensated partial: the rounded sum `s` and the collected rounding errors `c`; its value
/// is `s + c` (the answer is `fl(s + c)`, see [`CompensatedF32::finish`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CompensatedF32 {
    /// The plain rounded sum.
    pub s: f32,
    /// The accumulated rounding errors.
    pub c: f32,
}

impl CompensatedF32 {
    /// The partial of one input `x`: `(x, +0)`.
    pub fn lift(x: f32) -> CompensatedF32 {
        CompensatedF32 { s: x, c: 0.0 }
    }

    /// The f32 answer `fl(s + c)` (one round-to-nearest addition).
    pub fn finish(self) -> f32 {
        self.s + self.c
    }
}

/// `(a, b) -> (t, (a.c + b.c) + e)` with `t = fl(a.s + b.s)` and `e` the FastTwoSum error
/// taken from the operand of larger magnitude: `e = (a.s - t) + b.s` when `|a.s| >= |b.s|`,
/// else `(b.s - t) + a.s`. Every step is one f32 round-to-nearest operation, none fused,
/// matching the `__fadd_rn` / `__fsub_rn` sequence of the CUDA operator (those intrinsics are
/// never contracted into FMAs). Identity `(+0, +0)`; never fails; not associative.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompensatedSumF32;

// Commutative: t and a.c + b.c commute (IEEE addition does). e: unequal magnitudes pick the
// same operand either way; equal ones are a.s == b.s (the same expression) or a.s == -b.s
// (t = +0 and both branches give +0).
impl_operator!(CompensatedSumF32 => CompensatedF32 {
    name: "CompensatedSumF32",
    commutative: true,
    identity: CompensatedF32 { s: 0.0, c: 0.0 },
    combine(a, b) => {
        let t = a.s + b.s;
        // A NaN magnitude compares false, so it takes the second branch, as `fabsf(..) >=` does.
        let e = if a.s.abs() >= b.s.abs() { (a.s - t) + b.s } else { (b.s - t) + a.s };
        Ok(CompensatedF32 { s: t, c: (a.c + b.c) + e })
    }
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::Operator;

    #[test]
    fn the_lost_unit_is_kept_in_c() {
        // 2^24 + 1 rounds (ties to even) to 2^24; the error 1 is exact.
        let big = CompensatedF32::lift(16_777_216.0);
        let one = CompensatedF32::lift(1.0);
        let r = CompensatedSumF32.combine(&big, &one).unwrap();
        assert_eq!((r.s, r.c), (16_777_216.0, 1.0));
        // The smaller operand first takes the other branch and gives the same pair.
        assert_eq!(CompensatedSumF32.combine(&one, &big).unwrap(), r);
        // Two lost units: fl(2^24 + 2) = 2^24 + 2 is representable.
        let twice = CompensatedSumF32.combine(&r, &one).unwrap();
        assert_eq!((twice.s, twice.c), (16_777_216.0, 2.0));
        assert_eq!(twice.finish(), 16_777_218.0);
    }

    #[test]
    fn adding_the_identity_turns_negative_zero_positive() {
        // -0 + +0 = +0 under round to nearest: the GPU tree's identity lanes do this too.
        let z = CompensatedSumF32.combine(&CompensatedF32::lift(-0.0), &CompensatedSumF32.identity()).unwrap();
        assert_eq!((z.s.to_bits(), z.c.to_bits()), (0, 0));
    }
}
