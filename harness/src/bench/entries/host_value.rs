//! An element read back on the host as the number it is: f32 and bf16 both
//! widen to f64 (and back to f32) exactly, so every host check of a float
//! entry computes on the input's exact values.

/// A float element on the host.
pub trait HostValue: Copy + Send + Sync {
    /// The value in f64 (exact).
    fn value(self) -> f64;

    /// The value in f32 (exact: both element types are subsets of f32).
    fn value_f32(self) -> f32 {
        self.value() as f32
    }
}

impl HostValue for f32 {
    fn value(self) -> f64 {
        self as f64
    }
}

impl HostValue for half::bf16 {
    fn value(self) -> f64 {
        self.to_f64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_types_widen_and_narrow_exactly() {
        for x in [0.1f32, -3.5e-20, 1.0e30, f32::MIN_POSITIVE] {
            assert_eq!(x.value_f32().to_bits(), x.to_bits());
            let b = half::bf16::from_f32(x);
            assert_eq!(b.value_f32(), b.to_f32());
            assert_eq!(b.value(), b.to_f64());
        }
    }
}
