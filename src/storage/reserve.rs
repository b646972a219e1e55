//! A reserve of disk space in the data directory, given up so a server can
//! start on a full disk.
//!
//! RocksDB cannot open without writing (an OPTIONS file of ~55 KB, a new
//! MANIFEST and WAL), and a segment log opens a fresh, preallocated segment.
//! On a disk that filled up while the server was down (or that it filled
//! itself before a kill), both fail and the process exits. So the server
//! keeps a file of `bytes` preallocated in its data directory
//! (`NEOKV-RESERVE`) and deletes it when it starts with less than that free:
//! the start then has room, reads are served, and writes go on until RocksDB
//! next fails to flush (then `-MISCONF`, and they resume by themselves once
//! space is back). The reserve is made again once twice its size is free,
//! so making it never fills a disk by itself.
//!
//! The same idea as CockroachDB's emergency ballast file.

use std::path::{Path, PathBuf};

pub const FILE: &str = "NEOKV-RESERVE";

fn path(dir: &Path) -> PathBuf {
    dir.join(FILE)
}

/// Bytes available to an unprivileged writer on `dir`'s filesystem.
pub fn free_bytes(dir: &Path) -> std::io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid NUL-terminated path and `st` a writable statvfs.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}

/// At start, before anything opens: give the reserve up if less than `bytes`
/// is free. Returns the bytes freed.
pub fn release_if_short(dir: &Path, bytes: u64) -> Option<u64> {
    let p = path(dir);
    let held = std::fs::metadata(&p).ok()?.len();
    if bytes == 0 || free_bytes(dir).ok()? >= bytes {
        return None;
    }
    std::fs::remove_file(&p).ok()?;
    eprintln!(
        "neokv: the data directory's filesystem is nearly full: gave up the {} MB reserve ({}) to start; \
         writes are refused once RocksDB cannot flush, until space is freed",
        held >> 20,
        p.display()
    );
    Some(held)
}

/// Make the reserve if it is missing and at least twice its size is free
/// (an old one of another size is replaced). Errors are reported, not
/// returned: the reserve is a courtesy, never a reason to stop.
pub fn keep(dir: &Path, bytes: u64) {
    let p = path(dir);
    let held = std::fs::metadata(&p).map(|m| m.len()).ok();
    if bytes == 0 {
        if held.is_some() {
            let _ = std::fs::remove_file(&p);
        }
        return;
    }
    if held == Some(bytes) || !matches!(free_bytes(dir), Ok(free) if free + held.unwrap_or(0) >= 2 * bytes) {
        return;
    }
    let tmp = p.with_extension("tmp");
    if let Err(e) = allocate(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, &p)) {
        let _ = std::fs::remove_file(&tmp);
        eprintln!("neokv: could not make the disk reserve {}: {e}", p.display());
    }
}

/// A new file at `p` of `bytes` preallocated, synced. On a file system
/// without fallocate (some FUSE and network ones) the space is taken by
/// writing zeros, as a file grows there anyway.
fn allocate(p: &Path, bytes: u64) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    let mut f = std::fs::File::create(p)?;
    // SAFETY: a valid open file descriptor; fallocate only writes metadata.
    if unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, bytes as libc::off_t) } != 0 {
        let e = std::io::Error::last_os_error();
        if !matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS)) {
            return Err(e);
        }
        let zeros = vec![0u8; 1 << 20];
        let mut left = bytes;
        while left > 0 {
            let n = left.min(zeros.len() as u64) as usize;
            f.write_all(&zeros[..n])?;
            left -= n as u64;
        }
    }
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reserve_is_kept_replaced_and_only_given_up_when_short() {
        let d = tempfile::tempdir().unwrap();
        keep(d.path(), 1 << 20);
        assert_eq!(std::fs::metadata(path(d.path())).unwrap().len(), 1 << 20);
        // Plenty free: kept.
        assert_eq!(release_if_short(d.path(), 1 << 20), None);
        assert!(path(d.path()).exists());
        // Another size replaces it; 0 removes it.
        keep(d.path(), 2 << 20);
        assert_eq!(std::fs::metadata(path(d.path())).unwrap().len(), 2 << 20);
        // "Short" is relative to what is free: ask for more than the disk has.
        let free = free_bytes(d.path()).unwrap();
        assert_eq!(release_if_short(d.path(), free + (1 << 30)), Some(2 << 20));
        assert!(!path(d.path()).exists());
        // Not made again while less than twice its size is free.
        keep(d.path(), free);
        assert!(!path(d.path()).exists());
        keep(d.path(), 1 << 20);
        keep(d.path(), 0);
        assert!(!path(d.path()).exists());
    }
}
