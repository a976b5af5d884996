//! The host's memory, which a case's inputs, model answers and downloaded
//! outputs live in: a case that needs more than is free is not run ("could
//! not run", with both numbers: no fault of the kernel's), and checks that
//! run side by side on one host take turns at their large cases through a
//! host-wide lock file, so that two cases that each fit alone are never
//! made at once and killed together.

use std::path::PathBuf;
use std::time::Duration;

/// A case needing at least this much host memory takes [`LargeCaseLock`].
pub const LARGE_CASE_BYTES: u64 = 4_000_000_000;

/// The share of the free memory a case may plan to use (the rest: the
/// process, the allocator, the page cache the copies need).
const FREE_SHARE: f64 = 0.85;

/// Bytes of host memory available now (`MemAvailable`), if the host says.
pub fn available() -> Option<u64> {
    meminfo("MemAvailable:")
}

/// Bytes of host memory in all (`MemTotal`), if the host says: what a
/// check plans its sizes for ([`super::budget`]).
pub fn total() -> Option<u64> {
    meminfo("MemTotal:")
}

/// The value of `/proc/meminfo`'s line `field` (kB there), in bytes.
fn meminfo(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 = text.lines().find_map(|l| l.strip_prefix(field))?.split_whitespace().next()?.parse().ok()?;
    Some(kib * 1024)
}

/// Why a case needing `needs` bytes cannot run with `free` bytes available, if it cannot.
pub fn refusal(needs: u64, free: u64) -> Option<String> {
    (needs as f64 > free as f64 * FREE_SHARE).then(|| {
        format!(
            "could not run: the case needs about {:.1} GB of host memory and {:.1} GB are free \
             (another process holds the rest, or the host is too small for this size)",
            needs as f64 / 1e9,
            free as f64 / 1e9
        )
    })
}

/// The host-wide turn of one large case: a lock file holding the owner's
/// process id, created exclusively; a file whose owner is gone (it died
/// with its case) is taken over.
pub struct LargeCaseLock {
    path: PathBuf,
}

impl LargeCaseLock {
    /// The lock file every check on this host uses.
    fn path() -> PathBuf {
        std::env::temp_dir().join("primlab-check-large-case.lock")
    }

    /// Waits for the turn, calling `waiting` about every 10 s while another
    /// process holds it (the caller keeps its watchdog informed).
    pub fn take(mut waiting: impl FnMut()) -> std::io::Result<LargeCaseLock> {
        Self::take_at(Self::path(), &mut waiting)
    }

    fn take_at(path: PathBuf, waiting: &mut dyn FnMut()) -> std::io::Result<LargeCaseLock> {
        let me = std::process::id().to_string();
        let mut polls = 0u32;
        loop {
            match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut file) => {
                    std::io::Write::write_all(&mut file, me.as_bytes())?;
                    return Ok(LargeCaseLock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let owner = std::fs::read_to_string(&path).unwrap_or_default();
                    let alive = !owner.trim().is_empty() && PathBuf::from("/proc").join(owner.trim()).exists();
                    if !alive {
                        // Its owner died (or had not written its id yet: one more look first).
                        if polls > 0 || owner.trim().is_empty() {
                            let _ = std::fs::remove_file(&path);
                        }
                    } else if polls % 50 == 49 {
                        waiting();
                    }
                    polls += 1;
                    std::thread::sleep(Duration::from_millis(200));
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl Drop for LargeCaseLock {
    fn drop(&mut self) {
        // Only our own file: never another process's turn.
        if std::fs::read_to_string(&self.path).is_ok_and(|owner| owner.trim() == std::process::id().to_string()) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_that_does_not_fit_says_both_numbers() {
        assert_eq!(refusal(1_000_000_000, 10_000_000_000), None);
        let why = refusal(43_000_000_000, 30_000_000_000).expect("refused");
        assert!(why.starts_with("could not run") && why.contains("43.0 GB") && why.contains("30.0 GB"), "{why}");
        assert!(available().is_some_and(|b| b > 0), "this host says what is free");
        assert!(total().is_some_and(|t| available().is_some_and(|a| t >= a)), "and what it has in all");
    }

    #[test]
    fn the_lock_is_taken_in_turn_and_a_dead_owner_s_lock_is_taken_over() {
        let path = crate::test_dir::fresh_temp_dir("large-case-lock").join("lock");
        let first = LargeCaseLock::take_at(path.clone(), &mut || {}).expect("taken");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), std::process::id().to_string());
        drop(first);
        assert!(!path.exists(), "given back");
        // A lock of a process that no longer exists (pid far above any live one).
        std::fs::write(&path, "4000000000").unwrap();
        let taken = LargeCaseLock::take_at(path.clone(), &mut || {}).expect("taken over");
        drop(taken);
        // A live owner's lock is waited for: here our own parent holds it, then lets go.
        std::fs::write(&path, std::os::unix::process::parent_id().to_string()).unwrap();
        let released = path.clone();
        let helper = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(500));
            std::fs::remove_file(released).unwrap();
        });
        let started = std::time::Instant::now();
        let waited = LargeCaseLock::take_at(path.clone(), &mut || {}).expect("taken after the owner let go");
        assert!(started.elapsed() >= Duration::from_millis(400), "it waited its turn");
        drop(waited);
        helper.join().unwrap();
    }
}
