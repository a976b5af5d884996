//! The windows of a whole-array run too long for a kernel's 32-bit count or
//! index: the plans that meet such a limit (the arg reductions' int32
//! index, the histogram's u32 counts) run their unchanged kernels on
//! consecutive windows of the array and combine the windows' answers on
//! the host or in a second kernel.

/// The windows `(first item, length)` of `n` items, in order: one window of
/// `n` when `n <= whole_up_to` (the path without windows; also for `n ==
/// 0`), else windows of `window` items, the last one shorter. A window
/// that is a multiple of 4 items starts every window 16-byte aligned when
/// the array is (4-byte items), so the kernels' vector loads stay.
///
/// # Panics
/// When `window == 0` and `n > whole_up_to` (a caller's constant, never
/// user input).
pub fn windows(n: usize, whole_up_to: usize, window: usize) -> Vec<(usize, usize)> {
    if n <= whole_up_to {
        return vec![(0, n)];
    }
    assert!(window > 0, "a window holds at least one item");
    (0..n).step_by(window).map(|start| (start, window.min(n - start))).collect()
}

#[cfg(test)]
mod tests {
    use super::windows;

    /// The windows cover `[0, n)` in order, without gaps or overlaps, each
    /// at most `window` long and all but the last exactly that long.
    #[test]
    fn windows_tile_the_array() {
        for (n, whole_up_to, window) in
            [(0, 4, 4), (4, 4, 4), (5, 4, 4), (13, 4, 4), (12, 0, 4), (1 << 33, 1 << 31, 1 << 30)]
        {
            let w = windows(n, whole_up_to, window);
            let mut next = 0;
            for (i, &(start, len)) in w.iter().enumerate() {
                assert_eq!(start, next, "n={n}: window {i} starts where the last ended");
                assert!(len <= window.max(whole_up_to) && len > 0 || n == 0, "n={n}: window {i} length {len}");
                if n > whole_up_to && i + 1 < w.len() {
                    assert_eq!(len, window, "n={n}: window {i} is whole");
                }
                next = start + len;
            }
            assert_eq!(next, n, "n={n}: the windows end at n");
        }
    }

    /// Up to `whole_up_to` there is one window, the whole array; past it the
    /// count is the ceiling of `n / window` and the last window holds the rest.
    #[test]
    fn one_window_up_to_the_limit() {
        assert_eq!(windows(0, 8, 4), vec![(0, 0)]);
        assert_eq!(windows(8, 8, 4), vec![(0, 8)]);
        assert_eq!(windows(9, 8, 4), vec![(0, 4), (4, 4), (8, 1)]);
        let n = (1usize << 32) + 333;
        let w = windows(n, u32::MAX as usize, 1 << 31);
        assert_eq!(w, vec![(0, 1 << 31), (1 << 31, 1 << 31), (1 << 32, 333)]);
    }
}
