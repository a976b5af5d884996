//! Grid reduction by repeated launches: each pass reduces blocks of 512 inputs to one partial
//! per block with [`block_reduce`], until one value is left.

use super::block_reduce::{block_reduce, BlockLayout, ITEMS_PER_BLOCK};
use super::level_sizes::level_sizes;
use crate::operator::Operator;
use crate::ModelError;

/// Number of passes for `n` inputs: 0 for `n = 0`, else the number of times `n` must be
/// replaced by `ceil(n / 512)` until it is 1, counting the pass that produces the final value
/// (1 for `n ≤ 512`; 4,194,304 → 8,192 → 16 → 1 is 3 passes).
pub fn passes_for(n: usize) -> usize {
    pass_sizes(n).len()
}

/// Sizes of every pass's input, first to last (`[n, ceil(n/512), …]`, last one ≤ 512).
pub fn pass_sizes(n: usize) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    level_sizes(n, ITEMS_PER_BLOCK)
}

/// The most float additions any input passes through in the multi-pass tree, the `D` of the
/// error bound `gamma_D · Σ|x|`: per pass 1 (the thread's two loads) + 5 (warp shuffles) +
/// 3 (the second pass over 8 warp partials; its other two levels add exact zeros), so
/// `9 · passes_for(n)`. Add 1 for an atomic final step or an initial value.
pub fn float_tree_depth(n: usize) -> u32 {
    9 * passes_for(n) as u32
}

/// Reduces `items` pass by pass: pass `p` splits its input into blocks of 512
/// (`[512·b, 512·b + 512)`), reduces each with [`block_reduce`] in `layout`, and feeds the
/// partials, in block order, to pass `p + 1`; later passes reduce the 64-bit partials with
/// the same tree. Returns `(value, passes)` with `passes == passes_for(n)`; an empty input
/// returns `(identity, 0)`.
///
/// Errors: those of [`block_reduce`]; an overflow names the pass and block.
pub fn multipass_reduce<Op: Operator>(
    op: &Op,
    items: &[Op::Value],
    layout: BlockLayout,
) -> Result<(Op::Value, usize), ModelError> {
    if items.is_empty() {
        return Ok((op.identity(), 0));
    }
    let mut level: Vec<Op::Value> = items.to_vec();
    let mut passes = 0;
    loop {
        passes += 1;
        let partials = level
            .chunks(ITEMS_PER_BLOCK)
            .enumerate()
            .map(|(block, chunk)| {
                block_reduce(op, chunk, layout)
                    .map_err(|e| e.at("multipass_reduce", format!("pass {passes}, block {block}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if partials.len() == 1 {
            let value = partials.into_iter().next().unwrap_or_else(|| op.identity());
            return Ok((value, passes));
        }
        level = partials;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::{Affine, AffineMap, SumI64};
    use crate::reduce::reduce;
    use proptest::prelude::*;

    #[test]
    fn seed_four_million_inputs_take_three_passes() {
        assert_eq!(passes_for(4_194_304), 3);
        assert_eq!(pass_sizes(4_194_304), vec![4_194_304, 8_192, 16]);
        for (n, passes) in [(0, 0), (1, 1), (512, 1), (513, 2), (262_144, 2), (262_145, 3)] {
            assert_eq!(passes_for(n), passes, "passes for {n} inputs");
        }
        assert_eq!(float_tree_depth(512), 9);
    }

    #[test]
    fn four_million_ones_sum_in_three_passes() {
        let ones = vec![1i64; 4_194_304];
        assert_eq!(multipass_reduce(&SumI64, &ones, BlockLayout::Strided), Ok((4_194_304, 3)));
    }

    #[test]
    fn overflow_names_pass_and_block() {
        let mut items = vec![0i64; 1024];
        items[512] = i64::MAX;
        items[768] = 1;
        let e = multipass_reduce(&SumI64, &items, BlockLayout::Strided).unwrap_err();
        assert!(
            matches!(&e, ModelError::Overflow { primitive: "multipass_reduce", detail } if detail.starts_with("pass 1, block 1")),
            "{e}"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]

        #[test]
        fn multipass_equals_direct(len in prop_oneof![0usize..1100, 262_000usize..262_300], seed in any::<u64>()) {
            let mut rng = crate::generators::Rng::new(seed);
            let wide: Vec<i64> = (0..len).map(|_| i64::from(rng.next_u64() as i32)).collect();
            let (sum, passes) = multipass_reduce(&SumI64, &wide, BlockLayout::Strided)?;
            prop_assert_eq!(sum, reduce(&SumI64, &wide)?);
            prop_assert_eq!(passes, passes_for(len));
            let maps: Vec<AffineMap> = (0..len.min(5000)).map(|_| AffineMap { a: rng.next_u64(), b: rng.next_u64() }).collect();
            prop_assert_eq!(multipass_reduce(&Affine, &maps, BlockLayout::Blocked)?.0, reduce(&Affine, &maps)?);
        }
    }
}
