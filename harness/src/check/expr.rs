//! Launch-geometry expressions of n: integers, `n`, `+ - * / %`,
//! parentheses, `ceil_div(a, b)`, `min(a, b)`, `max(a, b)`, with the usual
//! precedence (`* / %` bind tighter than `+ -`), left to right, evaluated in
//! 128-bit integers (`/` truncates; division by zero is an error). Where the
//! caller allows them ([`parse_with`]), the contract's integer parameters
//! (`rows`, `cols`, `segments`, `bins`) are names too; their values are
//! known per case ([`Expr::eval_with`]).

use std::fmt;

/// A parsed expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    /// An integer literal.
    Int(i128),
    /// The input size.
    N,
    /// A parameter of the case (`rows`, `cols`, ...), bound per case.
    Name(String),
    /// A binary operation.
    Binary(char, Box<Expr>, Box<Expr>),
    /// Negation.
    Neg(Box<Expr>),
    /// `ceil_div`, `min` or `max` of two arguments.
    Call(&'static str, Box<Expr>, Box<Expr>),
}

/// Why an expression does not parse: the message and the 1-based column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based column of the offending character (one past the end for a missing token).
    pub column: usize,
    /// What was wrong.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at column {}: {}", self.column, self.message)
    }
}

const FUNCTIONS: [&str; 3] = ["ceil_div", "min", "max"];

/// The most nested parentheses, calls and negations an expression may hold:
/// parsing and evaluating recurse once per level, and the stack is finite.
pub const MAX_DEPTH: usize = 64;

/// The longest expression text accepted: it bounds the operators chained on
/// one level, whose tree evaluation (and drop) also recurse.
pub const MAX_LEN: usize = 1024;

struct Parser<'a> {
    chars: Vec<char>,
    at: usize,
    text: &'a str,
    depth: usize,
    names: &'a [&'a str],
}

/// Parses `text`, an expression of n alone.
#[cfg(test)]
pub fn parse(text: &str) -> Result<Expr, ParseError> {
    parse_with(text, &[])
}

/// Parses `text`, where `names` (the case's integer parameters) may appear beside n.
pub fn parse_with(text: &str, names: &[&str]) -> Result<Expr, ParseError> {
    if text.chars().count() > MAX_LEN {
        return Err(ParseError {
            column: MAX_LEN + 1,
            message: format!("the expression is longer than {MAX_LEN} characters"),
        });
    }
    let mut p = Parser { chars: text.chars().collect(), at: 0, text, depth: 0, names };
    if p.text.trim().is_empty() {
        return Err(p.error("the expression is empty"));
    }
    let e = p.sum()?;
    p.skip_space();
    if p.at < p.chars.len() {
        return Err(p.error(&format!("unexpected '{}'", p.chars[p.at])));
    }
    Ok(e)
}

impl Parser<'_> {
    fn error(&self, message: &str) -> ParseError {
        ParseError { column: self.at + 1, message: message.to_string() }
    }

    fn skip_space(&mut self) {
        while self.chars.get(self.at).is_some_and(|c| c.is_whitespace()) {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_space();
        self.chars.get(self.at).copied()
    }

    fn expect(&mut self, c: char) -> Result<(), ParseError> {
        match self.peek() {
            Some(d) if d == c => {
                self.at += 1;
                Ok(())
            }
            Some(d) => Err(self.error(&format!("expected '{c}', found '{d}'"))),
            None => Err(self.error(&format!("expected '{c}' before the end"))),
        }
    }

    fn sum(&mut self) -> Result<Expr, ParseError> {
        let mut left = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.at += 1;
            left = Expr::Binary(op, Box::new(left), Box::new(self.product()?));
        }
        Ok(left)
    }

    fn product(&mut self) -> Result<Expr, ParseError> {
        let mut left = self.unary()?;
        while let Some(op @ ('*' | '/' | '%')) = self.peek() {
            self.at += 1;
            left = Expr::Binary(op, Box::new(left), Box::new(self.unary()?));
        }
        Ok(left)
    }

    /// Every nested level passes here once (parentheses and call arguments
    /// through `atom`, negations directly), so the depth is counted here.
    fn unary(&mut self) -> Result<Expr, ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(&format!("the expression nests deeper than {MAX_DEPTH} levels")));
        }
        let result = if self.peek() == Some('-') {
            self.at += 1;
            self.unary().map(|e| Expr::Neg(Box::new(e)))
        } else {
            self.atom()
        };
        self.depth -= 1;
        result
    }

    fn atom(&mut self) -> Result<Expr, ParseError> {
        match self.peek() {
            None => Err(self.error("expected a number, n, a function or '(' before the end")),
            Some('(') => {
                self.at += 1;
                let e = self.sum()?;
                self.expect(')')?;
                Ok(e)
            }
            Some(c) if c.is_ascii_digit() => {
                let start = self.at;
                while self.chars.get(self.at).is_some_and(|c| c.is_ascii_digit() || *c == '_') {
                    self.at += 1;
                }
                let digits: String = self.chars[start..self.at].iter().filter(|c| **c != '_').collect();
                digits
                    .parse()
                    .map(Expr::Int)
                    .map_err(|_| ParseError { column: start + 1, message: format!("the number {digits} is too large") })
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let start = self.at;
                while self.chars.get(self.at).is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_') {
                    self.at += 1;
                }
                let word: String = self.chars[start..self.at].iter().collect();
                if word == "n" {
                    return Ok(Expr::N);
                }
                if self.names.contains(&word.as_str()) && self.peek() != Some('(') {
                    return Ok(Expr::Name(word));
                }
                let Some(name) = FUNCTIONS.into_iter().find(|f| *f == word) else {
                    let names: String = self.names.iter().map(|n| format!("{n}, ")).collect();
                    return Err(ParseError {
                        column: start + 1,
                        message: format!("unknown name '{word}' (use n, {names}ceil_div, min or max)"),
                    });
                };
                self.expect('(')?;
                let a = self.sum()?;
                self.expect(',')?;
                let b = self.sum()?;
                self.expect(')')?;
                Ok(Expr::Call(name, Box::new(a), Box::new(b)))
            }
            Some(c) => Err(self.error(&format!("unexpected '{c}'"))),
        }
    }
}

impl Expr {
    /// The value at input size `n`, or why it has none (division by zero,
    /// overflow, a parameter, which has a value only per case).
    pub fn eval(&self, n: usize) -> Result<i128, String> {
        self.eval_with(n, &|_| None)
    }

    /// Whether it names a parameter (so its value is known only per case).
    pub fn names_a_parameter(&self) -> bool {
        match self {
            Expr::Name(_) => true,
            Expr::Int(_) | Expr::N => false,
            Expr::Neg(e) => e.names_a_parameter(),
            Expr::Binary(_, a, b) | Expr::Call(_, a, b) => a.names_a_parameter() || b.names_a_parameter(),
        }
    }

    /// The value at input size `n` with the parameters `value` gives.
    pub fn eval_with(&self, n: usize, value: &dyn Fn(&str) -> Option<i128>) -> Result<i128, String> {
        let over = || "the value overflows".to_string();
        Ok(match self {
            Expr::Int(v) => *v,
            Expr::N => n as i128,
            Expr::Name(name) => value(name).ok_or_else(|| format!("{name} has a value only per case"))?,
            Expr::Neg(e) => e.eval_with(n, value)?.checked_neg().ok_or_else(over)?,
            Expr::Binary(op, a, b) => {
                let (a, b) = (a.eval_with(n, value)?, b.eval_with(n, value)?);
                match op {
                    '+' => a.checked_add(b).ok_or_else(over)?,
                    '-' => a.checked_sub(b).ok_or_else(over)?,
                    '*' => a.checked_mul(b).ok_or_else(over)?,
                    '/' => a.checked_div(b).ok_or("division by zero")?,
                    _ => a.checked_rem(b).ok_or("remainder by zero")?,
                }
            }
            Expr::Call(name, a, b) => {
                let (a, b) = (a.eval_with(n, value)?, b.eval_with(n, value)?);
                match *name {
                    "min" => a.min(b),
                    "max" => a.max(b),
                    _ if b == 0 => return Err("ceil_div by zero".into()),
                    _ => a.checked_add(b - 1).ok_or_else(over)?.div_euclid(b),
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, n: usize) -> i128 {
        parse(text).unwrap_or_else(|e| panic!("{text}: {e}")).eval(n).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn precedence_functions_and_parentheses() {
        assert_eq!(at("1 + 2 * 3", 0), 7);
        assert_eq!(at("(1 + 2) * 3", 0), 9);
        assert_eq!(at("ceil_div(n, 1024)", 1025), 2);
        assert_eq!(at("ceil_div(n, 1024)", 1024), 1);
        assert_eq!(at("min(max(n, 5), 1_000)", 3), 5);
        assert_eq!(at("n % 7 - -1", 15), 2);
        assert_eq!(at("n / 2 / 2", 17), 4);
        assert_eq!(at("8 * (ceil_div(n, 256) + 1)", 257), 24);
    }

    #[test]
    fn parse_errors_say_where() {
        let e = parse("ceil_div(n 1024)").unwrap_err();
        assert_eq!(e.to_string(), "at column 12: expected ',', found '1'");
        assert_eq!(
            parse("n +").unwrap_err().to_string(),
            "at column 4: expected a number, n, a function or '(' before the end"
        );
        assert_eq!(
            parse("blocks * 2").unwrap_err().to_string(),
            "at column 1: unknown name 'blocks' (use n, ceil_div, min or max)"
        );
        assert_eq!(parse("n $ 2").unwrap_err().to_string(), "at column 3: unexpected '$'");
        assert_eq!(parse("  ").unwrap_err().column, 1);
    }

    #[test]
    fn deep_or_long_expressions_are_refused_not_a_stack_overflow() {
        let deep = format!("{}n{}", "(".repeat(10_000), ")".repeat(10_000));
        let e = parse(&deep).unwrap_err();
        assert!(e.message.contains("longer than"), "{e}");
        let nested = format!("{}n{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
        assert!(parse(&nested).unwrap_err().message.contains("nests deeper than 64"));
        let negated = format!("{}1", "-".repeat(MAX_DEPTH + 1));
        assert!(parse(&negated).unwrap_err().message.contains("nests deeper"));
        let calls = format!("{}n{}", "min(1, ".repeat(100), ")".repeat(100));
        assert!(parse(&calls).unwrap_err().message.contains("nests deeper"));
        let fine = format!("{}n{}", "(".repeat(MAX_DEPTH - 1), ")".repeat(MAX_DEPTH - 1));
        assert_eq!(parse(&fine).expect("within the limit").eval(3), Ok(3));
        let chained = vec!["1"; 400].join("+");
        assert_eq!(parse(&chained).expect("a long chain").eval(0), Ok(400));
    }

    #[test]
    fn division_by_zero_is_an_error_not_a_panic() {
        assert!(parse("n / (n - 4)").expect("parses").eval(4).is_err());
        assert!(parse("ceil_div(1, n)").expect("parses").eval(0).is_err());
    }

    #[test]
    fn parameters_are_names_where_allowed_and_bound_per_case() {
        let names = ["rows", "cols"];
        let e = parse_with("ceil_div(rows * cols, 256) + min(rows, n)", &names).expect("parses");
        assert!(e.names_a_parameter());
        let bound = |name: &str| match name {
            "rows" => Some(61),
            "cols" => Some(1000),
            _ => None,
        };
        assert_eq!(e.eval_with(33, &bound), Ok((61 * 1000 + 255) / 256 + 33));
        assert_eq!(e.eval(33).unwrap_err(), "rows has a value only per case");
        assert!(!parse("ceil_div(n, 256)").expect("parses").names_a_parameter());
        // Where no parameter is allowed, the name is refused with the allowed ones.
        let refused = parse("rows").unwrap_err();
        assert_eq!(refused.message, "unknown name 'rows' (use n, ceil_div, min or max)");
        let listed = parse_with("segs", &names).unwrap_err();
        assert_eq!(listed.message, "unknown name 'segs' (use n, rows, cols, ceil_div, min or max)");
    }
}
