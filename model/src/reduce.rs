//! Reduction by its direct definition: a left-to-right fold from the identity.

use crate::operator::{Operator, SumI64};
use crate::ModelError;

/// A left-to-right reduction of one input given a piece at a time, in
/// order (the whole [`reduce`] is one piece).
pub struct PieceReduce<'a, Op: Operator> {
    op: &'a Op,
    acc: Op::Value,
    at: usize,
}

impl<'a, Op: Operator> PieceReduce<'a, Op> {
    /// Nothing reduced yet (the identity).
    pub fn new(op: &'a Op) -> Self {
        PieceReduce { op, acc: op.identity(), at: 0 }
    }

    /// Folds the next piece in. Errors: the first failing combine, with its
    /// index in the whole input.
    pub fn piece(&mut self, items: &[Op::Value]) -> Result<(), ModelError> {
        for x in items {
            self.acc = self.op.combine(&self.acc, x).map_err(|e| e.at("reduce", format!("index {}", self.at)))?;
            self.at += 1;
        }
        Ok(())
    }

    /// The reduction of every piece so far.
    pub fn value(&self) -> &Op::Value {
        &self.acc
    }
}

/// `identity ⊕ x[0] ⊕ x[1] ⊕ … ⊕ x[n−1]`, combined strictly left to right (the serial
/// one-thread baseline). Empty input → the identity. Errors: the first failing combine,
/// relocated to `reduce` with its index.
pub fn reduce<Op: Operator>(op: &Op, items: &[Op::Value]) -> Result<Op::Value, ModelError> {
    let mut fold = PieceReduce::new(op);
    fold.piece(items)?;
    Ok(fold.acc)
}

/// Sum of integers (`i32` or `i64` inputs) with checked int64 accumulation, left to right.
/// Errors: `Overflow { primitive: "reduce" }` at the first prefix that leaves `i64`.
/// Seed: the sum of `[3, -1, 4, 1, 5, -9, 2, 6]` is 11.
pub fn reduce_i64<T: Copy + Into<i64>>(items: &[T]) -> Result<i64, ModelError> {
    let wide: Vec<i64> = items.iter().map(|&x| x.into()).collect();
    reduce(&SumI64, &wide)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::{MaxI64, MinI64};

    #[test]
    fn seed_sum_is_eleven() {
        let x = [3i32, -1, 4, 1, 5, -9, 2, 6];
        assert_eq!(reduce_i64(&x), Ok(11));
        let wide: Vec<i64> = x.iter().map(|&v| i64::from(v)).collect();
        assert_eq!(reduce(&MaxI64, &wide), Ok(6));
        assert_eq!(reduce(&MinI64, &wide), Ok(-9));
        assert_eq!(reduce_i64::<i32>(&[]), Ok(0));
    }

    #[test]
    fn serial_order_overflow() {
        let e = reduce_i64(&[i64::MAX, 1, -1]).unwrap_err();
        assert!(matches!(&e, ModelError::Overflow { primitive: "reduce", detail } if detail.starts_with("index 1")));
        // Serial order survives where the tree order might not: MAX + (-1) + 1.
        assert_eq!(reduce_i64(&[i64::MAX, -1, 1]), Ok(i64::MAX));
    }
}
