//! The README's table of planted bugs is the committed mutants receipt's own
//! (`details.table_markdown` of `receipts/mutants.json`), so that a reader is
//! never shown the verdicts of a gallery the receipts no longer prove.

use std::path::Path;

fn repo_file(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

#[test]
fn readme_mutants_table_is_the_committed_receipts() {
    let receipt: serde_json::Value =
        serde_json::from_str(&repo_file("receipts/mutants.json")).expect("receipts/mutants.json is JSON");
    let table =
        receipt["details"]["table_markdown"].as_str().expect("receipts/mutants.json has details.table_markdown");
    assert!(table.lines().count() > 2, "the receipt's table has no rows: {table:?}");
    let readme = repo_file("README.md");
    assert!(
        readme.contains(table.trim_end()),
        "README.md's mutants table (section 'Proof that the harness catches real bugs') is not the committed \
         receipt's; replace it with the output of: python3 -c \"import json; \
         print(json.load(open('receipts/mutants.json'))['details']['table_markdown'])\""
    );
}
