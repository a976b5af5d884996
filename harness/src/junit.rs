//! JUnit XML reports (`--junit PATH`), the format CI systems read to show
//! each failed case by name: one `<testcase>` per case (or case x tool),
//! with `<failure>` carrying the one-line failure report and `<skipped>`
//! its reason.

use std::fmt::Write as _;
use std::path::Path;

/// The outcome of one test case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It ran and passed.
    Passed,
    /// It ran and failed; the text is the failure line.
    Failed(String),
    /// It did not run; the text says why.
    Skipped(String),
}

/// One `<testcase>`: `classname` groups cases (e.g. "sweep.scan"), `name`
/// names the case (e.g. "decoupled_lookback.exclusive.i32 n=262145 small_ints").
#[derive(Debug, Clone, PartialEq)]
pub struct TestCase {
    /// The group.
    pub classname: String,
    /// The case.
    pub name: String,
    /// Seconds it took.
    pub seconds: f64,
    /// What happened.
    pub outcome: Outcome,
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 allows no other control characters.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// The XML of one test suite named `suite`.
pub fn render(suite: &str, cases: &[TestCase]) -> String {
    let failures = cases.iter().filter(|c| matches!(c.outcome, Outcome::Failed(_))).count();
    let skipped = cases.iter().filter(|c| matches!(c.outcome, Outcome::Skipped(_))).count();
    let seconds: f64 = cases.iter().map(|c| c.seconds).sum();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"{0}\" tests=\"{1}\" failures=\"{failures}\" skipped=\"{skipped}\" time=\"{seconds:.3}\">\n  \
         <testsuite name=\"{0}\" tests=\"{1}\" failures=\"{failures}\" skipped=\"{skipped}\" time=\"{seconds:.3}\">",
        escape(suite),
        cases.len()
    );
    for case in cases {
        let _ = write!(
            xml,
            "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
            escape(&case.classname),
            escape(&case.name),
            case.seconds
        );
        match &case.outcome {
            Outcome::Passed => xml.push_str("/>\n"),
            Outcome::Failed(line) => {
                let _ = writeln!(xml, ">\n      <failure message=\"{0}\">{0}</failure>\n    </testcase>", escape(line));
            }
            Outcome::Skipped(why) => {
                let _ = writeln!(xml, ">\n      <skipped message=\"{}\"/>\n    </testcase>", escape(why));
            }
        }
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

/// Writes the report atomically to `path`.
pub fn write(path: &Path, suite: &str, cases: &[TestCase]) -> anyhow::Result<()> {
    crate::receipts::write_atomic(path, render(suite, cases).as_bytes())?;
    println!("{suite}: JUnit report written to {} ({} test cases)", path.display(), cases.len());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_and_skips_are_counted_and_escaped() {
        let cases = vec![
            TestCase { classname: "sweep.scan".into(), name: "a n=1".into(), seconds: 0.5, outcome: Outcome::Passed },
            TestCase {
                classname: "sweep.scan".into(),
                name: "b <n=2>".into(),
                seconds: 0.25,
                outcome: Outcome::Failed("expected=1 got=\"2\" & more".into()),
            },
            TestCase {
                classname: "sweep.scan".into(),
                name: "c".into(),
                seconds: 0.0,
                outcome: Outcome::Skipped("no GPU: none".into()),
            },
        ];
        let xml = render("sweep", &cases);
        assert!(xml.contains("tests=\"3\" failures=\"1\" skipped=\"1\""), "{xml}");
        assert!(xml.contains("name=\"b &lt;n=2&gt;\""), "{xml}");
        assert!(xml.contains("<failure message=\"expected=1 got=&quot;2&quot; &amp; more\">"), "{xml}");
        assert!(xml.contains("<skipped message=\"no GPU: none\"/>"), "{xml}");
        assert_eq!(xml.matches("<testcase ").count(), 3);
    }
}
