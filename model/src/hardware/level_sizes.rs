//! The input sizes of a recursion that replaces `n` items by one partial per block of `width`
//! until one block is left: the shape shared by the multi-pass reduction and the recursive
//! device scan.

/// `[n, ceil(n / width), ceil(ceil(n / width) / width), …]`, stopping at the first size that
/// fits one block (`≤ width`); `[n]` when `n ≤ width` (so `[0]` for `n = 0`). `width` must be
/// at least 2 (a width of 1 never shrinks the size; callers check their widths).
pub fn level_sizes(n: usize, width: usize) -> Vec<usize> {
    let mut sizes = vec![n];
    let mut m = n;
    while m > width {
        m = m.div_ceil(width);
        sizes.push(m);
    }
    sizes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_shrink_by_the_width_until_one_block() {
        assert_eq!(level_sizes(0, 512), vec![0]);
        assert_eq!(level_sizes(512, 512), vec![512]);
        assert_eq!(level_sizes(4_194_304, 512), vec![4_194_304, 8_192, 16]);
        assert_eq!(level_sizes(262_145, 512), vec![262_145, 513, 2]);
    }
}
