//! The harness's layers, held to the code: every file belongs to one layer
//! by its path, every `crate::` or `super::` path a file names is resolved
//! to the file it reaches, and an arrow between two layers must be one the
//! design allows (the core knows no runner, bench, report or command line;
//! a runner and the bench know no command line and not each other; the bench
//! never draws; the report reads only the core). A new file belongs to the
//! layer of its folder, so it is held to the same rules at once.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The layers, from the bottom up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Layer {
    /// Contracts, catalogues, comparison, digests, receipts, the verdict hash.
    Core,
    /// The runners: the sweep's runner, sanitize, mutants, check, multi-GPU cases.
    Runner,
    /// Timing.
    Bench,
    /// Drawing.
    Report,
    /// The command line and the commands that compose the libraries.
    Cli,
}

/// Files and folders (relative to `harness/src`, `/`-separated, folders ending
/// in `/`) by layer, most specific first; everything else is core.
const PLACES: [(&str, Layer); 18] = [
    ("main.rs", Layer::Cli),
    // The library's root and its public API compose the runners, as a command does.
    ("lib.rs", Layer::Cli),
    ("api", Layer::Cli),
    ("cli.rs", Layer::Cli),
    ("commands/", Layer::Cli),
    ("bench/plot.rs", Layer::Report),
    ("bench/plot_draw.rs", Layer::Report),
    ("bench/report.rs", Layer::Report),
    ("bench/report_peers.rs", Layer::Report),
    ("bench/report_targets.rs", Layer::Report),
    ("bench/report_tests.rs", Layer::Report),
    ("report/", Layer::Report),
    ("multigpu/scaling_report.rs", Layer::Report),
    ("multigpu/scaling_bench", Layer::Bench),
    ("bench/", Layer::Bench),
    ("sweep/runner.rs", Layer::Runner),
    // The multi-GPU primitives and their cluster are library code; running
    // the catalogue over them is a runner's.
    ("multigpu/sweep_cases", Layer::Runner),
    ("mutants", Layer::Runner),
];

/// Runner folders beside [`PLACES`] (kept apart to keep that table short).
const RUNNER_FOLDERS: [&str; 2] = ["check/", "sanitize/"];

/// The arrows the design allows between different layers.
const ALLOWED: [(Layer, Layer); 7] = [
    (Layer::Cli, Layer::Core),
    (Layer::Cli, Layer::Runner),
    (Layer::Cli, Layer::Bench),
    (Layer::Cli, Layer::Report),
    (Layer::Runner, Layer::Core),
    (Layer::Bench, Layer::Core),
    (Layer::Report, Layer::Core),
];

/// Arrows not yet untangled, each with what still crosses: the report reads
/// the bench's record types (records, details, statistics, targets, the
/// baselines' and clocks' records), to move to the core's receipt schema.
/// (The bench no longer writes its report: the command does, after a run.)
const PENDING: [(Layer, Layer); 1] = [(Layer::Report, Layer::Bench)];

fn layer_of(relative: &str) -> Layer {
    if RUNNER_FOLDERS.iter().any(|f| relative.starts_with(f)) {
        return Layer::Runner;
    }
    PLACES.iter().find(|(place, _)| relative.starts_with(place)).map_or(Layer::Core, |(_, layer)| *layer)
}

fn source_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source folder").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file (`sweep/gpu/mod.rs` -> [sweep, gpu]; a test
/// file `x_tests.rs` is part of module `x`'s parent's tests: its own folder).
fn module_of(relative: &str) -> Vec<String> {
    let mut parts: Vec<String> = relative.trim_end_matches(".rs").split('/').map(str::to_string).collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "main" || p == "lib") {
        parts.pop();
    }
    parts
}

/// The file a module path reaches: the longest prefix that is a file or a folder's mod.rs.
fn file_of(root: &Path, module: &[String]) -> Option<String> {
    (1..=module.len()).rev().find_map(|k| {
        let path = module[..k].join("/");
        [format!("{path}.rs"), format!("{path}/mod.rs")].into_iter().find(|f| root.join(f).is_file())
    })
}

/// Every module path a file names through `crate::` or `super::` (grouped
/// `use` lists included), as absolute module paths.
fn named_modules(text: &str, module: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for marker in ["crate::", "super::"] {
        for (at, _) in text.match_indices(marker) {
            // `super` is the parent module (of a file, or of a folder's mod.rs).
            let base: Vec<String> =
                if marker == "crate::" { Vec::new() } else { module[..module.len().saturating_sub(1)].to_vec() };
            let rest = &text[at + marker.len()..];
            for path in paths_after(rest) {
                let mut full = base.clone();
                full.extend(path);
                out.push(full);
            }
        }
    }
    out
}

/// The `a::b::c` paths at the start of `rest`, expanding one `{x, y::z}` group.
fn paths_after(rest: &str) -> Vec<Vec<String>> {
    let head: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
    let base: Vec<String> = head.split("::").filter(|p| !p.is_empty()).map(str::to_string).collect();
    if head.ends_with("::") && rest[head.len()..].starts_with('{') {
        let group = &rest[head.len() + 1..rest.find('}').unwrap_or(rest.len())];
        return group
            .split(',')
            .map(|item| {
                let mut path = base.clone();
                path.extend(item.trim().split("::").map(|p| p.trim().to_string()).filter(|p| !p.is_empty()));
                path
            })
            .collect();
    }
    vec![base]
}

#[test]
fn every_arrow_between_layers_is_one_the_design_allows() {
    let root = source_root();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(files.len() > 100, "{} files", files.len());
    let mut wrong = BTreeSet::new();
    let mut seen = BTreeSet::new();
    for path in &files {
        let relative = path.strip_prefix(&root).expect("inside").to_string_lossy().replace('\\', "/");
        let from = layer_of(&relative);
        let text = std::fs::read_to_string(path).expect("readable");
        let module = module_of(&relative);
        for named in named_modules(&text, &module) {
            let Some(target) = file_of(&root, &named) else { continue };
            let to = layer_of(&target);
            if from == to {
                continue;
            }
            seen.insert((from, to));
            if !ALLOWED.contains(&(from, to)) && !PENDING.contains(&(from, to)) {
                wrong.insert(format!("{relative} ({from:?}) -> {target} ({to:?})"));
            }
        }
    }
    assert!(wrong.is_empty(), "arrows the layers forbid:\n{}", wrong.into_iter().collect::<Vec<_>>().join("\n"));
    // The pending arrows are listed only while they exist.
    for pending in PENDING {
        assert!(seen.contains(&pending), "{pending:?} is untangled: remove it from PENDING");
    }
}

#[test]
fn the_resolver_reads_paths_and_groups() {
    assert_eq!(paths_after("sweep::gpu::catalogue(plan)"), vec![vec!["sweep", "gpu", "catalogue"]]);
    assert_eq!(
        paths_after("receipts::{Tally, write_atomic};"),
        vec![vec!["receipts", "Tally"], vec!["receipts", "write_atomic"]]
    );
    assert_eq!(module_of("sweep/gpu/mod.rs"), vec!["sweep", "gpu"]);
    assert_eq!(layer_of("check/worker.rs"), Layer::Runner);
    assert_eq!(layer_of("bench/report.rs"), Layer::Report);
    assert_eq!(layer_of("sweep/gpu/scan.rs"), Layer::Core);
}

/// The file-to-file arrows of one crate's sources (`crate::`/`super::`
/// paths resolved to files), test files left out: a test module names its
/// parent by design.
fn arrows_of(crate_src: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    rust_files(crate_src, &mut files);
    let mut arrows = BTreeSet::new();
    for path in &files {
        let relative = path.strip_prefix(crate_src).expect("inside").to_string_lossy().replace('\\', "/");
        if relative.ends_with("tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(path).expect("readable");
        // Code only: before the tests, without comments (a doc link names no import).
        let production: String = text
            .split("#[cfg(test)]")
            .next()
            .unwrap_or("")
            .lines()
            .map(|line| line.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        for named in named_modules(&production, &module_of(&relative)) {
            match file_of(crate_src, &named) {
                Some(target) if target != relative && !target.ends_with("tests.rs") => {
                    arrows.insert((relative.clone(), target));
                }
                _ => {}
            }
        }
    }
    arrows.into_iter().collect()
}

/// The circles (strongly connected sets of more than one file) of a graph,
/// each sorted, by Tarjan's algorithm.
fn circles(arrows: &[(String, String)]) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = arrows.iter().flat_map(|(a, b)| [a, b]).collect();
    let nodes: Vec<&String> = nodes.into_iter().collect();
    let index_of = |n: &String| nodes.binary_search(&n).expect("a node");
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (a, b) in arrows {
        next[index_of(a)].push(index_of(b));
    }
    struct Walk<'a> {
        next: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        counter: usize,
        found: Vec<Vec<usize>>,
    }
    fn visit(w: &mut Walk<'_>, v: usize) {
        w.index[v] = Some(w.counter);
        w.low[v] = w.counter;
        w.counter += 1;
        w.stack.push(v);
        w.on_stack[v] = true;
        for &u in &w.next[v] {
            match w.index[u] {
                None => {
                    visit(w, u);
                    w.low[v] = w.low[v].min(w.low[u]);
                }
                Some(i) if w.on_stack[u] => w.low[v] = w.low[v].min(i),
                Some(_) => {}
            }
        }
        if Some(w.low[v]) == w.index[v] {
            let mut set = Vec::new();
            while let Some(u) = w.stack.pop() {
                w.on_stack[u] = false;
                set.push(u);
                if u == v {
                    break;
                }
            }
            if set.len() > 1 {
                w.found.push(set);
            }
        }
    }
    let n = nodes.len();
    let mut w = Walk {
        next: &next,
        index: vec![None; n],
        low: vec![0; n],
        stack: Vec::new(),
        on_stack: vec![false; n],
        counter: 0,
        found: Vec::new(),
    };
    for v in 0..n {
        if w.index[v].is_none() {
            visit(&mut w, v);
        }
    }
    let mut out: Vec<Vec<String>> =
        w.found.into_iter().map(|set| set.into_iter().map(|i| nodes[i].clone()).collect()).collect();
    for c in &mut out {
        c.sort();
    }
    out.sort();
    out
}

/// No crate has an import circle: the registry's catalogue builders import
/// the sweep, which names primitives from `registry/primitive.rs` alone, and
/// the kernels' policy owns the packed compaction field width that
/// `compact.rs` reads (both untangled with their GPU proof, 2026-12-05).
#[test]
fn no_crate_has_an_import_circle() {
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    for krate in ["types", "kernels", "model", "harness"] {
        let src = workspace.join(krate).join("src");
        for circle in circles(&arrows_of(&src)) {
            found.push(circle.into_iter().map(|f| format!("{krate}/src/{f}")).collect::<Vec<_>>());
        }
    }
    assert!(found.is_empty(), "import circles (files that import each other in a loop): {found:#?}");
}

#[test]
fn circles_are_found_and_a_chain_is_none() {
    let arrow = |a: &str, b: &str| (a.to_string(), b.to_string());
    let chain = [arrow("a", "b"), arrow("b", "c")];
    assert!(circles(&chain).is_empty());
    let looped = [arrow("a", "b"), arrow("b", "c"), arrow("c", "a"), arrow("c", "d"), arrow("d", "e"), arrow("e", "d")];
    assert_eq!(circles(&looped), vec![vec!["a", "b", "c"], vec!["d", "e"]]);
}
