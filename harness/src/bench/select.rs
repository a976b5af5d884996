//! The axes a bench run may be narrowed to: `--sizes`, `--shape` and
//! `--variant`. Sizes and shapes replace the run's 1-D sizes and row shapes
//! (and, given alone, leave out the other kind of entry); variants filter
//! the registered entries ([`super::entries::Registry::select`]). The
//! ceilings always stay (every ratio and plot needs them). A value that
//! selects no entry is an error that lists the valid values.

/// The largest log2 size: the baselines take log2(n) in [0, 30].
pub const MAX_SIZE_LOG2: u32 = 30;
/// Values below this are log2 exponents; from it on, element counts.
pub const FIRST_ELEMENT_COUNT: u64 = 64;

/// Parses one `--sizes` value: a log2 exponent (`20`, any value below 64, or
/// `2^20`) or an element count (`1048576`, a power of two from 64 on, as the
/// baselines take log2 sizes). Returns the log2 size. Zero, a non-power of
/// two and sizes above 2^30 are refused.
pub fn parse_size(raw: &str) -> Result<u32, String> {
    let raw = raw.trim();
    let (value, is_log2) = match raw.strip_prefix("2^") {
        Some(k) => (k, true),
        None => (raw, false),
    };
    let v: u64 = value.parse().map_err(|_| format!("'{raw}' is not a number (use 20, 2^20 or 1048576)"))?;
    let k = if is_log2 || v < FIRST_ELEMENT_COUNT {
        u32::try_from(v).map_err(|_| format!("'{raw}': log2 size too large"))?
    } else if v.is_power_of_two() {
        v.trailing_zeros()
    } else {
        return Err(format!("'{raw}' is not a power of two (the baselines take log2 sizes)"));
    };
    if k == 0 {
        return Err(format!("'{raw}': sizes must be nonzero (2^0 = 1 element is not a benchmark)"));
    }
    if k > MAX_SIZE_LOG2 {
        return Err(format!("'{raw}' is above 2^{MAX_SIZE_LOG2}, the largest size the baselines take"));
    }
    Ok(k)
}

/// Parses `ROWSxCOLS` (e.g. `8192x32000`), both nonzero.
pub fn parse_shape(text: &str) -> Result<(usize, usize), String> {
    let (rows, cols) = text.split_once(['x', 'X']).ok_or_else(|| format!("'{text}' is not ROWSxCOLS"))?;
    let number = |s: &str| s.trim().parse::<usize>().ok().filter(|&v| v > 0);
    match (number(rows), number(cols)) {
        (Some(r), Some(c)) => Ok((r, c)),
        _ => Err(format!("'{text}': rows and cols must be nonzero whole numbers")),
    }
}

/// The selection a run asks for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selection {
    /// log2 sizes of `--sizes` (empty: not given).
    pub sizes_log2: Vec<u32>,
    /// `--shape` values (empty: not given).
    pub shapes: Vec<(usize, usize)>,
    /// `--variant` values (empty: not given).
    pub variants: Vec<String>,
}

impl Selection {
    /// The coverage reasons of this selection (each makes a run partial).
    pub fn reasons(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.sizes_log2.is_empty() {
            let list: Vec<String> = self.sizes_log2.iter().map(|k| format!("2^{k}")).collect();
            out.push(format!("--sizes {}", list.join(",")));
        }
        if !self.shapes.is_empty() {
            let list: Vec<String> = self.shapes.iter().map(|(r, c)| format!("{r}x{c}")).collect();
            out.push(format!("--shape {}", list.join(",")));
        }
        if !self.variants.is_empty() {
            out.push(format!("--variant {}", self.variants.join(",")));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_log2_or_element_counts_and_zero_is_refused() {
        let sizes: Vec<u32> = ["20", "2^10", "1048576", "16777216"].iter().map(|s| parse_size(s).unwrap()).collect();
        assert_eq!(sizes, [20, 10, 20, 24]);
        assert!(parse_size("0").unwrap_err().contains("nonzero"));
        assert!(parse_size("1000").unwrap_err().contains("power of two"));
        assert!(parse_size("31").unwrap_err().contains("above 2^30"));
        assert!(parse_size("ten").unwrap_err().contains("not a number"));
        assert!(parse_size("").is_err());
    }

    #[test]
    fn shapes_read_as_rows_x_cols() {
        assert_eq!(parse_shape("8192x32000"), Ok((8192, 32000)));
        assert!(parse_shape("8192").is_err());
        assert!(parse_shape("0x5").is_err());
    }
}
