//! Which GPUs a multi-GPU run uses: `--gpus N|all` parsing and its check
//! against the devices the driver reports.

use std::fmt;
use std::str::FromStr;

/// What `--gpus` asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuCount {
    /// Exactly this many GPUs (ordinals `0..n`), at least 1.
    Exactly(usize),
    /// Every GPU the driver reports.
    All,
}

impl fmt::Display for GpuCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuCount::Exactly(n) => write!(f, "{n}"),
            GpuCount::All => write!(f, "all"),
        }
    }
}

impl FromStr for GpuCount {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        parse_gpus(text)
    }
}

/// Parses `--gpus`: a positive number or `all` (any case). The clap value
/// parser of `sweep --gpus` and `bench --gpus`.
pub fn parse_gpus(text: &str) -> Result<GpuCount, String> {
    let trimmed = text.trim();
    if trimmed.eq_ignore_ascii_case("all") {
        return Ok(GpuCount::All);
    }
    match trimmed.parse::<usize>() {
        Ok(0) => Err("--gpus 0 asks for no GPU: give at least 1, or 'all' for every GPU present".to_string()),
        Ok(n) => Ok(GpuCount::Exactly(n)),
        Err(_) => Err(format!("'{text}' is not a GPU count: give a positive number (e.g. --gpus 2) or 'all'")),
    }
}

/// The number of GPUs to use, given what was asked and how many the driver
/// reports; an error that says how many are present otherwise.
pub fn resolve(asked: GpuCount, present: usize) -> Result<usize, String> {
    if present == 0 {
        return Err(format!("--gpus {asked}: the driver reports no CUDA device on this machine"));
    }
    match asked {
        GpuCount::All => Ok(present),
        GpuCount::Exactly(n) if n <= present => Ok(n),
        GpuCount::Exactly(n) => Err(format!(
            "--gpus {n} asks for {n} GPUs but this machine has {present} (ordinal{} 0{}): \
             use --gpus {present} or --gpus all",
            if present == 1 { "" } else { "s" },
            if present == 1 { String::new() } else { format!("..{}", present - 1) }
        )),
    }
}

/// The number of GPUs to use on this machine: [`resolve`] against the
/// driver's device count (an error naming the reason when there is no driver
/// or no device; never a panic).
pub fn resolve_on_this_machine(asked: GpuCount) -> anyhow::Result<usize> {
    let present = kernels::probe_driver().map_err(|e| anyhow::anyhow!("--gpus {asked}: {e}"))?;
    resolve(asked, present).map_err(anyhow::Error::msg)
}

/// The GPU counts a scaling run visits up to `n`: 1, 2, 4, 8, ... and `n`.
pub fn scaling_steps(n: usize) -> Vec<usize> {
    let mut steps: Vec<usize> =
        std::iter::successors(Some(1usize), |&g| g.checked_mul(2)).take_while(|&g| g <= n).collect();
    if steps.last() != Some(&n) {
        steps.push(n);
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_all_parse() {
        assert_eq!(parse_gpus("1"), Ok(GpuCount::Exactly(1)));
        assert_eq!(parse_gpus("8"), Ok(GpuCount::Exactly(8)));
        assert_eq!(parse_gpus(" 2 "), Ok(GpuCount::Exactly(2)));
        assert_eq!(parse_gpus("all"), Ok(GpuCount::All));
        assert_eq!(parse_gpus("ALL"), Ok(GpuCount::All));
        assert_eq!("4".parse::<GpuCount>(), Ok(GpuCount::Exactly(4)));
        assert_eq!(GpuCount::Exactly(3).to_string(), "3");
        assert_eq!(GpuCount::All.to_string(), "all");
    }

    #[test]
    fn zero_negative_and_words_are_clear_errors() {
        let zero = parse_gpus("0").unwrap_err();
        assert!(zero.contains("--gpus 0") && zero.contains("at least 1"), "{zero}");
        for bad in ["-1", "two", "", "1.5", "all2"] {
            let e = parse_gpus(bad).unwrap_err();
            assert!(e.contains("not a GPU count") && e.contains("'all'"), "{bad}: {e}");
        }
    }

    #[test]
    fn asking_for_more_gpus_than_present_names_the_count() {
        assert_eq!(resolve(GpuCount::Exactly(1), 1), Ok(1));
        assert_eq!(resolve(GpuCount::Exactly(2), 8), Ok(2));
        assert_eq!(resolve(GpuCount::All, 4), Ok(4));
        let e = resolve(GpuCount::Exactly(4), 1).unwrap_err();
        assert!(e.contains("asks for 4 GPUs but this machine has 1 (ordinal 0)"), "{e}");
        let e = resolve(GpuCount::Exactly(16), 8).unwrap_err();
        assert!(e.contains("has 8 (ordinals 0..7)") && e.contains("--gpus 8"), "{e}");
        let e = resolve(GpuCount::All, 0).unwrap_err();
        assert!(e.contains("no CUDA device"), "{e}");
    }

    #[test]
    fn scaling_steps_double_and_end_at_n() {
        assert_eq!(scaling_steps(1), vec![1]);
        assert_eq!(scaling_steps(2), vec![1, 2]);
        assert_eq!(scaling_steps(6), vec![1, 2, 4, 6]);
        assert_eq!(scaling_steps(8), vec![1, 2, 4, 8]);
    }
}
