//! The one way sizes are written on the command line, for every command
//! that takes `--sizes` (sweep, sanitize, check, cases export, bench):
//! a comma-separated list of element counts, each a sum or difference of
//! terms that are whole numbers or powers `B^E`:
//!
//! ```text
//! --sizes 1000,2^20,2^28+1,2^31-1
//! ```
//!
//! Rule relied on: the arithmetic is exact (checked u128, left to right), so
//! a size that does not fit in 64 bits, or a negative one, is an error that
//! names it rather than a wrapped number. Whether a size is allowed (at
//! least 1, held by the host or GPU) is each command's check, which names
//! the size and the limit.
//!
//! `bench --sizes` took log2 exponents until now (`--sizes 20` = 2^20): a bare
//! number below [`BENCH_OLD_EXPONENT_BELOW`] is still read that way, with a
//! warning, for one release ([`bench_size`]).

/// One size of a `--sizes` list (clap value parser).
pub fn parse_size(text: &str) -> Result<usize, String> {
    let value =
        evaluate(text.trim()).map_err(|why| format!("'{text}' is not a size: {why} (write 1000, 2^20 or 2^28+1)"))?;
    usize::try_from(value).map_err(|_| format!("'{text}' = {value} is larger than any size (at most 2^64-1)"))
}

/// The value of `term (('+' | '-') term)*`.
fn evaluate(text: &str) -> Result<u128, String> {
    if text.is_empty() {
        return Err("it is empty".into());
    }
    let mut total: i128 = 0;
    let mut sign = 1i128;
    let mut rest = text;
    loop {
        let end = rest.find(['+', '-']).unwrap_or(rest.len());
        let term = term(rest[..end].trim())? as i128;
        total = total.checked_add(sign * term).ok_or("it overflows")?;
        if total > u64::MAX as i128 * 4 {
            return Err("it is larger than 2^64".into());
        }
        if end == rest.len() {
            break;
        }
        sign = if rest.as_bytes()[end] == b'+' { 1 } else { -1 };
        rest = &rest[end + 1..];
    }
    u128::try_from(total).map_err(|_| "it is negative".to_string())
}

/// A whole number or `B^E` (both whole numbers).
fn term(text: &str) -> Result<u128, String> {
    let number = |s: &str| -> Result<u128, String> {
        let s = s.trim();
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("'{s}' is not a whole number"));
        }
        s.parse::<u128>().map_err(|_| format!("'{s}' is too large"))
    };
    match text.split_once('^') {
        None => number(text),
        Some((base, exponent)) => {
            let (base, exponent) = (number(base)?, number(exponent)?);
            let exponent = u32::try_from(exponent).map_err(|_| format!("the exponent {exponent} is too large"))?;
            base.checked_pow(exponent)
                .filter(|v| *v <= u64::MAX as u128 * 4)
                .ok_or_else(|| format!("{base}^{exponent} is too large"))
        }
    }
}

/// Bare numbers below this were log2 exponents in `bench --sizes`.
pub const BENCH_OLD_EXPONENT_BELOW: u64 = 64;

/// One `bench --sizes` entry as the log2 exponent bench works in, and the
/// warning to print when it was written the old way (a bare exponent).
/// A size in the common grammar must be a power of two (the baselines take
/// log2 sizes); its range is checked by bench's own parser.
pub fn bench_size(text: &str) -> Result<(u32, Option<String>), String> {
    let trimmed = text.trim();
    let bare = trimmed.bytes().all(|b| b.is_ascii_digit()) && !trimmed.is_empty();
    if bare && trimmed.parse::<u64>().is_ok_and(|v| v < BENCH_OLD_EXPONENT_BELOW) {
        let k = crate::bench::select::parse_size(trimmed)?;
        let warning = format!(
            "warning: bench --sizes {trimmed} reads {trimmed} as a log2 exponent (2^{trimmed} elements), the old \
             spelling kept for one release; write 2^{trimmed}: sizes are element counts everywhere"
        );
        return Ok((k, Some(warning)));
    }
    let n = parse_size(text)?;
    if !n.is_power_of_two() {
        return Err(format!("'{text}' = {n} is not a power of two (bench times powers of two: write 2^K)"));
    }
    Ok((crate::bench::select::parse_size(&format!("2^{}", n.trailing_zeros()))?, None))
}

/// `bench --sizes` value parser: [`bench_size`], its warning printed.
pub fn parse_bench_size(text: &str) -> Result<u32, String> {
    let (k, warning) = bench_size(text)?;
    if let Some(w) = warning {
        eprintln!("{w}");
    }
    Ok(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_powers_and_offsets_are_sizes() {
        assert_eq!(parse_size("1000"), Ok(1000));
        assert_eq!(parse_size("2^20"), Ok(1_048_576));
        assert_eq!(parse_size("2^28+1"), Ok(268_435_457));
        assert_eq!(parse_size("2^31-1"), Ok(2_147_483_647));
        assert_eq!(parse_size(" 512^2 + 1 "), Ok(262_145));
        assert_eq!(parse_size("2^64-1"), Ok(18_446_744_073_709_551_615));
        assert_eq!(parse_size("0"), Ok(0), "a zero size is the command's to refuse, with its own message");
    }

    #[test]
    fn malformed_negative_and_oversized_sizes_are_errors_naming_them() {
        for (text, why) in [
            ("", "empty"),
            ("ten", "'ten' is not a whole number"),
            ("2^", "'' is not a whole number"),
            ("1-2", "negative"),
            ("2^64", "larger than any size"),
            ("2^200", "too large"),
            ("1e6", "not a whole number"),
            ("2^20+", "not a whole number"),
        ] {
            let e = parse_size(text).unwrap_err();
            assert!(e.contains(&format!("'{text}'")) && e.contains(why), "{text}: {e}");
        }
    }

    #[test]
    fn bench_reads_element_counts_and_warns_on_the_old_exponents() {
        assert_eq!(bench_size("2^20"), Ok((20, None)));
        assert_eq!(bench_size("1048576"), Ok((20, None)));
        assert_eq!(bench_size("2^10+2^10"), Ok((11, None)));
        let (k, warning) = bench_size("20").expect("the old spelling");
        assert_eq!(k, 20);
        assert!(warning.expect("a warning").contains("write 2^20"));
        assert!(bench_size("1000").unwrap_err().contains("not a power of two"));
        assert!(bench_size("2^31").unwrap_err().contains("above 2^30"), "{:?}", bench_size("2^31"));
        assert!(bench_size("0").is_err());
    }
}
