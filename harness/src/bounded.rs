//! Bounded reads of files a user or a committer hands us (manifests,
//! receipts, indexes, `.npy` outputs): only regular files are read, and
//! never more than a stated number of bytes, so `/dev/zero`, a FIFO or a
//! huge file is refused with a message instead of hanging or exhausting
//! memory.

use std::io::Read;
use std::path::Path;

/// The most bytes of a manifest (TOML) we read.
pub const MANIFEST_LIMIT: u64 = 1 << 20;
/// The most bytes of a receipt or an export's index (JSON) we read.
pub const JSON_LIMIT: u64 = 256 << 20;

/// The bytes of `path`, refused when it is not a regular file (after
/// following symlinks) or holds more than `limit` bytes. The size is checked
/// on the metadata and again while reading (the file may grow meanwhile).
pub fn read(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!(
            "{} is not a regular file (a folder, device, FIFO or socket is never read)",
            path.display()
        ));
    }
    if meta.len() > limit {
        return Err(format!("{} holds {} bytes, more than the {limit} read at most", path.display(), meta.len()));
    }
    let file = std::fs::File::open(path).map_err(|e| format!("opening {}: {e}", path.display()))?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("reading {}: {e}", path.display()))?;
    if bytes.len() as u64 > limit {
        return Err(format!("{} grew past the {limit} bytes read at most", path.display()));
    }
    Ok(bytes)
}

/// The text of `path` (UTF-8), bounded as [`read`].
pub fn read_text(path: &Path, limit: u64) -> Result<String, String> {
    String::from_utf8(read(path, limit)?).map_err(|_| format!("{} is not UTF-8 text", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_folders_and_large_files_are_refused() {
        let e = read(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
        let dir = crate::test_dir::fresh_temp_dir("bounded");
        assert!(read(&dir, 10).unwrap_err().contains("not a regular file"));
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success());
        if made {
            assert!(read(&fifo, 10).unwrap_err().contains("not a regular file"));
        }
        let big = dir.join("big");
        std::fs::write(&big, vec![b'x'; 11]).unwrap();
        assert!(read(&big, 10).unwrap_err().contains("more than the 10"));
        assert_eq!(read(&big, 11).unwrap().len(), 11);
        assert_eq!(read_text(&big, 11).unwrap(), "x".repeat(11));
    }
}
