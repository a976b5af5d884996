//! The command line: `harness <command> [options]`.

use clap::{Parser, Subcommand};

/// primlab harness: proves GPU primitives right against an exact model, race-free under
/// compute-sanitizer, and times them beside CUB and PyTorch.
///
/// Start with `harness sweep`. Without a GPU it checks the model and its hardware-scope
/// algorithms and says that GPU checks were skipped, and why.
#[derive(Debug, Parser)]
#[command(name = "harness", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check every primitive at the sizes where kernels break: the model's hardware-scope
    /// algorithms against the direct definitions (CPU), then every GPU kernel variant against
    /// the model with poisoned outputs (GPU, when one is present). Exits nonzero on any mismatch.
    Sweep(crate::commands::sweep::SweepArgs),
    /// Run every kernel variant under compute-sanitizer memcheck, racecheck, synccheck and
    /// initcheck at the boundary sizes; print a variant x tool table; write receipts/sanitize.json.
    Sanitize(crate::commands::sanitize::SanitizeArgs),
    /// Run the planted-bug gallery through sweep and sanitize and report which check caught each.
    Mutants(crate::commands::mutants::MutantsArgs),
    /// Time every primitive beside CUB, PyTorch and bandwidth ceilings; write receipts and a report.
    Bench(Box<crate::commands::bench::BenchCommand>),
    /// Regenerate the Markdown report and PNG plots from receipts (no GPU needed).
    Report(crate::commands::report::ReportArgs),
    /// Write the model's JSON fixtures into fixtures/ (or, with --check, fail if they drifted).
    Fixtures(crate::commands::fixtures::FixturesArgs),
    /// Inspect the committed GPU receipts.
    Receipts(crate::commands::receipts::ReceiptsArgs),
    /// (internal) Run one primitive's GPU cases with case markers, for compute-sanitizer.
    #[command(hide = true)]
    SanitizeChild(crate::commands::sweep::SanitizeChildArgs),
    /// Check your own kernel (CUDA C++, PTX or cubin, described by a TOML manifest) against the case catalogue.
    Check(crate::commands::check::CheckArgs),
    /// Export the case catalogue as .npy files for other frameworks, and verify their outputs.
    Cases(crate::commands::cases::CasesArgs),
}

/// Flags renamed so that every command spells them alike: (command, old
/// spelling, new spelling). The old one is a clap alias for one release;
/// [`old_spelling_warnings`] says so on stderr.
pub const RENAMED_FLAGS: [(&str, &str, &str); 2] = [("sweep", "--json", "--receipt"), ("bench", "--report", "--out")];

/// The warnings for old spellings in a command line (`args[0]` is the
/// program): a flag of [`RENAMED_FLAGS`] given to its command, alone or as
/// `--flag=value`, before any `--`. None for the harness's own internal runs
/// (the hidden `--mutant` flag: `harness mutants` starts its sweeps with the
/// old `--json`, and their logs are not read by a person).
pub fn old_spelling_warnings(args: &[String]) -> Vec<String> {
    let Some(command) = args.iter().skip(1).find(|a| !a.starts_with('-')) else { return Vec::new() };
    if args.iter().any(|a| a == "--mutant" || a.starts_with("--mutant=")) {
        return Vec::new();
    }
    let mut warnings = Vec::new();
    for arg in args.iter().skip(1).take_while(|a| a.as_str() != "--") {
        for (cmd, old, new) in RENAMED_FLAGS {
            let named = arg == old || arg.strip_prefix(old).is_some_and(|rest| rest.starts_with('='));
            if command == cmd && named {
                warnings.push(format!(
                    "warning: `harness {cmd} {old}` is the old spelling of {new}; it keeps working for one release"
                ));
            }
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::bench::BenchAction;
    use crate::registry::Primitive;
    use clap::CommandFactory;
    use std::path::PathBuf;

    /// Every command's `--primitive` takes exactly the registry's values.
    #[test]
    fn every_command_line_primitive_list_is_the_registry() {
        use clap::CommandFactory;
        let names: Vec<String> = Primitive::ALL.iter().map(|p| p.name().to_string()).collect();
        let cli = Cli::command();
        for command in ["sweep", "sanitize", "bench"] {
            let sub = cli.find_subcommand(command).expect("command exists");
            let arg = sub.get_arguments().find(|a| a.get_id() == "primitives").expect("--primitive");
            let values: Vec<String> = arg.get_possible_values().iter().map(|v| v.get_name().to_string()).collect();
            assert_eq!(values, names, "harness {command} --primitive");
        }
    }

    #[test]
    fn check_stops_at_the_first_failure_unless_told_otherwise() {
        let parse = |extra: &[&str]| {
            let mut argv = vec!["harness", "check", "--manifest", "m.toml"];
            argv.extend_from_slice(extra);
            match Cli::try_parse_from(argv).map(|c| c.command) {
                Ok(Command::Check(args)) => Ok(crate::check::CheckOptions::from(&args)),
                Ok(_) => unreachable!("a check"),
                Err(e) => Err(e.to_string()),
            }
        };
        let default = parse(&[]).expect("parses");
        assert_eq!((default.maxfail, default.deep), (Some(1), false));
        assert_eq!(parse(&["--maxfail", "3"]).expect("parses").maxfail, Some(3));
        assert_eq!(parse(&["--all", "--deep"]).map(|o| (o.maxfail, o.deep)), Ok((None, true)));
        assert!(parse(&["--maxfail", "0"]).is_err(), "0 would stop before any failure");
        assert!(parse(&["--all", "--maxfail", "2"]).is_err(), "--all and --maxfail conflict");
    }

    #[test]
    fn the_cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn bench_takes_axes_hot_and_a_compare_subcommand() {
        let parsed = Cli::try_parse_from(["harness", "bench", "--sizes", "20,2^24", "--shape", "4096x1024", "--hot"]);
        let Command::Bench(b) = parsed.unwrap().command else { panic!("not bench") };
        assert_eq!((b.args.sizes, b.args.shapes, b.args.hot), (vec![20, 24], vec![(4096, 1024)], true));
        assert!(b.action.is_none());
        let Command::Bench(c) =
            Cli::try_parse_from(["harness", "bench", "compare", "a.json", "b.json"]).unwrap().command
        else {
            panic!("not bench")
        };
        let Some(BenchAction::Compare { old, new, threshold, all, .. }) = c.action else { panic!("not compare") };
        assert_eq!((old, new), (PathBuf::from("a.json"), PathBuf::from("b.json")));
        assert_eq!((threshold, all), (0.03, false), "the default gate is 3 %");
        let parsed = Cli::try_parse_from(["harness", "bench", "compare", "a", "b", "--threshold", "5%", "--all"]);
        let Command::Bench(c) = parsed.unwrap().command else { panic!("not bench") };
        let Some(BenchAction::Compare { threshold, all, .. }) = c.action else { panic!("not compare") };
        assert_eq!((threshold, all), (0.05, true));
        assert!(Cli::try_parse_from(["harness", "bench", "compare", "a", "b", "--threshold", "5"]).is_err());
        let parsed =
            Cli::try_parse_from(["harness", "bench", "--max-noise", "1%", "--max-time", "2", "--min-samples", "8"]);
        let Command::Bench(b) = parsed.unwrap().command else { panic!("not bench") };
        assert_eq!((b.args.max_noise, b.args.max_time, b.args.min_samples), (Some(0.01), Some(2.0), Some(8)));
        let parsed = Cli::try_parse_from(["harness", "bench", "--timeout", "3", "--format", "csv"]);
        let Command::Bench(b) = parsed.unwrap().command else { panic!("not bench") };
        assert_eq!((b.args.max_time, b.args.format), (Some(3.0), crate::bench::export::OutputFormat::Csv));
        assert!(Cli::try_parse_from(["harness", "bench", "--max-time", "0"]).is_err());
        assert!(Cli::try_parse_from(["harness", "bench", "--sizes", "0"]).is_err());
    }

    #[test]
    fn every_command_reads_sizes_in_the_same_grammar() {
        let want = vec![1000, 1 << 20, (1 << 28) + 1];
        let Command::Sweep(a) =
            Cli::try_parse_from(["harness", "sweep", "--sizes", "1000,2^20,2^28+1"]).unwrap().command
        else {
            panic!("not a sweep")
        };
        assert_eq!(a.sizes, want);
        let Command::Sanitize(a) =
            Cli::try_parse_from(["harness", "sanitize", "--sizes", "1000,2^20,2^28+1"]).unwrap().command
        else {
            panic!("not sanitize")
        };
        assert_eq!(a.sizes, want);
        let Command::Check(a) =
            Cli::try_parse_from(["harness", "check", "--manifest", "m.toml", "--sizes", "1000,2^20,2^28+1"])
                .unwrap()
                .command
        else {
            panic!("not check")
        };
        assert_eq!(a.sizes, want);
        let Command::Cases(a) = Cli::try_parse_from([
            "harness",
            "cases",
            "export",
            "--primitive",
            "scan",
            "--sizes",
            "1000,2^20,2^28+1",
            "d",
        ])
        .unwrap()
        .command
        else {
            panic!("not cases")
        };
        let crate::commands::cases::CasesAction::Export(e) = a.action else { panic!("not export") };
        assert_eq!(e.sizes, want);
        let Command::Bench(b) =
            Cli::try_parse_from(["harness", "bench", "--sizes", "2^20,1048576,2^10+2^10"]).unwrap().command
        else {
            panic!("not bench")
        };
        assert_eq!(b.args.sizes, vec![20, 20, 11], "bench keeps log2 exponents inside");
        let err = Cli::try_parse_from(["harness", "sweep", "--sizes", "2^20+x"]).unwrap_err().to_string();
        assert!(err.contains("'2^20+x' is not a size"), "{err}");
    }

    #[test]
    fn old_spellings_still_parse_and_are_warned_about() {
        let Command::Sweep(a) = Cli::try_parse_from(["harness", "sweep", "--json", "r.json"]).unwrap().command else {
            panic!("not a sweep")
        };
        assert_eq!(a.json, Some(PathBuf::from("r.json")));
        let Command::Sweep(a) = Cli::try_parse_from(["harness", "sweep", "--receipt", "r.json"]).unwrap().command
        else {
            panic!("not a sweep")
        };
        assert_eq!(a.json, Some(PathBuf::from("r.json")));
        let Command::Bench(b) = Cli::try_parse_from(["harness", "bench", "--report=dir"]).unwrap().command else {
            panic!("not bench")
        };
        assert_eq!(b.args.report, Some(PathBuf::from("dir")));
        let Command::Bench(b) = Cli::try_parse_from(["harness", "bench", "--out", "dir"]).unwrap().command else {
            panic!("not bench")
        };
        assert_eq!(b.args.report, Some(PathBuf::from("dir")));
        let line = |args: &[&str]| old_spelling_warnings(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>());
        let warned = line(&["harness", "sweep", "--json", "r.json", "--quick"]);
        assert_eq!(warned.len(), 1);
        assert!(warned[0].contains("`harness sweep --json` is the old spelling of --receipt"), "{warned:?}");
        assert!(line(&["harness", "bench", "--report=d"])[0].contains("of --out"));
        assert!(line(&["harness", "sweep", "--receipt", "r.json"]).is_empty());
        assert!(line(&["harness", "report", "--out", "d"]).is_empty());
        assert!(line(&["harness", "bench", "--reporter"]).is_empty());
        assert!(line(&["harness", "sweep", "--", "--json"]).is_empty());
        assert!(line(&["harness", "sweep", "--mutant", "3", "--json", "r.json"]).is_empty(), "internal runs");
    }

    #[test]
    fn check_and_cases_verify_write_junit() {
        let Command::Check(a) =
            Cli::try_parse_from(["harness", "check", "--manifest", "m.toml", "--junit", "j.xml"]).unwrap().command
        else {
            panic!("not check")
        };
        assert_eq!(a.junit, Some(PathBuf::from("j.xml")));
        let Command::Cases(c) =
            Cli::try_parse_from(["harness", "cases", "verify", "d", "--junit", "j.xml"]).unwrap().command
        else {
            panic!("not cases")
        };
        let crate::commands::cases::CasesAction::Verify { junit, .. } = c.action else { panic!("not verify") };
        assert_eq!(junit, Some(PathBuf::from("j.xml")));
    }

    #[test]
    fn gpus_parses_and_rejects_zero() {
        use crate::multigpu::GpuCount;
        let Command::Sweep(a) = Cli::try_parse_from(["harness", "sweep", "--gpus", "2"]).unwrap().command else {
            panic!("not a sweep")
        };
        assert_eq!(a.gpus, Some(GpuCount::Exactly(2)));
        let Command::Bench(b) = Cli::try_parse_from(["harness", "bench", "--gpus", "all", "--quick"]).unwrap().command
        else {
            panic!("not a bench")
        };
        assert_eq!(b.gpus, Some(GpuCount::All));
        assert!(b.args.quick);
        let Command::Bench(b) = Cli::try_parse_from(["harness", "bench", "--quick"]).unwrap().command else {
            panic!("not a bench")
        };
        assert_eq!(b.gpus, None);
        let err = Cli::try_parse_from(["harness", "sweep", "--gpus", "0"]).unwrap_err().to_string();
        assert!(err.contains("--gpus 0 asks for no GPU"), "{err}");
        let err = Cli::try_parse_from(["harness", "bench", "--gpus", "many"]).unwrap_err().to_string();
        assert!(err.contains("not a GPU count"), "{err}");
        assert!(Cli::try_parse_from(["harness", "sweep", "--gpus", "1", "--cpu-only"]).is_err());
    }

    #[test]
    fn unknown_arguments_are_errors_not_panics() {
        let err = Cli::try_parse_from(["harness", "sweep", "--bogus"]).unwrap_err();
        assert!(err.to_string().contains("--bogus"));
        let err = Cli::try_parse_from(["harness", "sweep", "--seed", "x"]).unwrap_err();
        assert!(err.to_string().contains("not a seed"));
    }
}
