//! The host's memory, which a case's inputs, model answers and downloaded
//! outputs live in: a case that needs more than is free is not run ("could
//! not run", with both numbers: no fault of the kernel's), and checks that
//! run side by side on one host hold shares of its memory for their large
//! cases ([`HostShare`]), so that large cases run side by side while they
//! fit together and in turn when they do not: two cases that each fit alone
//! are never made at once and killed together.

use std::path::PathBuf;
use std::time::Duration;

/// A case needing at least this much host memory holds a [`HostShare`].
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

/// A large case's share of the host's memory, held from before its inputs
/// are made until its verdict: one file per holder in a host-wide folder,
/// named by the holder's process id and holding the bytes it planned for.
/// A case may take its share while every live holder's shares and its own
/// fit in [`FREE_SHARE`] of the memory available now; else it waits. (The
/// available memory already excludes what the holders have allocated, so a
/// holder is counted twice once it allocates: the rule errs towards
/// waiting, never towards two cases that each fit alone being killed
/// together.) A case with no other holder always takes its share; whether
/// it fits at all is [`refusal`]'s to say. A holder that died with its case
/// is dropped at the next look.
pub struct HostShare {
    path: PathBuf,
}

impl HostShare {
    /// The folder every check on this host keeps its shares in.
    fn folder() -> PathBuf {
        std::env::temp_dir().join("primlab-check-host-shares")
    }

    /// Waits until `needs` bytes fit beside the other holders' shares, then
    /// holds them; calls `waiting` about every 10 s while it waits (the caller
    /// keeps its watchdog informed).
    pub fn take(needs: u64, mut waiting: impl FnMut()) -> std::io::Result<HostShare> {
        Self::take_in(&Self::folder(), needs, &|| available().unwrap_or(0), &mut waiting)
    }

    fn take_in(
        folder: &std::path::Path,
        needs: u64,
        free: &dyn Fn() -> u64,
        waiting: &mut dyn FnMut(),
    ) -> std::io::Result<HostShare> {
        std::fs::create_dir_all(folder)?;
        let mut polls = 0u32;
        loop {
            if let Some(share) = Self::try_take(folder, needs, free)? {
                return Ok(share);
            }
            if polls % 50 == 49 {
                waiting();
            }
            polls += 1;
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// One look, under the folder's mutex: the share when it fits now.
    fn try_take(folder: &std::path::Path, needs: u64, free: &dyn Fn() -> u64) -> std::io::Result<Option<HostShare>> {
        let Some(_mutex) = FolderMutex::try_lock(folder)? else { return Ok(None) };
        let held = live_shares(folder);
        let fits = held == 0 || (held + needs) as f64 <= free() as f64 * FREE_SHARE;
        if !fits {
            return Ok(None);
        }
        let path = folder.join(format!("{}-{}", std::process::id(), unique()));
        std::fs::write(&path, needs.to_string())?;
        Ok(Some(HostShare { path }))
    }
}

impl Drop for HostShare {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A number no other share of this process has (shares of one process are
/// told apart by it).
fn unique() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The bytes the live holders in `folder` hold; a share whose process is
/// gone is removed.
fn live_shares(folder: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(folder) else { return 0 };
    let mut held = 0u64;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some((pid, _)) = name.split_once('-') else { continue };
        if !PathBuf::from("/proc").join(pid).exists() {
            let _ = std::fs::remove_file(entry.path());
            continue;
        }
        held += std::fs::read_to_string(entry.path()).ok().and_then(|t| t.trim().parse().ok()).unwrap_or(0);
    }
    held
}

/// The short-held mutex over a shares folder (a file created exclusively,
/// holding its owner's id; one whose owner is gone is taken over).
struct FolderMutex {
    path: PathBuf,
}

impl FolderMutex {
    fn try_lock(folder: &std::path::Path) -> std::io::Result<Option<FolderMutex>> {
        let path = folder.join("mutex");
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut file) => {
                std::io::Write::write_all(&mut file, std::process::id().to_string().as_bytes())?;
                Ok(Some(FolderMutex { path }))
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let owner = std::fs::read_to_string(&path).unwrap_or_default();
                let owner = owner.trim();
                // Its owner died holding it (an empty file: it had not written its id yet, or died first).
                if owner.is_empty() || !PathBuf::from("/proc").join(owner).exists() {
                    let stale = path
                        .metadata()
                        .and_then(|m| m.modified())
                        .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > Duration::from_secs(2) || !owner.is_empty()));
                    if stale {
                        let _ = std::fs::remove_file(&path);
                    }
                }
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}

impl Drop for FolderMutex {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
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
    fn shares_are_taken_side_by_side_while_they_fit_and_in_turn_when_not() {
        let folder = crate::test_dir::fresh_temp_dir("host-shares");
        let free = || 100u64;
        // 40 + 40 fit in 85 % of 100; a third 40 does not, until one is given back.
        let a = HostShare::take_in(&folder, 40, &free, &mut || {}).expect("taken");
        let b = HostShare::try_take(&folder, 40, &free).expect("looked").expect("fits beside the first");
        assert!(HostShare::try_take(&folder, 40, &free).expect("looked").is_none(), "120 > 85: waits");
        drop(a);
        let c = HostShare::try_take(&folder, 40, &free).expect("looked").expect("fits once one is given back");
        drop((b, c));
        // Alone, a share is taken whatever it needs (whether it fits is refusal's to say).
        let alone = HostShare::try_take(&folder, 1000, &free).expect("looked");
        assert!(alone.is_some(), "no other holder: taken");
        drop(alone);
        assert_eq!(live_shares(&folder), 0, "every share given back");
    }

    #[test]
    fn a_dead_holders_share_and_mutex_are_dropped_and_a_waiter_is_let_in_when_a_share_is_given_back() {
        let folder = crate::test_dir::fresh_temp_dir("host-shares-dead");
        let free = || 100u64;
        // A share and a mutex of a process that no longer exists (pid far above any live one).
        std::fs::write(folder.join("4000000000-0"), "80").unwrap();
        std::fs::write(folder.join("mutex"), "4000000000").unwrap();
        assert!(HostShare::try_take(&folder, 80, &free).expect("looked").is_none(), "the dead mutex costs one look");
        let taken = HostShare::try_take(&folder, 80, &free).expect("looked").expect("the dead share is dropped");
        assert!(!folder.join("4000000000-0").exists());
        // A live holder (our parent) that gives its share back while we wait.
        let theirs = folder.join(format!("{}-9", std::os::unix::process::parent_id()));
        std::fs::write(&theirs, "80").unwrap();
        drop(taken);
        let helper = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(500));
            std::fs::remove_file(theirs).unwrap();
        });
        let started = std::time::Instant::now();
        let waited = HostShare::take_in(&folder, 80, &free, &mut || {}).expect("taken after the holder let go");
        assert!(started.elapsed() >= Duration::from_millis(400), "it waited its turn");
        drop(waited);
        helper.join().unwrap();
    }
}
