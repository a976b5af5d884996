//! The one way values are written on the command line: seeds (decimal or
//! 0x-hex), durations in seconds, and sizes, for every command that takes
//! `--sizes` (sweep, sanitize, check, cases export, bench):
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
//! `bench --sizes` also reads its old spelling, log2 exponents; that is the
//! bench command's own.

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

/// Accepts decimal or 0x-prefixed hexadecimal seeds.
pub fn parse_seed(text: &str) -> Result<u64, String> {
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.map_err(|_| format!("'{text}' is not a seed: give a decimal or 0x-hex 64-bit number"))
}

/// Parses a positive, finite number of seconds.
pub fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.trim().trim_end_matches('s').parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("'{text}' is not a positive number of seconds")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_parse_in_decimal_and_hex() {
        assert_eq!(parse_seed("42"), Ok(42));
        assert_eq!(parse_seed("0x2a"), Ok(42));
        assert!(parse_seed("forty-two").unwrap_err().contains("not a seed"));
    }

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
}
