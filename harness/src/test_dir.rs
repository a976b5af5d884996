//! Fresh temporary folders for tests.

use std::path::PathBuf;

/// An empty folder `<temp>/primlab-<name>-<pid>`: whatever a previous run of
/// the same test left there is removed first. `name` must be unique among the
/// tests of one process (tests run in parallel threads).
pub fn fresh_temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("primlab-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        panic!("cannot create the test folder {}: {e}", dir.display());
    }
    dir
}
