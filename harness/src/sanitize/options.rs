//! The command-line options each sanitizer tool runs with, chosen once from
//! the installed compute-sanitizer's `--help` text: an option the install
//! does not list is left out (an older release rejects unknown options and
//! runs nothing), and the receipt records what was used and what was not.

use super::parse::Tool;
use serde::Serialize;

/// The exit code compute-sanitizer returns when its tool found an error.
pub const SANITIZER_ERROR_EXIT: i32 = 99;

/// Records the XML file holds at most (`--print-limit`); the text log
/// prints the same records, so the two are compared below this count.
pub const PRINT_LIMIT: usize = 200;

/// memcheck's extra checks: leaks of device allocations at exit, padding
/// after every allocation (an overrun by a few elements lands in the pad and
/// is reported instead of hitting a neighbouring buffer), the device heap,
/// and races between stream-ordered allocations and their uses.
pub const MEMCHECK_EXTRAS: [(&str, &str); 4] = [
    ("--leak-check", "full"),
    ("--padding", "512"),
    ("--check-device-heap", "yes"),
    ("--track-stream-ordered-races", "all"),
];

/// Options every job needs: without them a job's findings cannot be read.
const REQUIRED: [&str; 4] = ["--xml", "--save", "--error-exitcode", "--print-limit"];

/// The options chosen for this install.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SanitizerOptions {
    /// memcheck extras the install lists, as (option, value).
    pub memcheck: Vec<(String, String)>,
    /// Whether `--racecheck-report` is listed (then racecheck reports hazards and analysis).
    pub racecheck_report_all: bool,
    /// Options the harness would use but the install does not list.
    pub left_out: Vec<String>,
}

/// Whether `help` (the `--help` text) lists `option`: a line whose first
/// word is the option (e.g. `  --padding arg (=0)`), or `-x [ --option ]`.
pub fn lists(help: &str, option: &str) -> bool {
    help.lines().any(|line| {
        let words: Vec<&str> = line.split_whitespace().collect();
        words.first() == Some(&option) || words.windows(2).any(|w| w[0] == "[" && w[1] == option)
    })
}

impl SanitizerOptions {
    /// Chooses the options from the `--help` text; an error when a required one is missing.
    pub fn detect(help: &str) -> anyhow::Result<SanitizerOptions> {
        let missing: Vec<&str> = REQUIRED.iter().copied().filter(|o| !lists(help, o)).collect();
        if !missing.is_empty() {
            anyhow::bail!(
                "this compute-sanitizer does not list {} in --help: the harness reads every job's findings from \
                 --xml --save and needs --error-exitcode and --print-limit (install CUDA 12 or newer)",
                missing.join(", ")
            );
        }
        let mut left_out = Vec::new();
        let mut memcheck = Vec::new();
        for (option, value) in MEMCHECK_EXTRAS {
            if lists(help, option) {
                memcheck.push((option.to_string(), value.to_string()));
            } else {
                left_out.push(option.to_string());
            }
        }
        let racecheck_report_all = lists(help, "--racecheck-report");
        if !racecheck_report_all {
            left_out.push("--racecheck-report".into());
        }
        Ok(SanitizerOptions { memcheck, racecheck_report_all, left_out })
    }

    /// The arguments of one job before the program: tool, exit code, print
    /// limit, the tool's extras, and the XML file.
    pub fn args(&self, tool: Tool, xml: &std::path::Path) -> Vec<String> {
        let mut args = vec![
            "--tool".to_string(),
            tool.name().into(),
            "--error-exitcode".into(),
            SANITIZER_ERROR_EXIT.to_string(),
            "--print-limit".into(),
            PRINT_LIMIT.to_string(),
        ];
        match tool {
            Tool::Memcheck => {
                for (option, value) in &self.memcheck {
                    args.extend([option.clone(), value.clone()]);
                }
            }
            // Hazards (errors and warnings) as well as the analysis.
            Tool::Racecheck if self.racecheck_report_all => args.extend(["--racecheck-report".into(), "all".into()]),
            _ => {}
        }
        args.extend(["--xml".into(), "--save".into(), xml.to_string_lossy().into_owned()]);
        args
    }

    /// The extra options of each tool as one string each, for the receipt.
    pub fn summary(&self) -> serde_json::Value {
        let line = |tool: Tool| -> String {
            let args = self.args(tool, std::path::Path::new("<log_dir>/<job>.xml"));
            args.iter().skip(2).cloned().collect::<Vec<_>>().join(" ")
        };
        serde_json::json!({
            "memcheck": line(Tool::Memcheck),
            "racecheck": line(Tool::Racecheck),
            "synccheck": line(Tool::Synccheck),
            "initcheck": line(Tool::Initcheck),
            "left_out": self.left_out,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn help() -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sanitize/testdata/help_2025.3.1.txt");
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn the_2025_3_install_supports_every_extra() {
        let options = SanitizerOptions::detect(&help()).unwrap();
        assert_eq!(options.memcheck.len(), 4, "{options:?}");
        assert!(options.racecheck_report_all);
        assert!(options.left_out.is_empty());
        let args = options.args(Tool::Memcheck, std::path::Path::new("/l/reduce-memcheck.xml"));
        let line = args.join(" ");
        assert!(line.contains("--leak-check full --padding 512 --check-device-heap yes"), "{line}");
        assert!(line.contains("--track-stream-ordered-races all"), "{line}");
        assert!(line.ends_with("--xml --save /l/reduce-memcheck.xml"), "{line}");
        assert!(line.contains("--error-exitcode 99"), "{line}");
        let race = options.args(Tool::Racecheck, std::path::Path::new("x.xml")).join(" ");
        assert!(race.contains("--racecheck-report all") && !race.contains("--padding"), "{race}");
    }

    #[test]
    fn unlisted_options_are_left_out_and_named() {
        let help = help()
            .lines()
            .filter(|l| !l.contains("--padding") && !l.contains("--leak-check"))
            .collect::<Vec<_>>()
            .join("\n");
        let options = SanitizerOptions::detect(&help).unwrap();
        assert_eq!(options.left_out, vec!["--leak-check".to_string(), "--padding".to_string()]);
        let line = options.args(Tool::Memcheck, std::path::Path::new("x.xml")).join(" ");
        assert!(!line.contains("--padding") && line.contains("--check-device-heap yes"), "{line}");
    }

    #[test]
    fn an_install_without_xml_is_refused() {
        let help = help().lines().filter(|l| !l.trim_start().starts_with("--xml")).collect::<Vec<_>>().join("\n");
        let err = SanitizerOptions::detect(&help).unwrap_err().to_string();
        assert!(err.contains("--xml"), "{err}");
        assert!(SanitizerOptions::detect("").is_err());
    }
}
