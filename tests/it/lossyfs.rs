//! A FUSE file system for power-loss tests: every operation passes through to
//! a backing directory, except that file data is held in memory until the file
//! is fsynced (or fdatasynced). [`LossyFs::lose`] drops every byte not synced
//! yet, as a power cut drops the page cache. Namespace changes (create, mkdir,
//! rename, unlink) reach the backing directory at once, as a journaling file
//! system's metadata would once its directory is synced (a little kinder than
//! a real power cut, which may lose a rename not followed by a directory
//! sync). `fallocate` is not supported, as on some FUSE and network file
//! systems: a program that needs it fails here.
//!
//! Needs `/dev/fuse`, the right to mount, and `fusermount3` (Debian: fuse3).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, UNIX_EPOCH};

use fuser::{
    FileAttr, FileType, Filesystem, MountOption, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow,
};

/// What the file system holds in memory.
struct State {
    backing: PathBuf,
    /// Inode → path under `backing` (the root is "").
    paths: HashMap<u64, PathBuf>,
    inos: HashMap<PathBuf, u64>,
    next: u64,
    /// Files written since their last sync: what was written (and the size)
    /// since, over the backing file's content.
    dirty: HashMap<u64, Dirty>,
}

/// A file's unsynced changes: its size as programs see it, and the writes
/// since its last sync, in order (a later one wins where they overlap).
#[derive(Default)]
struct Dirty {
    size: u64,
    writes: Vec<(u64, Vec<u8>)>,
}

impl Dirty {
    fn bytes(&self) -> usize {
        self.writes.iter().map(|(_, d)| d.len()).sum()
    }

    /// Lay the writes over `buf`, which holds the file from `at` on.
    fn overlay(&self, at: u64, buf: &mut [u8]) {
        let end = at + buf.len() as u64;
        for (off, data) in &self.writes {
            let (lo, hi) = ((*off).max(at), (off + data.len() as u64).min(end));
            if lo < hi {
                buf[(lo - at) as usize..(hi - at) as usize]
                    .copy_from_slice(&data[(lo - off) as usize..(hi - off) as usize]);
            }
        }
    }
}

impl State {
    fn real(&self, ino: u64) -> Option<PathBuf> {
        self.paths.get(&ino).map(|p| self.backing.join(p))
    }

    fn ino_of(&mut self, rel: PathBuf) -> u64 {
        if let Some(&i) = self.inos.get(&rel) {
            return i;
        }
        let i = self.next;
        self.next += 1;
        self.paths.insert(i, rel.clone());
        self.inos.insert(rel, i);
        i
    }

    fn attr(&self, ino: u64) -> Option<FileAttr> {
        let m = std::fs::symlink_metadata(self.real(ino)?).ok()?;
        let size = self.dirty.get(&ino).map_or(m.len(), |d| d.size);
        let t = |s: i64| UNIX_EPOCH + Duration::from_secs(s.max(0) as u64);
        Some(FileAttr {
            ino,
            size,
            blocks: size.div_ceil(512),
            atime: t(m.atime()),
            mtime: t(m.mtime()),
            ctime: t(m.ctime()),
            crtime: t(m.ctime()),
            kind: if m.is_dir() { FileType::Directory } else { FileType::RegularFile },
            perm: (m.permissions().mode() & 0o7777) as u16,
            nlink: m.nlink() as u32,
            uid: m.uid(),
            gid: m.gid(),
            rdev: 0,
            blksize: 4096,
            flags: 0,
        })
    }

    /// The file's unsynced changes, begun at its first unsynced write.
    fn dirty(&mut self, ino: u64) -> &mut Dirty {
        if !self.dirty.contains_key(&ino) {
            let size = self.real(ino).and_then(|p| std::fs::metadata(p).ok()).map_or(0, |m| m.len());
            self.dirty.insert(ino, Dirty { size, writes: Vec::new() });
        }
        self.dirty.get_mut(&ino).expect("inserted")
    }

    fn sync(&mut self, ino: u64) -> std::io::Result<()> {
        if let (Some(d), Some(p)) = (self.dirty.remove(&ino), self.real(ino)) {
            let f = std::fs::OpenOptions::new().write(true).open(p)?;
            f.set_len(d.size)?;
            for (off, data) in &d.writes {
                let end = (off + data.len() as u64).min(d.size);
                if *off < end {
                    std::os::unix::fs::FileExt::write_all_at(&f, &data[..(end - off) as usize], *off)?;
                }
            }
            f.sync_all()?;
        }
        Ok(())
    }

    /// Forget `rel` and everything under it (deleted, or renamed away).
    fn forget_under(&mut self, rel: &Path) -> Vec<(u64, PathBuf)> {
        let gone: Vec<(u64, PathBuf)> =
            self.paths.iter().filter(|(_, p)| p.starts_with(rel)).map(|(i, p)| (*i, p.clone())).collect();
        for (i, p) in &gone {
            self.paths.remove(i);
            self.inos.remove(p);
        }
        gone
    }
}

struct Fs(Arc<Mutex<State>>);

const TTL: Duration = Duration::ZERO;

fn errno(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(libc::EIO)
}

impl Filesystem for Fs {
    fn lookup(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEntry) {
        let mut s = self.0.lock().unwrap();
        let Some(rel) = s.paths.get(&parent).map(|p| p.join(name)) else { return reply.error(libc::ENOENT) };
        if std::fs::symlink_metadata(s.backing.join(&rel)).is_err() {
            return reply.error(libc::ENOENT);
        }
        let ino = s.ino_of(rel);
        match s.attr(ino) {
            Some(a) => reply.entry(&TTL, &a, 0),
            None => reply.error(libc::ENOENT),
        }
    }

    fn getattr(&mut self, _req: &Request<'_>, ino: u64, reply: ReplyAttr) {
        match self.0.lock().unwrap().attr(ino) {
            Some(a) => reply.attr(&TTL, &a),
            None => reply.error(libc::ENOENT),
        }
    }

    fn setattr(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<std::time::SystemTime>,
        _fh: Option<u64>,
        _crtime: Option<std::time::SystemTime>,
        _chgtime: Option<std::time::SystemTime>,
        _bkuptime: Option<std::time::SystemTime>,
        _flags: Option<u32>,
        reply: ReplyAttr,
    ) {
        let mut s = self.0.lock().unwrap();
        if let (Some(m), Some(p)) = (mode, s.real(ino)) {
            let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(m));
        }
        if let Some(size) = size {
            let d = s.dirty(ino);
            // Bytes past a shrink are gone: writes there are cut, and the
            // backing file's tail is hidden by the size until the sync.
            for (off, data) in d.writes.iter_mut() {
                data.truncate(size.saturating_sub(*off) as usize);
            }
            if size > d.size {
                // Growing exposes zeros, not the backing file's old bytes.
                let (at, len) = (d.size, size - d.size);
                d.writes.push((at, vec![0; len as usize]));
            }
            d.size = size;
        }
        match s.attr(ino) {
            Some(a) => reply.attr(&TTL, &a),
            None => reply.error(libc::ENOENT),
        }
    }

    fn open(&mut self, _req: &Request<'_>, _ino: u64, _flags: i32, reply: ReplyOpen) {
        reply.opened(0, 0);
    }

    fn read(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _fh: u64,
        offset: i64,
        size: u32,
        _flags: i32,
        _lock: Option<u64>,
        reply: ReplyData,
    ) {
        let s = self.0.lock().unwrap();
        let at = offset.max(0) as usize;
        let Some(p) = s.real(ino) else { return reply.error(libc::ENOENT) };
        let file_size = s.dirty.get(&ino).map(|d| d.size);
        let len = match file_size {
            Some(fs) => (fs.saturating_sub(at as u64) as usize).min(size as usize),
            None => size as usize,
        };
        let mut buf = vec![0u8; len];
        let r = std::fs::File::open(p).and_then(|mut f| {
            f.seek(SeekFrom::Start(at as u64))?;
            let mut n = 0;
            while n < buf.len() {
                match f.read(&mut buf[n..])? {
                    0 => break,
                    k => n += k,
                }
            }
            Ok(n)
        });
        match (r, s.dirty.get(&ino)) {
            (Ok(_), Some(d)) => {
                d.overlay(at as u64, &mut buf);
                reply.data(&buf)
            }
            (Ok(n), None) => reply.data(&buf[..n]),
            (Err(e), _) => reply.error(errno(&e)),
        }
    }

    fn write(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _fh: u64,
        offset: i64,
        data: &[u8],
        _write_flags: u32,
        _flags: i32,
        _lock: Option<u64>,
        reply: ReplyWrite,
    ) {
        let mut s = self.0.lock().unwrap();
        let d = s.dirty(ino);
        let at = offset.max(0) as u64;
        if at > d.size {
            // A hole reads as zeros.
            let (from, len) = (d.size, at - d.size);
            d.writes.push((from, vec![0; len as usize]));
        }
        d.size = d.size.max(at + data.len() as u64);
        d.writes.push((at, data.to_vec()));
        reply.written(data.len() as u32);
    }

    fn flush(&mut self, _req: &Request<'_>, _ino: u64, _fh: u64, _lock: u64, reply: ReplyEmpty) {
        reply.ok();
    }

    fn fsync(&mut self, _req: &Request<'_>, ino: u64, _fh: u64, _datasync: bool, reply: ReplyEmpty) {
        match self.0.lock().unwrap().sync(ino) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn fsyncdir(&mut self, _req: &Request<'_>, ino: u64, _fh: u64, _datasync: bool, reply: ReplyEmpty) {
        let p = self.0.lock().unwrap().real(ino);
        match p.map(|p| std::fs::File::open(p).and_then(|f| f.sync_all())) {
            Some(Ok(())) => reply.ok(),
            Some(Err(e)) => reply.error(errno(&e)),
            None => reply.error(libc::ENOENT),
        }
    }

    fn create(
        &mut self,
        _req: &Request<'_>,
        parent: u64,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        _flags: i32,
        reply: ReplyCreate,
    ) {
        let mut s = self.0.lock().unwrap();
        let Some(rel) = s.paths.get(&parent).map(|p| p.join(name)) else { return reply.error(libc::ENOENT) };
        let real = s.backing.join(&rel);
        if let Err(e) = std::fs::File::create(&real) {
            return reply.error(errno(&e));
        }
        let _ = std::fs::set_permissions(&real, std::fs::Permissions::from_mode(mode & 0o7777));
        let ino = s.ino_of(rel);
        s.dirty.remove(&ino);
        match s.attr(ino) {
            Some(a) => reply.created(&TTL, &a, 0, 0, 0),
            None => reply.error(libc::EIO),
        }
    }

    fn mkdir(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, _mode: u32, _umask: u32, reply: ReplyEntry) {
        let mut s = self.0.lock().unwrap();
        let Some(rel) = s.paths.get(&parent).map(|p| p.join(name)) else { return reply.error(libc::ENOENT) };
        if let Err(e) = std::fs::create_dir(s.backing.join(&rel)) {
            return reply.error(errno(&e));
        }
        let ino = s.ino_of(rel);
        match s.attr(ino) {
            Some(a) => reply.entry(&TTL, &a, 0),
            None => reply.error(libc::EIO),
        }
    }

    fn unlink(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEmpty) {
        let mut s = self.0.lock().unwrap();
        let Some(rel) = s.paths.get(&parent).map(|p| p.join(name)) else { return reply.error(libc::ENOENT) };
        if let Err(e) = std::fs::remove_file(s.backing.join(&rel)) {
            return reply.error(errno(&e));
        }
        for (i, _) in s.forget_under(&rel) {
            s.dirty.remove(&i);
        }
        reply.ok();
    }

    fn rmdir(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEmpty) {
        let mut s = self.0.lock().unwrap();
        let Some(rel) = s.paths.get(&parent).map(|p| p.join(name)) else { return reply.error(libc::ENOENT) };
        if let Err(e) = std::fs::remove_dir(s.backing.join(&rel)) {
            return reply.error(errno(&e));
        }
        s.forget_under(&rel);
        reply.ok();
    }

    fn rename(
        &mut self,
        _req: &Request<'_>,
        parent: u64,
        name: &OsStr,
        newparent: u64,
        newname: &OsStr,
        _flags: u32,
        reply: ReplyEmpty,
    ) {
        let mut s = self.0.lock().unwrap();
        let (Some(from), Some(to)) =
            (s.paths.get(&parent).map(|p| p.join(name)), s.paths.get(&newparent).map(|p| p.join(newname)))
        else {
            return reply.error(libc::ENOENT);
        };
        if let Err(e) = std::fs::rename(s.backing.join(&from), s.backing.join(&to)) {
            return reply.error(errno(&e));
        }
        // What stood at the target is gone (with its unsynced data); what was
        // under the source keeps its inodes under the new name.
        for (i, _) in s.forget_under(&to) {
            s.dirty.remove(&i);
        }
        for (i, p) in s.forget_under(&from) {
            // (Joining an empty rest would add a trailing slash.)
            let rest = p.strip_prefix(&from).expect("under it");
            let moved = if rest.as_os_str().is_empty() { to.clone() } else { to.join(rest) };
            s.paths.insert(i, moved.clone());
            s.inos.insert(moved, i);
        }
        reply.ok();
    }

    fn readdir(&mut self, _req: &Request<'_>, ino: u64, _fh: u64, offset: i64, mut reply: ReplyDirectory) {
        let mut s = self.0.lock().unwrap();
        let Some(rel) = s.paths.get(&ino).cloned() else { return reply.error(libc::ENOENT) };
        let mut entries = vec![(ino, FileType::Directory, ".".into()), (1, FileType::Directory, "..".into())];
        match std::fs::read_dir(s.backing.join(&rel)) {
            Ok(rd) => {
                for e in rd.flatten() {
                    let kind = if e.file_type().is_ok_and(|t| t.is_dir()) {
                        FileType::Directory
                    } else {
                        FileType::RegularFile
                    };
                    let i = s.ino_of(rel.join(e.file_name()));
                    entries.push((i, kind, e.file_name()));
                }
            }
            Err(e) => return reply.error(errno(&e)),
        }
        for (n, (i, kind, name)) in entries.into_iter().enumerate().skip(offset.max(0) as usize) {
            if reply.add(i, n as i64 + 1, kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn statfs(&mut self, _req: &Request<'_>, _ino: u64, reply: ReplyStatfs) {
        let backing = self.0.lock().unwrap().backing.clone();
        let c = std::ffi::CString::new(backing.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: statvfs fills the zeroed struct from a valid C string path.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
            return reply.error(libc::EIO);
        }
        reply.statfs(
            st.f_blocks,
            st.f_bfree,
            st.f_bavail,
            st.f_files,
            st.f_ffree,
            st.f_bsize as u32,
            255,
            st.f_frsize as u32,
        );
    }

    fn access(&mut self, _req: &Request<'_>, _ino: u64, _mask: i32, reply: ReplyEmpty) {
        reply.ok();
    }

    fn fallocate(
        &mut self,
        _req: &Request<'_>,
        _ino: u64,
        _fh: u64,
        _offset: i64,
        _length: i64,
        _mode: i32,
        reply: ReplyEmpty,
    ) {
        reply.error(libc::EOPNOTSUPP);
    }
}

/// A mounted lossy file system; unmounted when dropped.
pub struct LossyFs {
    pub mnt: PathBuf,
    state: Arc<Mutex<State>>,
    session: Option<fuser::BackgroundSession>,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

impl LossyFs {
    /// Mount a fresh one (backing and mount point in temp dirs). Panics, saying
    /// what is missing, where FUSE cannot be mounted.
    pub fn mount() -> LossyFs {
        let (backing, mnt) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let state = Arc::new(Mutex::new(State {
            backing: backing.path().to_path_buf(),
            paths: HashMap::from([(1, PathBuf::new())]),
            inos: HashMap::from([(PathBuf::new(), 1)]),
            next: 2,
            dirty: HashMap::new(),
        }));
        let opts = [MountOption::FSName("lossyfs".into()), MountOption::RW];
        let session = fuser::spawn_mount2(Fs(state.clone()), mnt.path(), &opts).unwrap_or_else(|e| {
            panic!("cannot mount the lossy FUSE file system ({e}): power-loss tests need /dev/fuse, the right to mount and fusermount3 (Debian: fuse3)")
        });
        LossyFs { mnt: mnt.path().to_path_buf(), state, session: Some(session), _dirs: (backing, mnt) }
    }

    /// A power cut: every byte written and not synced is gone. The bytes lost.
    pub fn lose(&self) -> usize {
        let mut s = self.state.lock().unwrap();
        let lost = s.dirty.values().map(Dirty::bytes).sum();
        s.dirty.clear();
        lost
    }
}

impl Drop for LossyFs {
    fn drop(&mut self) {
        drop(self.session.take());
    }
}

/// The file system itself: synced data and namespace changes survive a
/// power cut, unsynced data does not, fallocate is refused.
#[test]
fn synced_data_survives_a_power_cut_and_the_rest_does_not() {
    let fs = LossyFs::mount();
    let p = |n: &str| fs.mnt.join(n);
    let mut f = std::fs::File::create(p("tmp")).unwrap();
    f.write_all(b"kept").unwrap();
    f.sync_all().unwrap();
    drop(f);
    std::fs::rename(p("tmp"), p("CURRENT")).unwrap();
    assert_eq!(std::fs::read(p("CURRENT")).unwrap(), b"kept");
    let mut f = std::fs::OpenOptions::new().append(true).open(p("CURRENT")).unwrap();
    f.write_all(b" and lost").unwrap();
    assert_eq!(std::fs::read(p("CURRENT")).unwrap(), b"kept and lost");
    std::fs::create_dir(p("d")).unwrap();
    std::fs::write(p("d/new"), b"unsynced").unwrap();
    // SAFETY: a valid descriptor; fallocate only reports.
    let r = unsafe { libc::fallocate(std::os::fd::AsRawFd::as_raw_fd(&f), 0, 0, 4096) };
    assert_eq!((r, std::io::Error::last_os_error().raw_os_error()), (-1, Some(libc::EOPNOTSUPP)));
    drop(f);
    assert!(fs.lose() > 0);
    assert_eq!(std::fs::read(p("CURRENT")).unwrap(), b"kept");
    assert_eq!(std::fs::read(p("d/new")).unwrap(), b"");
}
